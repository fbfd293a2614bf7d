/**
 * SigV4: AWS's own signer (`@smithy/signature-v4`) gives botocore's signatures, byte for byte, on fixed
 * requests (known credentials and time; `fixtures/sigv4.json`, computed by botocore's `SigV4Auth` in
 * `tests/support/client_vectors.py`); and the client signs what it sends, chosen by the endpoint.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mock, test } from "node:test";

import { ManagementClient, MemoryClient, regionOf, signRequest } from "../src/index.js";

interface Vector {
  name: string;
  request: { method: string; url: string; headers: Record<string, string>; body: string };
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  region: string;
  at: string;
  signed: Record<string, string>;
}

const VECTORS = JSON.parse(
  readFileSync(new URL("../../test/fixtures/sigv4.json", import.meta.url), "utf8"),
) as Vector[];
const API = "https://abc123.execute-api.eu-west-1.amazonaws.com";
const KEYS = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };

for (const vector of VECTORS) {
  test(`signed as botocore signs it: ${vector.name}`, async () => {
    const { method, url, headers, body } = vector.request;
    const signed = await signRequest(
      { method, url: new URL(url), headers, body },
      { region: vector.region, credentials: vector.credentials, signingDate: new Date(vector.at) },
    );
    assert.deepEqual(signed, vector.signed);
  });
}

/** A fetch that answers 200 with `body` and keeps each request it was given. */
function capturing(body: unknown) {
  const sent: { url: string; headers: Record<string, string> }[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    sent.push({ url: String(input), headers: init?.headers as Record<string, string> });
    return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
  };
  return { sent, fetch };
}

test("on the wire: the client's request carries the signature of exactly what it sends", async () => {
  const { sent, fetch } = capturing({ notes: [], mode: "keyword" });
  const vector = VECTORS.find((v) => v.name.startsWith("a write"))!;
  mock.timers.enable({ apis: ["Date"], now: new Date(vector.at) });
  try {
    const client = new MemoryClient(API, { credentials: vector.credentials, fetch });
    await client.remember({ user_id: "u-1", thread_id: "t-1" }, "café ☕ 😀", {
      idempotencyKey: vector.request.headers["idempotency-key"]!,
    });
  } finally {
    mock.timers.reset();
  }
  const { "user-agent": userAgent, ...headers } = sent[0]!.headers;
  assert.equal(sent[0]!.url, vector.request.url);
  assert.deepEqual(headers, vector.signed, "the body, headers and signature botocore computed for this request");
  assert.match(userAgent!, /^agent-memory-client-ts\//);
});

test("signing is chosen by the endpoint: SigV4 for execute-api and with signing: sigv4, none locally", async () => {
  const { sent, fetch } = capturing({ tools: [] });
  await new MemoryClient("http://127.0.0.1:3000", { fetch }).listTools();
  await new MemoryClient(API, { credentials: KEYS, fetch }).listTools();
  await new MemoryClient("https://memory.example.com", {
    signing: "sigv4",
    region: "eu-west-2",
    credentials: KEYS,
    fetch,
  }).listTools();
  await new ManagementClient(API, { token: "jwt", fetch }).getDocument();

  const [local, aws, customDomain, dashboard] = sent.map((request) => request.headers["authorization"]);
  assert.equal(local, undefined);
  assert.equal(sent[0]!.headers["x-amz-date"], undefined);
  assert.match(aws!, /\/eu-west-1\/execute-api\/aws4_request/);
  assert.match(customDomain!, /\/eu-west-2\/execute-api\/aws4_request/);
  assert.equal(dashboard, "Bearer jwt");
  assert.equal(regionOf(`${API}/v1/tools`), "eu-west-1");
  assert.equal(regionOf("https://memory.example.com"), undefined);
});

test("without credentials given, the SDK's standard chain signs (here: the environment's)", async () => {
  const saved = { ...process.env };
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: "AKIACHAIN",
    AWS_SECRET_ACCESS_KEY: "chain-secret",
    AWS_SESSION_TOKEN: "chain-token",
  });
  try {
    const { sent, fetch } = capturing({ tools: [] });
    await new MemoryClient(API, { fetch }).listTools();
    assert.match(sent[0]!.headers["authorization"]!, /Credential=AKIACHAIN\//);
    assert.equal(sent[0]!.headers["x-amz-security-token"], "chain-token");
  } finally {
    process.env = saved;
  }
});

test("the flush runs in the API's region and never rejects, even with no region anywhere", async () => {
  const saved = { ...process.env };
  for (const name of ["AWS_REGION", "AWS_DEFAULT_REGION"]) delete process.env[name];
  Object.assign(process.env, { AWS_CONFIG_FILE: "/nonexistent", AWS_SHARED_CREDENTIALS_FILE: "/nonexistent" });
  try {
    const nowhere = new MemoryClient("https://memory.example.com");
    const outcome = await nowhere.flush({ user_id: "u-1", thread_id: "t-1" }, "c-1", [{ role: "user", content: "x" }]);
    assert.equal(outcome.status, "failed");
    assert.equal(outcome.note, null);
  } finally {
    process.env = saved;
  }
});
