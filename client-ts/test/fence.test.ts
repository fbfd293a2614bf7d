/**
 * The fence is the service's own: on adversarial texts (`fixtures/fence.json`, computed by the service's
 * `agent_memory.domain.fence` in `tests/client_ts/vectors.py`), the client's `fence` and `fenceLine` give the same
 * strings as the ones the service puts in `system_prompt`.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { fence, fenceLine } from "../src/index.js";

interface Vector {
  text: string;
  fence: string;
  fence_line: string;
}

const VECTORS = JSON.parse(
  readFileSync(new URL("../../test/fixtures/fence.json", import.meta.url), "utf8"),
) as Vector[];

test("fence and fenceLine give the service's own strings", () => {
  assert.ok(VECTORS.length >= 5);
  for (const vector of VECTORS) {
    assert.equal(fence(vector.text), vector.fence, JSON.stringify(vector.text));
    assert.equal(fenceLine(vector.text), vector.fence_line, JSON.stringify(vector.text));
  }
});

test("a fenced line holds no tag and no line break, whatever the text", () => {
  for (const { text } of VECTORS) {
    const line = fenceLine(text);
    assert.ok(!line.includes("<"));
    assert.equal(line.split(/\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/).length, 1);
  }
});
