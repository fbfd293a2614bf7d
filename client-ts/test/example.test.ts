/**
 * The example (examples/chat.ts) against the local stack, with its scripted model: the OpenAI SDK's loop
 * remembers, saves a profile, recalls, flushes before the compaction, and the next turn's memory block holds
 * the fact of the first turn and the flush's note.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import { runExample } from "../examples/chat.js";
import { api, FLUSH_NOTE, lambda, needsStack, unique } from "./support/stack.js";

test("the example's conversation runs offline against the local stack", needsStack, async () => {
  const lines: string[] = [];
  await runExample({ apiUrl: api(), lambdaUrl: lambda(), user: unique("ana"), out: (line) => lines.push(line) });
  const transcript = lines.join("\n");

  assert.match(transcript, /model → remember \{"text":"Ana lives in Lisbon and wants metric units"\}/);
  assert.match(transcript, /assistant> Nice to meet you, Ana\. Noted \(note \d{4}-\d\d-\d\d\.1\)\./);
  assert.match(transcript, /assistant> Profile saved \(document version 1\)\./);
  assert.match(transcript, /assistant> From my notes: Ana lives in Lisbon and wants metric units\./);
  assert.match(transcript, /summary: Summary so far:/);
  const last = lines.findLast((line) => line.startsWith("assistant> Going by memory:")) ?? "";
  assert.match(last, /metric units/);
  if (FLUSH_NOTE) {
    assert.match(
      transcript,
      new RegExp(`flush: written — note \\S+: ${FLUSH_NOTE.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`),
    );
    assert.match(last, /billing migration/);
  } else {
    assert.match(transcript, /flush: (written|failed)/);
  }
});
