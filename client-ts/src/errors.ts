/**
 * Typed errors: one class per refusal class of the API, each carrying the answer's `error.code`.
 *
 * Every answer that is not 2xx rejects with a subclass of {@link MemoryApiError}: the status picks the
 * class, `code` and `message` come from the body's `{"error": {"code", "message"}}`, `details` from a 422.
 * A request that never got an answer (a timeout, a refused connection) rejects with
 * {@link MemoryTransportError}. The classes and their statuses are those of the Python client.
 */

import type { components } from "./generated/openapi.js";

/** What did not validate, on a 422: `loc` says where in the request. */
export type ValidationDetail = components["schemas"]["ValidationDetail"];

/**
 * The codes the service documents; any other string may come from a gateway or a newer service.
 * `http_error` is the client's own: an answer without the service's error object (API Gateway's
 * `{"message": "Forbidden"}` on a bad signature, a proxy's HTML page).
 */
export type ErrorCode =
  | "malformed_request"
  | "unsupported_media_type"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "version_conflict"
  | "invalid_input"
  | "validation_error"
  | "document_too_large"
  | "quota_exceeded"
  | "storage_unavailable"
  | "model_unavailable"
  | "embedding_unavailable"
  | "internal_error"
  | "http_error"
  | (string & {});

/** Base of every error this package throws; `name` is the class's own. */
export class MemoryClientError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** No answer: the connection failed or timed out (after the retries). For a write, the outcome is unknown. */
export class MemoryTransportError extends MemoryClientError {}

/** The service answered with an error: `status`, the API's `code`, its message, and `details` on a 422. */
export class MemoryApiError extends MemoryClientError {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    /** The service's own `error.message` (the error's `message` adds the status and the code). */
    readonly serviceMessage: string,
    readonly details: ValidationDetail[] | null = null,
    /** Seconds, from `Retry-After` (429 and 503). */
    readonly retryAfterS: number | null = null,
  ) {
    super(`${status} ${code}: ${serviceMessage}`);
  }
}

/** 400 or 415: the request is not JSON the service can read. */
export class BadRequest extends MemoryApiError {}
/** 401: no token, or one that does not verify (management routes). */
export class Unauthorized extends MemoryApiError {}
/** 403: the context names another user's thread, or the caller is not a member or an operator. */
export class Forbidden extends MemoryApiError {}
/** 404 (and 405): no such route, version or note in this scope. */
export class NotFound extends MemoryApiError {}
/** 409 `version_conflict`: the document changed since the version the write was based on. */
export class VersionConflict extends MemoryApiError {}
/** 422: `invalid_input`, `validation_error` (a recall query too long), `document_too_large`, `quota_exceeded` (characters)...; see `code`. */
export class InvalidInput extends MemoryApiError {}
/** 429, e.g. `quota_exceeded` (notes per day): `retryAfterS` says when to try again. */
export class RateLimited extends MemoryApiError {}
/** 503 and every other 5xx (`storage_unavailable`, `model_unavailable`...): for a write, the outcome is unknown. */
export class ServiceUnavailable extends MemoryApiError {}

const BY_STATUS = new Map<number, typeof MemoryApiError>([
  [400, BadRequest],
  [401, Unauthorized],
  [403, Forbidden],
  [404, NotFound],
  [405, NotFound],
  [409, VersionConflict],
  [415, BadRequest],
  [422, InvalidInput],
  [429, RateLimited],
  [503, ServiceUnavailable],
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The typed error for an answer's status and body (any body: a gateway may answer plain text). */
export function apiError(status: number, body: unknown, retryAfterS: number | null = null): MemoryApiError {
  const error = isObject(body) ? body["error"] : undefined;
  let code: string;
  let message: string;
  let details: unknown = null;
  if (isObject(error)) {
    code = String(error["code"] ?? "unknown");
    message = String(error["message"] ?? "");
    details = error["details"] ?? (isObject(body) ? body["details"] : null);
  } else {
    code = "http_error";
    message = isObject(body) ? String(body["message"] ?? JSON.stringify(body)) : String(body ?? "");
  }
  const cls = BY_STATUS.get(status) ?? (status >= 500 ? ServiceUnavailable : MemoryApiError);
  return new cls(status, code, message, Array.isArray(details) ? (details as ValidationDetail[]) : null, retryAfterS);
}
