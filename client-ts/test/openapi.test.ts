/**
 * The types are docs/openapi.json's: `npm run build` generates `src/generated/openapi.ts` from it
 * (openapi-typescript) before it compiles, and each method resolves to its route's own answer type, as the
 * compiler checks here; a route added to docs/openapi.json without its line below fails the count.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import type { ManagementClient, MemoryClient, PlatformOperations } from "../src/index.js";
import type { paths } from "../src/generated/openapi.js";

type Method = "get" | "put" | "post" | "delete";
type Json<R> = R extends { content: { "application/json": infer Body } }
  ? Body
  : R extends { content?: never }
    ? void
    : never;
/** The 2xx answer of a route, as docs/openapi.json declares it. */
type Answer<P extends keyof paths, M extends Method> = paths[P][M] extends { responses: infer R }
  ? Json<R[Extract<keyof R, 200 | 201 | 202 | 204>]>
  : never;
type Resolves<C, K extends keyof C> = C[K] extends (...args: never[]) => Promise<infer T> ? T : never;
type Equal<A, B> = (<G>() => G extends A ? 1 : 2) extends <G>() => G extends B ? 1 : 2 ? true : false;

type Personal = "/v1/memory/personal";
type Team = "/v1/memory/workspaces/{workspace_id}";
type M = MemoryClient;
type D = ManagementClient;
type P = PlatformOperations;
type Users = "/v1/platform/users/{user_id}";
type Workspaces = "/v1/platform/workspaces/{workspace_id}";

// One line per route: a method whose type drifts from its route's answer does not compile.
const SAME_TYPES: true[] = [
  true as Equal<Resolves<M, "health">, Answer<"/v1/health", "get">>,
  true as Equal<Resolves<M, "listTools">, Answer<"/v1/tools", "get">["tools"]>,
  true as Equal<Resolves<M, "remember">, Answer<"/v1/tools/remember", "post">>,
  true as Equal<Resolves<M, "updateMemory">, Answer<"/v1/tools/update_memory", "post">>,
  true as Equal<Resolves<M, "extract">, Answer<"/v1/extract", "post">>,
  true as Equal<Resolves<M, "recall">, Answer<"/v1/tools/recall", "post">>,
  true as Equal<Resolves<M, "getContext">, Answer<"/v1/context", "post">>,
  true as Equal<Resolves<D, "getDocument">, Answer<`${Personal}/document`, "get"> & Answer<`${Team}/document`, "get">>,
  true as Equal<Resolves<D, "putDocument">, Answer<`${Personal}/document`, "put"> & Answer<`${Team}/document`, "put">>,
  true as Equal<Resolves<D, "getProvenance">, Answer<`${Personal}/document/provenance`, "get">>,
  true as Equal<Resolves<D, "getProvenance">, Answer<`${Team}/document/provenance`, "get">>,
  true as Equal<Resolves<D, "listVersions">, Answer<`${Personal}/document/versions`, "get">>,
  true as Equal<Resolves<D, "listVersions">, Answer<`${Team}/document/versions`, "get">>,
  true as Equal<Resolves<D, "getVersion">, Answer<`${Personal}/document/versions/{version}`, "get">>,
  true as Equal<Resolves<D, "getVersion">, Answer<`${Team}/document/versions/{version}`, "get">>,
  true as Equal<Resolves<D, "restoreVersion">, Answer<`${Personal}/document/versions/{version}/restore`, "post">>,
  true as Equal<Resolves<D, "restoreVersion">, Answer<`${Team}/document/versions/{version}/restore`, "post">>,
  true as Equal<Resolves<D, "listNotes">, Answer<`${Personal}/notes`, "get">>,
  true as Equal<Resolves<D, "listNotes">, Answer<`${Team}/notes`, "get">>,
  true as Equal<Resolves<D, "searchNotes">, Answer<`${Personal}/notes/search`, "get">>,
  true as Equal<Resolves<D, "searchNotes">, Answer<`${Team}/notes/search`, "get">>,
  true as Equal<Resolves<D, "deleteNote">, Answer<`${Personal}/notes/{note_id}`, "delete">>,
  true as Equal<Resolves<D, "deleteNote">, Answer<`${Team}/notes/{note_id}`, "delete">>,
  true as Equal<Resolves<D, "export">, Answer<`${Personal}/export`, "get">>,
  true as Equal<Resolves<D, "export">, Answer<`${Team}/export`, "get">>,
  true as Equal<Resolves<D, "erase">, Answer<Personal, "delete">>,
  true as Equal<Resolves<D, "erase">, Answer<Team, "delete">>,
  true as Equal<Resolves<D, "eraseMyNotes">, Answer<`${Team}/notes`, "delete">>,
  true as Equal<Resolves<D, "listInjections">, Answer<`${Personal}/injections`, "get">>,
  true as Equal<Resolves<D, "listInjections">, Answer<`${Team}/injections`, "get">>,
  true as Equal<Resolves<D, "usage">, Answer<`${Personal}/usage`, "get">>,
  true as Equal<Resolves<D, "usage">, Answer<`${Team}/usage`, "get">>,
  true as Equal<Resolves<D, "agentView">, Answer<`${Personal}/context`, "get">>,
  true as Equal<Resolves<D, "agentView">, Answer<`${Team}/context`, "get">>,
  true as Equal<Resolves<D, "listRuns">, Answer<"/v1/admin/consolidation/runs", "get">>,
  true as Equal<Resolves<D, "startRun">, Answer<"/v1/admin/consolidation/runs", "post">>,
  true as Equal<Resolves<P, "export">, Answer<`${Users}/export`, "get">>,
  true as Equal<Resolves<P, "erase">, Answer<Users, "delete">>,
  true as Equal<Resolves<P, "usage">, Answer<`${Users}/usage`, "get">>,
  true as Equal<Resolves<P, "export">, Answer<`${Workspaces}/export`, "get">>,
  true as Equal<Resolves<P, "erase">, Answer<Workspaces, "delete">>,
  true as Equal<Resolves<P, "usage">, Answer<`${Workspaces}/usage`, "get">>,
  true as Equal<Resolves<P, "importNotes">, Answer<`${Users}/import`, "post">>,
  true as Equal<Resolves<P, "importNotes">, Answer<`${Workspaces}/import`, "post">>,
];

test("each method's answer type is its route's, for every route of docs/openapi.json", () => {
  const spec = JSON.parse(readFileSync(new URL("../../../docs/openapi.json", import.meta.url), "utf8")) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const operations = Object.values(spec.paths).reduce((count, path) => count + Object.keys(path).length, 0);
  // Each pair of personal and workspace routes has one line per route above, the two `& ` lines two each.
  assert.equal(SAME_TYPES.length + 2, operations);
});
