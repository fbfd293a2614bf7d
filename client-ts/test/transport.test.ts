/**
 * The transport against a scripted server: bounded retries with jitter on 429/503 and lost connections,
 * `Retry-After` honoured (and not waited for beyond the bound), a timeout per attempt, an `Idempotency-Key`
 * on every write and the same one on its retries, typed errors for every answer a gateway may give.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";

import {
  BadRequest,
  DEFAULT_RETRY,
  Forbidden,
  InvalidInput,
  ManagementClient,
  MemoryApiError,
  MemoryClient,
  MemoryTransportError,
  RateLimited,
  type RetryPolicy,
  ServiceUnavailable,
} from "../src/index.js";
import { queryString, retryDelayMs, segment } from "../src/transport.js";
import { type ScriptedAnswer, scriptedServer } from "./support/scripted-server.js";

const CONTEXT = { user_id: "u-1", thread_id: "t-1" };
const REMEMBERED = { note: { id: "2026-12-03.1" }, truncated: false, redacted: [] };
const servers: { close: () => Promise<void> }[] = [];
after(() => Promise.all(servers.map((server) => server.close())));

/** A client of a scripted server whose waits are recorded, not slept. */
async function scripted(script: ScriptedAnswer[], retry: Partial<RetryPolicy> = {}, timeoutMs = 2_000) {
  const server = await scriptedServer(script);
  servers.push(server);
  const waits: number[] = [];
  const sleep = async (ms: number) => void waits.push(ms);
  const client = new MemoryClient(server.url, { timeoutMs, retry: { sleep, ...retry } });
  return { server, client, waits };
}

test("a 503 is retried with the same Idempotency-Key, honouring Retry-After", async () => {
  const { server, client, waits } = await scripted([
    {
      status: 503,
      body: { error: { code: "storage_unavailable", message: "try again" } },
      headers: { "retry-after": "1" },
    },
    { status: 201, body: REMEMBERED },
  ]);
  const answer = await client.remember(CONTEXT, "a fact");

  assert.deepEqual(answer, REMEMBERED);
  assert.equal(server.received.length, 2);
  const [first, second] = server.received.map((request) => request.headers["idempotency-key"]);
  assert.match(first as string, /^[A-Za-z0-9._@-]{1,128}$/);
  assert.equal(first, second);
  assert.equal(waits.length, 1);
  assert.ok(waits[0]! >= 1000, `waited ${waits[0]} ms for Retry-After: 1`);
});

test("retries are bounded, with full-jitter exponential backoff, then the typed error", async () => {
  const { server, client, waits } = await scripted([
    { status: 503, body: { error: { code: "storage_unavailable", message: "down" } }, headers: { "retry-after": "0" } },
  ]);
  await assert.rejects(client.listTools(), (error: unknown) => {
    assert.ok(error instanceof ServiceUnavailable);
    assert.deepEqual([error.status, error.code, error.retryAfterS], [503, "storage_unavailable", 0]);
    return true;
  });
  assert.equal(server.received.length, DEFAULT_RETRY.maxAttempts);
  assert.equal(waits.length, DEFAULT_RETRY.maxAttempts - 1);
  waits.forEach((wait, i) => assert.ok(wait >= 0 && wait <= DEFAULT_RETRY.baseDelayMs * 2 ** i));

  const policy = { ...DEFAULT_RETRY, maxAttempts: 5 };
  assert.equal(retryDelayMs(policy, 5, null), null);
  for (let attempt = 1; attempt < 5; attempt++) {
    const delay = retryDelayMs(policy, attempt, null)!;
    assert.ok(delay >= 0 && delay <= Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1)));
  }
});

test("a 429 whose Retry-After is past the bound (a daily quota) is thrown at once", async () => {
  const { server, client, waits } = await scripted([
    {
      status: 429,
      body: { error: { code: "quota_exceeded", message: "500 notes today" } },
      headers: { "retry-after": "3600" },
    },
  ]);
  await assert.rejects(client.remember(CONTEXT, "a fact"), (error: unknown) => {
    assert.ok(error instanceof RateLimited);
    assert.deepEqual([error.code, error.retryAfterS], ["quota_exceeded", 3600]);
    return true;
  });
  assert.equal(server.received.length, 1);
  assert.deepEqual(waits, []);
});

test("a short 429 is retried", async () => {
  const { server, client } = await scripted([
    { status: 429, body: { error: { code: "throttled", message: "slow down" } }, headers: { "retry-after": "0" } },
    { status: 200, body: { tools: [] } },
  ]);
  assert.deepEqual(await client.listTools(), []);
  assert.equal(server.received.length, 2);
});

test("no answer within the timeout is retried, then a MemoryTransportError", async () => {
  const { server, client, waits } = await scripted([{ status: 200, body: { tools: [] }, delayMs: 1_000 }], {}, 100);
  const started = performance.now();
  await assert.rejects(client.listTools(), (error: unknown) => {
    assert.ok(error instanceof MemoryTransportError);
    assert.match(error.message, /GET \/v1\/tools: TimeoutError/);
    return true;
  });
  assert.equal(server.received.length, 3);
  assert.equal(waits.length, 2);
  assert.ok(performance.now() - started < 900, "each attempt is cut at its timeout");
});

test("a refused connection is a MemoryTransportError after the retries", async () => {
  const server = await scriptedServer([{ status: 200 }]);
  await server.close(); // nothing listens on its port any more
  const waits: number[] = [];
  const client = new MemoryClient(server.url, { retry: { sleep: async (ms) => void waits.push(ms) } });
  await assert.rejects(client.health(), MemoryTransportError);
  assert.equal(waits.length, DEFAULT_RETRY.maxAttempts - 1);
});

test("every answer a gateway may give is a typed error with a code", async () => {
  const cases: [ScriptedAnswer, typeof MemoryApiError, string][] = [
    [
      { status: 400, body: { error: { code: "malformed_request", message: "not JSON" } } },
      BadRequest,
      "malformed_request",
    ],
    [
      { status: 415, body: { error: { code: "unsupported_media_type", message: "JSON only" } } },
      BadRequest,
      "unsupported_media_type",
    ],
    [{ status: 403, body: { message: "Forbidden" } }, Forbidden, "http_error"], // API Gateway's own, on a bad signature
    [{ status: 502, body: "<html>Bad Gateway</html>" }, ServiceUnavailable, "http_error"],
    [
      { status: 500, body: { error: { code: "internal_error", message: "oops" } } },
      ServiceUnavailable,
      "internal_error",
    ],
    [{ status: 418, body: {} }, MemoryApiError, "http_error"],
  ];
  for (const [answer, cls, code] of cases) {
    const { client } = await scripted([answer]);
    await assert.rejects(client.health(), (error: unknown) => {
      assert.ok(error instanceof cls && error.constructor === cls, `${answer.status}: ${String(error)}`);
      assert.equal(error.status, answer.status);
      assert.equal(error.code, code);
      return true;
    });
  }
  const details = [{ loc: ["arguments", "user_id"], msg: "Extra inputs are not permitted", type: "extra_forbidden" }];
  const { client } = await scripted([
    { status: 422, body: { error: { code: "invalid_input", message: "bad arguments" }, details } },
  ]);
  await assert.rejects(client.recall(CONTEXT, "x"), (error: unknown) => {
    assert.ok(error instanceof InvalidInput);
    assert.deepEqual(error.details, details);
    assert.equal(error.serviceMessage, "bad arguments");
    assert.equal(error.message, "422 invalid_input: bad arguments");
    return true;
  });
});

test("every write carries an Idempotency-Key of its own; reads carry none; a caller's key is kept", async () => {
  const document = { document: { content: "", version: 1, chars: 0, updated_at: null } };
  const { server, client } = await scripted([{ status: 200, body: { ...document, compressed: false, warnings: [] } }]);
  await client.remember(CONTEXT, "a");
  await client.remember(CONTEXT, "b");
  await client.updateMemory(CONTEXT, "# doc");
  await client.updateMemory(CONTEXT, "# doc", { idempotencyKey: "chosen-key.1" });
  await client.recall(CONTEXT, "a");
  await client.getContext(CONTEXT);
  const dashboard = new ManagementClient(server.url, { token: async () => "jwt" });
  await dashboard.putDocument("# doc", 0, { workspace: "w-1" });
  await dashboard.restoreVersion(1, 1);
  await dashboard.getDocument();

  const keys = server.received.map((request) => request.headers["idempotency-key"]);
  const [a, b, update, chosen, recall, context, put, restore, read] = keys;
  assert.equal(new Set([a, b, update, put, restore]).size, 5);
  assert.ok([a, b, update, put, restore].every((key) => typeof key === "string" && /^[a-f0-9]{32}$/.test(key)));
  assert.equal(chosen, "chosen-key.1");
  assert.deepEqual([recall, context, read], [undefined, undefined, undefined]);
  assert.equal(server.received.at(-1)?.headers.authorization, "Bearer jwt");
  assert.equal(server.received[0]?.headers.authorization, undefined, "the local stack is never signed");
});

test("query strings and path segments are encoded as SigV4 wants, and a dot segment is refused", async () => {
  assert.equal(
    queryString({ q: "a b+c/d*!'()~", k: 5, cursor: undefined, before: null }),
    "k=5&q=a%20b%2Bc%2Fd%2A%21%27%28%29~",
  );
  assert.equal(segment("team@corp.example"), "team%40corp.example");
  assert.throws(() => segment(".."), RangeError);
  assert.throws(() => segment("%2e"), RangeError);
  const { server } = await scripted([{ status: 200, body: { days: [], next_before: null } }]);
  const dashboard = new ManagementClient(server.url, { token: "jwt" });
  await dashboard.listNotes({ workspace: "a b", days: 3 });
  assert.equal(server.received[0]?.url, "/v1/memory/workspaces/a%20b/notes?days=3");
  await assert.rejects(dashboard.getDocument({ workspace: ".." }), RangeError);
  assert.equal(server.received.length, 1, "nothing sent for a dot segment");
});
