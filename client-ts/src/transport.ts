/**
 * One HTTP exchange with the service: signing, a timeout per attempt, bounded retries with jitter, typed errors.
 *
 * Node's own `fetch` carries the requests (a test or a backend may pass another). Requests to AWS
 * (`*.amazonaws.com`) are SigV4-signed for `execute-api`; requests to the local stack are not signed; the
 * management routes carry a bearer JWT instead.
 */

import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";

import { apiError, MemoryTransportError } from "./errors.js";
import {
  type Credentials,
  defaultCredentials,
  defaultRegion,
  isLoopback,
  type OutgoingRequest,
  regionOf,
  signRequest,
} from "./signing.js";

export type Signing = "auto" | "sigv4" | "none";

/**
 * At most `maxAttempts` tries on 429, 503 and lost connections (timeouts included), with full-jitter
 * exponential backoff. A `Retry-After` longer than `maxDelayMs` (a daily quota, until midnight) is not
 * waited for: the error is thrown at once, with `retryAfterS` set.
 */
export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** How to wait (tests record the waits instead of sleeping). */
  sleep: (ms: number) => Promise<unknown>;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 5000, sleep };
const RETRY_STATUSES = new Set([429, 503]);
export const USER_AGENT = "agent-memory-client-ts/0.1.0";

/** Milliseconds to wait before try `attempt + 1`, or null to give up. */
export function retryDelayMs(policy: RetryPolicy, attempt: number, retryAfterMs: number | null): number | null {
  if (attempt >= policy.maxAttempts) return null;
  if (retryAfterMs !== null && retryAfterMs > policy.maxDelayMs) return null;
  const jitter = Math.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.max(retryAfterMs ?? 0, jitter);
}

/** A fresh key (the API's id pattern), the same for every retry of one write. */
export function newIdempotencyKey(): string {
  return randomUUID().replaceAll("-", "");
}

/** `params` (undefined and null left out) percent-encoded as SigV4 wants (RFC 3986 unreserved kept), sorted. */
export function queryString(params: Record<string, string | number | null | undefined>): string {
  return Object.entries(params)
    .filter((entry): entry is [string, string | number] => entry[1] !== undefined && entry[1] !== null)
    .map(([name, value]) => [escape(name), escape(String(value))])
    .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join("&");
}

/** RFC 3986 percent-encoding (encodeURIComponent leaves `!'()*` alone; SigV4 does not). */
function escape(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * One path segment from a caller's value (an id, a version). The URL parser would resolve `.` and `..`
 * (even percent-encoded) into another route, so they are refused here rather than sent somewhere else.
 */
export function segment(value: string | number): string {
  const text = String(value);
  if (/^(\.|%2e){1,2}$/i.test(text)) throw new RangeError(`not an id: ${JSON.stringify(text)}`);
  return escape(text);
}

export interface TransportOptions {
  /** `"auto"` (default): SigV4 for `*.amazonaws.com` hosts, none for anything else (the local stack). */
  signing?: Signing;
  /** The signing region; default: from the `execute-api` host name, else the SDK's chain (`AWS_REGION`, profile). */
  region?: string;
  /** Default: the SDK's standard credential chain. */
  credentials?: Credentials;
  /** Per attempt, the answer's body included. Default 10 s. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  fetch?: typeof fetch;
}

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | null | undefined>;
  bearer?: string;
  idempotencyKey?: string;
}

export class Transport {
  readonly endpoint: string;
  readonly signing: Exclude<Signing, "auto">;
  readonly retry: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;
  private region: string | undefined;
  private credentials: Credentials | undefined;

  constructor(endpoint: string, options: TransportOptions = {}) {
    this.endpoint = endpoint.replace(/\/+$/, "");
    const signing = options.signing ?? "auto";
    const aws = new URL(this.endpoint).hostname.endsWith(".amazonaws.com") && !isLoopback(this.endpoint);
    this.signing = signing === "auto" ? (aws ? "sigv4" : "none") : signing;
    this.region = options.region ?? regionOf(this.endpoint);
    this.credentials = options.credentials;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  private async sign(request: OutgoingRequest): Promise<Record<string, string>> {
    this.region ??= await defaultRegion();
    if (this.region === undefined) throw new TypeError("SigV4 needs a region: pass region or set AWS_REGION");
    this.credentials ??= defaultCredentials();
    return signRequest(request, { region: this.region, credentials: this.credentials });
  }

  /** Send, retrying 429/503 and lost connections; resolve to the JSON body (null for a 204) or throw. */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<unknown> {
    const query = queryString(options.query ?? {});
    const url = new URL(this.endpoint + path + (query ? `?${query}` : ""));
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string> = {};
    if (body !== undefined) headers["content-type"] = "application/json";
    if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey;
    for (let attempt = 1; ; attempt++) {
      let sent = { ...headers };
      if (options.bearer !== undefined) sent["authorization"] = `Bearer ${options.bearer}`;
      else if (this.signing === "sigv4") sent = await this.sign({ method, url, headers: sent, body });
      let status: number;
      let text: string;
      let retryAfter: string | null;
      try {
        const answer = await this.fetch(url, {
          method,
          headers: { ...sent, "user-agent": USER_AGENT },
          body,
          signal: AbortSignal.timeout(this.timeoutMs),
        });
        status = answer.status;
        retryAfter = answer.headers.get("retry-after");
        text = await answer.text();
      } catch (error) {
        const wait = retryDelayMs(this.retry, attempt, null);
        if (wait === null) {
          const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
          throw new MemoryTransportError(`${method} ${path}: ${reason}`, { cause: error });
        }
        await this.retry.sleep(wait);
        continue;
      }
      if (status < 300) return text ? JSON.parse(text) : null;
      const retryAfterS = retryAfter !== null && retryAfter.trim() !== "" ? Number(retryAfter) : NaN;
      const retryAfterMs = Number.isFinite(retryAfterS) ? retryAfterS * 1000 : null;
      if (RETRY_STATUSES.has(status)) {
        const wait = retryDelayMs(this.retry, attempt, retryAfterMs);
        if (wait !== null) {
          await this.retry.sleep(wait);
          continue;
        }
      }
      let payload: unknown = text;
      try {
        payload = JSON.parse(text);
      } catch {
        // not JSON: a gateway's or a proxy's own page; the error keeps the text
      }
      throw apiError(status, payload, retryAfterMs === null ? null : retryAfterMs / 1000);
    }
  }
}
