/**
 * The typed clients: one method per route of the HTTP API, plus the flush over Lambda Invoke.
 *
 * ```ts
 * const memory = new MemoryClient("https://abc123.execute-api.eu-west-1.amazonaws.com", {  // SigV4, standard chain
 *   flushFunction: "agent-memory-FlushFunction-XYZ",
 * });
 * const local = new MemoryClient("http://127.0.0.1:3000", { lambdaEndpoint: "http://127.0.0.1:3001" }); // make run
 * await local.remember({ user_id: "u-1", thread_id: "t-1" }, "Prefers metric units");
 * await local.admin.erase({ user: "u-1" });          // the backend's own data flows: export, erase, usage by id
 *
 * const dashboard = new ManagementClient("http://127.0.0.1:3000", { token: jwt });  // bearer JWT
 * await dashboard.getDocument();                     // the token subject's personal memory
 * await dashboard.getDocument({ workspace: "w-3" }); // a workspace's team memory
 * ```
 */

import type { LambdaClient } from "@aws-sdk/client-lambda";

import { contextJson } from "./context.js";
import { FLUSH_TIMEOUT_MS, flushBeforeCompaction, flushLambdaClient } from "./flush.js";
import { regionOf } from "./signing.js";
import { newIdempotencyKey, type RequestOptions, segment, Transport, type TransportOptions } from "./transport.js";
import {
  type ConversationContext,
  type CurrentDocument,
  type Export,
  type Extracted,
  type Imported,
  type FlushMessage,
  type FlushResult,
  type Health,
  type Injections,
  type MemoryContext,
  type NotesByDay,
  type Provenance,
  type OneVersion,
  type VersionWithEdits,
  type NoteToImport,
  type Receipt,
  type Recalled,
  type Remembered,
  type Runs,
  type RunStarted,
  type SavedDocument,
  TOOL_NAMES,
  type ToolCalls,
  type ToolDefinition,
  type ToolName,
  type Tools,
  type Usage,
  type Versions,
} from "./types.js";

/** A write's own key: the same on each of its retries (default: a fresh one per call). */
export interface WriteOptions {
  idempotencyKey?: string;
}

export interface MemoryClientOptions extends TransportOptions {
  /** The function's name or ARN (the stack's `FlushFunctionName` output); locally, and by default, `FlushFunction`. */
  flushFunction?: string;
  /** The Lambda Invoke API to flush through: `http://127.0.0.1:3001` for `make run`; default AWS's. */
  lambdaEndpoint?: string;
  /** A Lambda client of your own for the flush (default: `flushLambdaClient`, made on the first flush). */
  lambdaClient?: LambdaClient;
}

/** Whose memory a backend operation acts on: exactly one user's personal memory or one workspace's team memory. */
export type PlatformOwner = { user: string; workspace?: never } | { workspace: string; user?: never };

/**
 * The chat backend's own data flows (`memory.admin`), with its IAM identity: export, erase and usage of any
 * user's or workspace's memory, by id. A dashboard token grants nothing on these routes.
 */
export class PlatformOperations {
  constructor(readonly transport: Transport) {}

  private static path(owner: PlatformOwner, operation = ""): string {
    const where = owner.user !== undefined ? `users/${segment(owner.user)}` : `workspaces/${segment(owner.workspace)}`;
    return `/v1/platform/${where}${operation}`;
  }

  /** One page of everything the memory holds, oldest first (`agent-memory-export/1`); follow `next_cursor`. */
  async export(owner: PlatformOwner & { cursor?: string }): Promise<Export> {
    const query = { cursor: owner.cursor };
    return (await this.transport.request("GET", PlatformOperations.path(owner, "/export"), { query })) as Export;
  }

  /** Erase the whole memory (table and index); the receipt. A repeat answers zero counts. */
  async erase(owner: PlatformOwner): Promise<Receipt> {
    return (await this.transport.request("DELETE", PlatformOperations.path(owner))) as Receipt;
  }

  /** Notes written today and characters stored, against the memory's quotas. */
  async usage(owner: PlatformOwner): Promise<Usage> {
    return (await this.transport.request("GET", PlatformOperations.path(owner, "/usage"))) as Usage;
  }

  /**
   * Import up to 500 notes (`notes/1`), each stored at its own `created_at`; the receipt. The same `import_id`
   * again answers the first receipt and writes nothing, so a retry (a 503 `import_unfinished` included)
   * continues the import. A larger import is sent in pages, one id each.
   */
  async importNotes(
    owner: PlatformOwner & { importId: string; notes: NoteToImport[]; document?: string },
  ): Promise<Imported> {
    const body = {
      import_id: owner.importId,
      format: "notes/1",
      notes: owner.notes,
      ...(owner.document !== undefined ? { document: owner.document } : {}),
    };
    return (await this.transport.request("POST", PlatformOperations.path(owner, "/import"), { body })) as Imported;
  }
}

/** The chat backend's client: the tools, the context and the flush (SigV4 in AWS, nothing locally), and in
 * `admin` the backend's own data flows. */
export class MemoryClient {
  readonly transport: Transport;
  readonly admin: PlatformOperations;
  readonly flushFunction: string;
  private readonly lambdaEndpoint: string | undefined;
  private lambdaClient: LambdaClient | undefined;
  private readonly region: string | undefined;

  constructor(endpoint: string, options: MemoryClientOptions = {}) {
    const { flushFunction, lambdaEndpoint, lambdaClient, ...transport } = options;
    this.transport = new Transport(endpoint, transport);
    this.admin = new PlatformOperations(this.transport);
    this.flushFunction = flushFunction ?? "FlushFunction";
    this.lambdaEndpoint = lambdaEndpoint;
    this.lambdaClient = lambdaClient;
    this.region = transport.region ?? regionOf(endpoint); // the flush runs in the API's region
  }

  // --- tools and context ---------------------------------------------------------------------------------

  async health(): Promise<Health> {
    return (await this.transport.request("GET", "/v1/health")) as Health;
  }

  /** `GET /v1/tools`: the three tools with JSON Schemas of their arguments. */
  async listTools(): Promise<ToolDefinition[]> {
    return ((await this.transport.request("GET", "/v1/tools")) as Tools).tools;
  }

  /** `POST /v1/tools/<name>` with the model's arguments as they are (the service checks them strictly). */
  async callTool<N extends ToolName>(
    context: ConversationContext,
    name: N,
    args: Record<string, unknown>,
    options: WriteOptions = {},
  ): Promise<ToolCalls[N]["answer"]> {
    if (!TOOL_NAMES.includes(name)) throw new RangeError(`no such memory tool: ${JSON.stringify(name)}`);
    const request: RequestOptions = { body: { context: contextJson(context), arguments: args } };
    if (name !== "recall") request.idempotencyKey = options.idempotencyKey ?? newIdempotencyKey();
    return (await this.transport.request("POST", `/v1/tools/${name}`, request)) as ToolCalls[N]["answer"];
  }

  remember(context: ConversationContext, text: string, options: WriteOptions = {}): Promise<Remembered> {
    return this.callTool(context, "remember", { text }, options);
  }

  updateMemory(context: ConversationContext, content: string, options: WriteOptions = {}): Promise<SavedDocument> {
    return this.callTool(context, "update_memory", { content }, options);
  }

  recall(context: ConversationContext, query: string, options: { k?: number } = {}): Promise<Recalled> {
    return this.callTool(context, "recall", options.k === undefined ? { query } : { query, k: options.k });
  }

  /** `POST /v1/context`: the memory block to inject before a turn. */
  async getContext(context: ConversationContext): Promise<MemoryContext> {
    const body = { context: contextJson(context) };
    return (await this.transport.request("POST", "/v1/context", { body })) as MemoryContext;
  }

  /**
   * `POST /v1/extract`: at most 10 notes from `messages`, each citing its messages' indexes; once per
   * `(thread_id, extractionId)` (a repeat answers `duplicate`), within 10 seconds.
   */
  async extract(context: ConversationContext, extractionId: string, messages: FlushMessage[]): Promise<Extracted> {
    const body = { context: contextJson(context), extraction_id: extractionId, messages };
    return (await this.transport.request("POST", "/v1/extract", { body })) as Extracted;
  }

  // --- the flush, over Lambda Invoke ---------------------------------------------------------------------

  /** Invoke `FlushFunction` before a summary; never rejects (every problem is `failed`). */
  async flush(
    context: ConversationContext,
    compactionId: string,
    messages: FlushMessage[],
    options: { timeoutMs?: number } = {},
  ): Promise<FlushResult> {
    const timeoutMs = options.timeoutMs ?? FLUSH_TIMEOUT_MS;
    this.lambdaClient ??= flushLambdaClient({
      timeoutMs,
      ...(this.lambdaEndpoint !== undefined && { endpoint: this.lambdaEndpoint }),
      ...(this.region !== undefined && { region: this.region }),
    });
    return flushBeforeCompaction(this.lambdaClient, this.flushFunction, { context, compactionId, messages }, timeoutMs);
  }
}

/** Where a management call acts: the token subject's personal memory (default) or a workspace's team memory. */
export interface ScopeOption {
  workspace?: string;
}

export interface ManagementClientOptions extends Omit<TransportOptions, "signing" | "region" | "credentials"> {
  /** The user's JWT, or a function giving the current one (called before each request, for refreshing). */
  token: string | (() => string | Promise<string>);
}

/** The dashboard's routes with a bearer JWT (never SigV4: in AWS the HTTP API's JWT authorizer checks it). */
export class ManagementClient {
  readonly transport: Transport;
  private readonly token: ManagementClientOptions["token"];

  constructor(endpoint: string, options: ManagementClientOptions) {
    const { token, ...transport } = options;
    this.transport = new Transport(endpoint, { ...transport, signing: "none" });
    this.token = token;
  }

  private async call(method: string, path: string, options: RequestOptions = {}): Promise<unknown> {
    const bearer = typeof this.token === "function" ? await this.token() : this.token;
    return this.transport.request(method, path, { ...options, bearer });
  }

  private static base(scope: ScopeOption): string {
    return scope.workspace === undefined ? "/v1/memory/personal" : `/v1/memory/workspaces/${segment(scope.workspace)}`;
  }

  // --- the document and its history ----------------------------------------------------------------------

  async getDocument(options: ScopeOption = {}): Promise<CurrentDocument> {
    return (await this.call("GET", `${ManagementClient.base(options)}/document`)) as CurrentDocument;
  }

  /** Replace the document (empty content clears it, as a new version); 409 if `expectedVersion` is stale. */
  async putDocument(
    content: string,
    expectedVersion: number,
    options: ScopeOption & WriteOptions = {},
  ): Promise<SavedDocument> {
    return (await this.call("PUT", `${ManagementClient.base(options)}/document`, {
      body: { content, expected_version: expectedVersion },
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
    })) as SavedDocument;
  }

  /** Each line of the current document with the ids of the notes cited for it (empty: written by hand). */
  async getProvenance(options: ScopeOption = {}): Promise<Provenance> {
    return (await this.call("GET", `${ManagementClient.base(options)}/document/provenance`)) as Provenance;
  }

  /** The saved versions, newest first; follow `next_cursor`. */
  async listVersions(options: ScopeOption & { limit?: number; cursor?: string } = {}): Promise<Versions> {
    const query = { limit: options.limit, cursor: options.cursor };
    return (await this.call("GET", `${ManagementClient.base(options)}/document/versions`, { query })) as Versions;
  }

  async getVersion(version: number, options: ScopeOption = {}): Promise<VersionWithEdits> {
    const path = `${ManagementClient.base(options)}/document/versions/${segment(version)}`;
    return (await this.call("GET", path)) as VersionWithEdits;
  }

  /** Save an old version's content as a new version; 409 if `expectedVersion` is stale. */
  async restoreVersion(
    version: number,
    expectedVersion: number,
    options: ScopeOption & WriteOptions = {},
  ): Promise<OneVersion> {
    const path = `${ManagementClient.base(options)}/document/versions/${segment(version)}/restore`;
    return (await this.call("POST", path, {
      body: { expected_version: expectedVersion },
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
    })) as OneVersion;
  }

  // --- notes -----------------------------------------------------------------------------------------------

  /** The `days` most recent days that have notes, strictly before `before` (YYYY-MM-DD); follow `next_before`. */
  async listNotes(options: ScopeOption & { before?: string; days?: number } = {}): Promise<NotesByDay> {
    const query = { before: options.before, days: options.days };
    return (await this.call("GET", `${ManagementClient.base(options)}/notes`, { query })) as NotesByDay;
  }

  async searchNotes(q: string, options: ScopeOption & { k?: number } = {}): Promise<Recalled> {
    const query = { q, k: options.k };
    return (await this.call("GET", `${ManagementClient.base(options)}/notes/search`, { query })) as Recalled;
  }

  async deleteNote(noteId: string, options: ScopeOption = {}): Promise<void> {
    await this.call("DELETE", `${ManagementClient.base(options)}/notes/${segment(noteId)}`);
  }

  // --- people's control: export, erase, what each turn was shown, usage ---------------------------------

  /** One page of everything the scope holds, oldest first (`agent-memory-export/1`); follow `next_cursor`. */
  async export(options: ScopeOption & { cursor?: string } = {}): Promise<Export> {
    const query = { cursor: options.cursor };
    return (await this.call("GET", `${ManagementClient.base(options)}/export`, { query })) as Export;
  }

  /** Erase the whole scope (a workspace: operators only); the receipt. A repeat answers zero counts. */
  async erase(options: ScopeOption = {}): Promise<Receipt> {
    return (await this.call("DELETE", ManagementClient.base(options))) as Receipt;
  }

  /** Erase the notes the token's user wrote in a workspace (`?author=me`); the receipt. */
  async eraseMyNotes(options: Required<ScopeOption>): Promise<Receipt> {
    const query = { author: "me" };
    return (await this.call("DELETE", `${ManagementClient.base(options)}/notes`, { query })) as Receipt;
  }

  /** What `/v1/context` put in front of the model, newest first. */
  async listInjections(
    options: ScopeOption & { threadId?: string; limit?: number; cursor?: string } = {},
  ): Promise<Injections> {
    const query = { thread_id: options.threadId, limit: options.limit, cursor: options.cursor };
    return (await this.call("GET", `${ManagementClient.base(options)}/injections`, { query })) as Injections;
  }

  /** Notes written today and characters stored, against the scope's quotas. */
  async usage(options: ScopeOption = {}): Promise<Usage> {
    return (await this.call("GET", `${ManagementClient.base(options)}/usage`)) as Usage;
  }

  /** What `/v1/context` answers for a turn now (`system_prompt` is the model's text); records no turn. */
  async agentView(options: ScopeOption = {}): Promise<MemoryContext> {
    return (await this.call("GET", `${ManagementClient.base(options)}/context`)) as MemoryContext;
  }

  // --- operators -------------------------------------------------------------------------------------------

  /** Operators only: the consolidation runs, newest first. */
  async listRuns(options: { limit?: number } = {}): Promise<Runs> {
    return (await this.call("GET", "/v1/admin/consolidation/runs", { query: { limit: options.limit } })) as Runs;
  }

  /** Operators only: start a consolidation run now (202). */
  async startRun(): Promise<RunStarted> {
    return (await this.call("POST", "/v1/admin/consolidation/runs")) as RunStarted;
  }
}
