/**
 * The one object a chat backend holds per conversation.
 *
 * ```ts
 * const conversation = new Conversation(memory, { user_id: "u-1", thread_id: "t-9" });
 * const system = await conversation.systemPrompt();                  // before each turn: the memory block
 * const tools = await conversation.tools({ format: "openai-chat" }); // or another of FORMATS
 * // ... the model answers with a tool call
 * const result = await conversation.handle(name, args);             // run it with this conversation's context
 * await conversation.flush(compactionId, messages);                 // before summarizing the conversation
 * await conversation.observe(messages, { end: true });              // facts from what was said (every N turns, or at the end)
 * ```
 *
 * The model only ever supplies a tool's arguments; the user, the thread and the workspace come from the
 * context given here. An argument the tool does not declare (a `user_id`, a `workspace_id`, a `scope`...)
 * is refused before anything is sent.
 */

import { createHash } from "node:crypto";

import type { MemoryClient } from "./client.js";
import { MemoryApiError, type ValidationDetail } from "./errors.js";
import { fencedAnswer } from "./fence.js";
import { convert, type ToolFormat, type ToolShapes } from "./formats.js";
import type {
  ConversationContext,
  Extracted,
  FlushMessage,
  FlushResult,
  MemoryContext,
  Recalled,
  Remembered,
  SavedDocument,
  ToolDefinition,
  ToolName,
} from "./types.js";

/** A refusal, given back to the model as the tool result so that it can correct itself. */
export interface ToolRefusal {
  error: { code: string; message: string; details?: ValidationDetail[] };
}

/** What `handle` resolves to: the service's answer (stored text fenced), or a refusal. */
export type ToolResult = Remembered | SavedDocument | Recalled | ToolRefusal;

function refusal(code: string, message: string, details?: ValidationDetail[] | null): ToolRefusal {
  return { error: { code, message, ...(details ? { details } : {}) } };
}

/** The most messages one extraction takes (docs/api.md §3 `extract`): a longer stretch sends its newest. */
export const MAX_EXTRACT_MESSAGES = 2000;

/**
 * The hex sha256 of messages' roles and contents (the Python client's digest): what `observe` follows and names
 * stretches by, since a framework that compacts its list (a summary in place of older messages) moves them.
 */
function digest(messages: FlushMessage[]): string {
  const shape = messages.map((message) => [message.role, message.content]);
  return createHash("sha256").update(JSON.stringify(shape), "utf8").digest("hex");
}

export interface ConversationOptions {
  /** `observe` extracts each time this many user turns have come since its last extraction; unset: at the end only. */
  extractEvery?: number;
}

export class Conversation {
  /** The context of every call; `document_version` follows the document this conversation last saw. */
  context: ConversationContext;
  /** The last `POST /v1/context` answer (`systemPrompt()`), for a backend that wants more than the prompt. */
  lastContext: MemoryContext | null = null;
  /** `observe`'s choice: extract every this many user turns, or (undefined) at the session's end only. */
  readonly extractEvery: number | undefined;
  private definitions: Promise<ToolDefinition[]> | null = null;
  private readonly sent = new Set<string>(); // the digests of the messages already extracted
  private last: { count: number; digest: string } | null = null; // the list at the last extraction

  constructor(
    readonly client: MemoryClient,
    context: ConversationContext,
    options: ConversationOptions = {},
  ) {
    if (options.extractEvery !== undefined && !(Number.isInteger(options.extractEvery) && options.extractEvery >= 1)) {
      throw new RangeError("extractEvery is a number of user turns, at least 1 (or unset: at the end only)");
    }
    this.context = { ...context };
    this.extractEvery = options.extractEvery;
  }

  /**
   * `POST /v1/context`'s `system_prompt`, to inject before this turn. The document's version shown is
   * remembered, so that an `update_memory` of this turn is refused (409) if someone changed it since.
   */
  async systemPrompt(): Promise<string> {
    this.lastContext = await this.client.getContext(this.context);
    this.context = { ...this.context, document_version: this.lastContext.document.version };
    return this.lastContext.system_prompt;
  }

  /** `GET /v1/tools`, read once per conversation object (again after a failed read). */
  toolDefinitions(): Promise<ToolDefinition[]> {
    this.definitions ??= this.client.listTools().catch((error: unknown) => {
      this.definitions = null;
      throw error;
    });
    return this.definitions;
  }

  async toolNames(): Promise<Set<string>> {
    return new Set((await this.toolDefinitions()).map((tool) => tool.name));
  }

  /** The memory tools in a provider's request shape (see `formats.ts`); default `openai-chat`. */
  async tools<F extends ToolFormat = "openai-chat">(options: { format?: F } = {}): Promise<ToolShapes<ToolResult>[F]> {
    const format = (options.format ?? "openai-chat") as F;
    return convert(await this.toolDefinitions(), format, (name, input) => this.handle(name, input));
  }

  /**
   * Run a model's tool call with this conversation's context and resolve to what to give back to the
   * model: the service's answer (stored text fenced), or `{error: {code, message}}` when the call is
   * refused (bad or undeclared arguments, a stale document version, a quota) so that the model can correct
   * itself. `args` may be the JSON text OpenAI returns. A tool that is not a memory tool is a RangeError:
   * ask `toolNames()` first when the model has other tools too. No answer at all (the service down)
   * rejects with a `MemoryTransportError`.
   */
  async handle(name: string, args: unknown): Promise<ToolResult> {
    const definition = (await this.toolDefinitions()).find((tool) => tool.name === name);
    if (definition === undefined) throw new RangeError(`not a memory tool: ${JSON.stringify(name)}`);
    let parsed: unknown = args ?? {};
    if (typeof args === "string") {
      try {
        parsed = args.trim() ? JSON.parse(args) : {};
      } catch {
        return refusal("invalid_input", "the tool arguments are not valid JSON");
      }
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      return refusal("invalid_input", "the tool arguments must be a JSON object");
    }
    const declared = Object.keys((definition.parameters["properties"] ?? {}) as object);
    const undeclared = Object.keys(parsed).filter((key) => !declared.includes(key));
    if (undeclared.length > 0) {
      return refusal(
        "invalid_input",
        "these arguments are not the tool's; whose memory it is comes from the conversation, never from a " +
          `tool argument: ${undeclared.sort().join(", ")}`,
      );
    }
    const tool = name as ToolName;
    const context = tool === "update_memory" ? this.context : { ...this.context, document_version: null };
    let answer;
    try {
      answer = await this.client.callTool(context, tool, parsed as Record<string, unknown>);
    } catch (error) {
      if (error instanceof MemoryApiError) return refusal(error.code, error.serviceMessage, error.details);
      throw error;
    }
    if (tool === "update_memory") {
      // The model's own write is the version it now knows.
      this.context = { ...this.context, document_version: (answer as SavedDocument).document.version };
    }
    return fencedAnswer(answer); // stored text reaches the model as in system_prompt (fence.ts)
  }

  /**
   * Hand memory the conversation so far (every message, oldest first): when `extractEvery` user turns have come
   * since the last extraction, or at the session's `end`, the messages not extracted yet go to `POST /v1/extract`
   * and its answer is returned; else null (waiting). Each stretch has its own extraction id (`x-` and the first 32
   * hex of the sha256 of its messages' roles and contents), so the same stretch sent again is answered `duplicate`
   * and writes nothing twice, and a different stretch is never taken for one sent. What was sent is followed by
   * content, not position, since frameworks compact their lists: the messages after those extracted are waiting
   * while the list begins with them, and once it does not (older messages replaced by a summary) every message
   * whose content was not extracted yet. A `failed` extraction (or a refusal of the service, answered as `failed`
   * with its code) is tried again, from the same message, by the next call. Its notes go to the backend, not to a
   * model: nothing here needs fencing.
   */
  async observe(messages: FlushMessage[], options: { end?: boolean } = {}): Promise<Extracted | null> {
    const waiting = this.waiting(messages);
    const turns = waiting.filter((message) => message.role === "user").length;
    const due = options.end === true || (this.extractEvery !== undefined && turns >= this.extractEvery);
    if (waiting.length === 0 || !due) return null;
    const stretch = waiting.slice(-MAX_EXTRACT_MESSAGES);
    const context = { ...this.context, document_version: null };
    let answer: Extracted;
    try {
      answer = await this.client.extract(context, `x-${digest(stretch).slice(0, 32)}`, stretch);
    } catch (error) {
      if (!(error instanceof MemoryApiError)) throw error;
      return { status: "failed", notes: [], skipped: [], reason: `${error.code}: ${error.serviceMessage}` };
    }
    if (answer.status !== "failed") {
      for (const message of waiting) this.sent.add(digest([message]));
      this.last = { count: messages.length, digest: digest(messages) };
    }
    return answer;
  }

  /**
   * The messages after those extracted while the list still begins with them; once it does not (a framework
   * replaced older messages by a summary), every message whose content was not extracted yet.
   */
  private waiting(messages: FlushMessage[]): FlushMessage[] {
    if (this.last === null) return messages;
    if (digest(messages.slice(0, this.last.count)) === this.last.digest) return messages.slice(this.last.count);
    return messages.filter((message) => !this.sent.has(digest([message])));
  }

  /** Ask `FlushFunction` for a note of the conversation before summarizing it; never rejects. */
  flush(compactionId: string, messages: FlushMessage[]): Promise<FlushResult> {
    return this.client.flush({ ...this.context, document_version: null }, compactionId, messages);
  }
}
