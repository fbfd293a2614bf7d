/**
 * A TypeScript client for the agent memory service (docs/client.md, "TypeScript").
 *
 * - `MemoryClient`: the chat backend's tools, context and flush (SigV4 in AWS, unsigned locally), and in
 *   `admin` (`PlatformOperations`) its own export, erase and usage of a user's or workspace's memory by id;
 * - `ManagementClient`: the dashboard's routes, with a bearer JWT;
 * - `Conversation`: the one object a backend holds per conversation (prompt, tools, tool calls, flush).
 */

export {
  ManagementClient,
  type ManagementClientOptions,
  MemoryClient,
  type MemoryClientOptions,
  PlatformOperations,
} from "./client.js";
export type { PlatformOwner, ScopeOption, WriteOptions } from "./client.js";
export {
  Conversation,
  type ConversationOptions,
  MAX_EXTRACT_MESSAGES,
  type ToolRefusal,
  type ToolResult,
} from "./conversation.js";
export * from "./errors.js";
export { fence, fencedAnswer, fenceLine } from "./fence.js";
export { FLUSH_TIMEOUT_MS, flushBeforeCompaction, flushLambdaClient } from "./flush.js";
export * from "./formats.js";
export { type Credentials, isLoopback, regionOf, signRequest } from "./signing.js";
export {
  DEFAULT_RETRY,
  newIdempotencyKey,
  type RetryPolicy,
  type Signing,
  type TransportOptions,
} from "./transport.js";
export * from "./types.js";
