/**
 * What the tests against the local stack share: where it is, fresh ids, dashboard tokens, and a fetch that
 * records every exchange (so that a test can check which routes were answered how).
 *
 * The stack is given by the environment (`tests/client_ts/test_node_client.py` starts one and sets them):
 * - `MEMORY_API_URL`, `MEMORY_LAMBDA_URL`: the HTTP API and the Lambda Invoke API (`make run`: :3000, :3001);
 * - `MEMORY_TEST_FLUSH_NOTE`: the note the stack's chat model writes for any flush, when it has one;
 * - `MEMORY_TEST_NOTES_QUOTA`: the stack's `MEMORY_QUOTA_NOTES_PER_DAY`, when it is set low enough to reach.
 * Without `MEMORY_API_URL` the tests that need the stack are skipped, and say so.
 */

import { createHmac, randomBytes } from "node:crypto";

export const API_URL = process.env["MEMORY_API_URL"];
export const LAMBDA_URL = process.env["MEMORY_LAMBDA_URL"];
export const FLUSH_NOTE = process.env["MEMORY_TEST_FLUSH_NOTE"];
export const NOTES_QUOTA = process.env["MEMORY_TEST_NOTES_QUOTA"];

/** `test(name, needsStack, fn)`: skipped, with the reason, when no stack is given. */
export const needsStack = API_URL ? {} : { skip: "MEMORY_API_URL is not set (start `make run`, or run `make test`)" };

export function api(): string {
  if (API_URL === undefined) throw new Error("MEMORY_API_URL is not set");
  return API_URL;
}

export function lambda(): string {
  if (LAMBDA_URL === undefined) throw new Error("MEMORY_LAMBDA_URL is not set");
  return LAMBDA_URL;
}

// One run's ids never meet another's, even against a `make run` stack that keeps its data.
const RUN = randomBytes(3).toString("hex");

/** A fresh id (user, workspace, thread) for this run. */
export function unique(name: string): string {
  return `${name}-${RUN}`;
}

function base64url(value: string | Buffer): string {
  return Buffer.from(value).toString("base64url");
}

/**
 * A dashboard token as the local stack verifies them: HS256 with `MEMORY_LOCAL_JWT_SECRET` (default
 * `local-dev-secret`), issuer `memory-local`, audience `memory-dashboard` (what `make token` mints).
 */
export function token(
  sub: string,
  workspaces: string[] = [],
  options: { admin?: boolean; secret?: string; ttlS?: number } = {},
): string {
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: "memory-local",
    aud: "memory-dashboard",
    sub,
    iat: now,
    exp: now + (options.ttlS ?? 3600),
    workspaces,
    ...(options.admin ? { memory_admin: true } : {}),
  };
  const signed = `${base64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))}.${base64url(JSON.stringify(claims))}`;
  const secret = options.secret ?? process.env["MEMORY_LOCAL_JWT_SECRET"] ?? "local-dev-secret";
  return `${signed}.${createHmac("sha256", secret).update(signed).digest("base64url")}`;
}

export interface Exchange {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  body: string | undefined;
}

/** A fetch that records each exchange (method, path, status, request headers and body) before answering. */
export function recordingFetch(exchanges: Exchange[]): typeof fetch {
  return async (input, init) => {
    const answer = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : input);
    exchanges.push({
      method: init?.method ?? "GET",
      path: url.pathname,
      status: answer.status,
      headers: { ...(init?.headers as Record<string, string>) },
      body: init?.body as string | undefined,
    });
    return answer;
  };
}
