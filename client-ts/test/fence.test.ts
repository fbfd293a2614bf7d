/**
 * The fence is the service's own, and every path of the client that hands stored text to a model goes through
 * it. On adversarial texts (`fixtures/fence.json`, computed by the service's
 * `agent_memory.domain.fence` in `tests/support/client_vectors.py`), the client's `fence` and `fenceLine` give the same
 * strings as the ones the service puts in `system_prompt`.
 */

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

import {
  Conversation,
  fence,
  fenceLine,
  FORMATS,
  MemoryClient,
  type Note,
  TOOL_NAMES,
  type ToolDefinition,
  type VercelAITool,
} from "../src/index.js";

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

/**
 * Every path of the client that hands a tool's answer to a model, shown a hostile note and document
 * (`fixtures/tool-answers.json`: the service's catalog and its answers, written by `tests/support/client_vectors.py`):
 * `Conversation.handle` for each tool, and the formats whose tools run a call themselves (`vercel-ai`'s
 * `execute`). The modules of `src/` are enumerated: a new one is either such a path or declared to hand nothing
 * to a model, so a new path cannot skip the fence unnoticed. Offline: a fetch answers as the service would.
 */

interface ToolAnswers {
  tools: ToolDefinition[];
  answers: Record<string, unknown>;
  shown: { note_text: string; document_content: string };
}

const HOSTILE = JSON.parse(
  readFileSync(new URL("../../test/fixtures/tool-answers.json", import.meta.url), "utf8"),
) as ToolAnswers;

// The modules whose answers go to the backend, not to a model (requests, auth, shapes, the fence itself).
const NOT_TO_A_MODEL = [
  "client",
  "context",
  "errors",
  "fence",
  "flush",
  "formats",
  "generated",
  "index",
  "signing",
  "transport",
  "types",
];
const TO_A_MODEL = ["conversation"];

function hostileService(): typeof fetch {
  return async (input) => {
    const path = new URL(input instanceof Request ? input.url : input).pathname;
    const body = path === "/v1/tools" ? { tools: HOSTILE.tools } : HOSTILE.answers[path.replace("/v1/tools/", "")];
    if (body === undefined) return new Response(JSON.stringify({ error: { code: "not_found" } }), { status: 404 });
    return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
  };
}

function conversation(): Conversation {
  const client = new MemoryClient("http://memory.invalid", { fetch: hostileService() });
  return new Conversation(client, { user_id: "u-1", thread_id: "t-1", visibility: "shared", workspace_id: "w-1" });
}

function assertFenced(tool: string, shown: unknown): void {
  assert.ok(!JSON.stringify(shown).includes("<"), `${tool}: ${JSON.stringify(shown)}`);
  const answer = shown as { note?: Note; notes?: Note[]; document?: { content: string } };
  for (const note of [...(answer.notes ?? []), ...(answer.note ? [answer.note] : [])]) {
    assert.equal(note.text, HOSTILE.shown.note_text, tool);
  }
  if (answer.document) assert.equal(answer.document.content, HOSTILE.shown.document_content, tool);
  assert.deepEqual(Object.keys(answer).sort(), Object.keys(HOSTILE.answers[tool] as object).sort(), tool);
}

test("every module of the client is a fenced path or hands nothing to a model", () => {
  const modules = readdirSync(new URL("../../src/", import.meta.url)).map((name) => name.replace(/\.ts$/, ""));
  assert.deepEqual(modules.sort(), [...TO_A_MODEL, ...NOT_TO_A_MODEL].sort());
});

test("the catalog's tools are the client's, each with a hostile answer", () => {
  const names = HOSTILE.tools.map((tool) => tool.name).sort();
  assert.deepEqual(names, [...TOOL_NAMES].sort());
  assert.deepEqual(Object.keys(HOSTILE.answers).sort(), names);
});

test("every tool's answer through the conversation helper is fenced", async () => {
  for (const tool of TOOL_NAMES) {
    assertFenced(tool, await conversation().handle(tool, {}));
  }
});

test("every format whose tools run a call gives the model the fenced answer", async () => {
  let ran = 0;
  for (const format of FORMATS) {
    const shapes = Object.entries((await conversation().tools({ format })) as object) as [string, unknown][];
    for (const [key, shape] of shapes) {
      const execute = (shape as Partial<VercelAITool<unknown>>).execute;
      if (typeof execute !== "function") continue;
      assertFenced(key, await execute({}));
      ran += 1;
    }
  }
  assert.equal(ran, TOOL_NAMES.length, "the vercel-ai tools, one per tool");
});
