/**
 * The API's shapes, named. Each is an alias of a schema of `docs/openapi.json`, which `npm run build`
 * generates into `generated/openapi.ts` (openapi-typescript, when the document changed) before compiling, so
 * a change of the API is a compile error here, never a silent drift; `test/openapi.test.ts` checks each
 * method's alias against its route's answer.
 */

import type { components } from "./generated/openapi.js";

type Schemas = components["schemas"];

/**
 * Who is talking, where: the backend alone knows it, the model never sees or supplies it. `user_id` and
 * `thread_id` are required; `visibility` defaults to `"private"` (the user's personal memory), and
 * `"shared"` with a `workspace_id` is the workspace's team memory.
 */
export type ConversationContext = Pick<Schemas["ConversationContext"], "user_id" | "thread_id"> &
  Partial<Omit<Schemas["ConversationContext"], "user_id" | "thread_id">>;

export type Health = Schemas["Health"];
export type Note = Schemas["Note"];
export type ScoredNote = Schemas["ScoredNote"];
export type Document = Schemas["Document"];
export type ToolDefinition = Schemas["ToolDefinition"];
export type Tools = Schemas["Tools"];
export type Remembered = Schemas["Remembered"];
export type SavedDocument = Schemas["SavedDocument"];
export type Recalled = Schemas["Recalled"];
export type MemoryContext = Schemas["MemoryContext"];
/** `POST /v1/extract`'s answer: the notes written, each citing its messages (`origin.messages`), and those skipped. */
export type Extracted = Schemas["Extracted"];
export type CurrentDocument = Schemas["CurrentDocument"];
export type OneVersion = Schemas["OneVersion"];
/** Each line of the current document with the ids of the notes cited for it (empty: written by hand). */
export type Provenance = Schemas["Provenance"];
/** A version with the cited edits that made it (a consolidation's), or `edits: null`. */
export type VersionWithEdits = Schemas["VersionWithEdits"];
export type Versions = Schemas["Versions"];
export type NotesByDay = Schemas["NotesByDay"];
export type Export = Schemas["Export"];
export type Receipt = Schemas["Receipt"];
export type Injections = Schemas["Injections"];
export type Usage = Schemas["Usage"];
/** One note of an import (`notes/1`): its text and its ISO 8601 instant with its offset. */
export type NoteToImport = Omit<Schemas["ImportedNoteIn"], "author" | "source"> & {
  /** In a team memory, the member the note is of (required there). */
  author?: string | null;
  /** Where it came from (`[a-z0-9_.-]{1,32}`); default `import`. */
  source?: string | null;
};
/** An import's receipt: each note of the request written, skipped (a near-duplicate) or refused. */
export type Imported = Schemas["Imported"];
export type Runs = Schemas["Runs"];
export type RunStarted = Schemas["RunStarted"];

/** The memory tools of `GET /v1/tools`, their arguments and their answers. */
export interface ToolCalls {
  remember: { arguments: Schemas["RememberArgs"]; answer: Remembered };
  update_memory: { arguments: Schemas["UpdateMemoryArgs"]; answer: SavedDocument };
  recall: { arguments: Schemas["RecallArgs"]; answer: Recalled };
}
export type ToolName = keyof ToolCalls;
export const TOOL_NAMES: readonly ToolName[] = ["remember", "update_memory", "recall"];

/** One message of the conversation, as the flush takes it. */
export interface FlushMessage {
  role: string;
  content: string;
}

/** `FlushFunction`'s answer; `failed` also stands for every problem of the call itself (never a rejection). */
export interface FlushResult {
  status: "written" | "duplicate" | "disabled" | "failed";
  note: Note | null;
  reason?: string;
  /** true when no model wrote the note (the local extractive stand-in). */
  model_free?: boolean;
}
