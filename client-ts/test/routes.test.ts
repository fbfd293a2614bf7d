/**
 * Every route against the local stack: each method's success and each refusal class (401, 403, 404, 409,
 * 422, 429), as typed errors carrying the API's `error.code`. The last test reads `docs/openapi.json` and
 * checks, from what went over the wire, that every operation it lists was answered 2xx at least once and
 * refused at least once where it can be.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  type ConversationContext,
  Forbidden,
  InvalidInput,
  ManagementClient,
  type MemoryApiError,
  MemoryClient,
  NotFound,
  RateLimited,
  type ScopeOption,
  TOOL_NAMES,
  Unauthorized,
  VersionConflict,
} from "../src/index.js";
import {
  api,
  type Exchange,
  FLUSH_NOTE,
  lambda,
  needsStack,
  NOTES_QUOTA,
  recordingFetch,
  token,
  unique,
} from "./support/stack.js";

const exchanges: Exchange[] = [];
const fetch = recordingFetch(exchanges);

function memory(): MemoryClient {
  return new MemoryClient(api(), { lambdaEndpoint: lambda(), fetch });
}

function dashboard(jwt: string): ManagementClient {
  return new ManagementClient(api(), { token: jwt, fetch });
}

function ctx(user: string, extra: Partial<ConversationContext> = {}): ConversationContext {
  return { user_id: user, thread_id: "t-1", ...extra };
}

/** Awaits a refusal and checks its class, status and code. */
async function refused<E extends MemoryApiError>(
  call: Promise<unknown>,
  cls: abstract new (...args: never[]) => E,
  status: number,
  code: string,
): Promise<E> {
  const error = await call.then(
    (answer) => assert.fail(`expected ${cls.name}, got ${JSON.stringify(answer)}`),
    (thrown: unknown) => thrown,
  );
  assert.ok(error instanceof cls, `expected ${cls.name}, got ${String(error)}`);
  assert.equal(error.status, status);
  assert.equal(error.code, code);
  return error;
}

/** `read()` again every 200 ms until `done` holds of its answer, for up to 10 s; the last answer. */
async function eventually<T>(read: () => Promise<T>, done: (answer: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  let answer = await read();
  while (!done(answer) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    answer = await read();
  }
  return answer;
}

/** Every note of a scope's export, following `next_cursor` (versions come first, then notes). */
async function exportedNotes(client: ManagementClient, scope: ScopeOption = {}): Promise<string[]> {
  const texts: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.export({ ...scope, ...(cursor !== undefined && { cursor }) });
    assert.equal(page.format, "agent-memory-export/1");
    texts.push(...page.notes.map((note) => note.text));
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return texts;
}

// --- tools and context --------------------------------------------------------------------------------------

test("health, the tool list, and a method for every tool it lists", needsStack, async () => {
  const client = memory();
  assert.deepEqual(await client.health(), { status: "ok" });
  const tools = await client.listTools();
  assert.deepEqual(
    tools.map((tool) => tool.name),
    [...TOOL_NAMES],
  );
  for (const tool of tools) {
    assert.equal(tool.parameters["type"], "object");
    const method = tool.name.replace(/_(\w)/g, (_, ch: string) => ch.toUpperCase()) as keyof MemoryClient;
    assert.equal(typeof client[method], "function", `MemoryClient has no method for the tool ${tool.name}`);
  }
});

test("remember, then the next turn's context shows the note", needsStack, async () => {
  const client = memory();
  const user = unique("ts-remember");
  const written = await client.remember(ctx(user), "- Prefers metric units");
  const turn = await client.getContext(ctx(user, { thread_id: "t-2" }));

  assert.equal(written.note.text, "Prefers metric units");
  assert.equal(written.truncated, false);
  assert.deepEqual(written.note.origin, { user_id: user, thread_id: "t-1" });
  assert.equal(turn.scope, "personal");
  assert.deepEqual(turn.degraded, []);
  assert.deepEqual(
    turn.recent_notes.map((note) => note.id),
    [written.note.id],
  );
  assert.match(turn.system_prompt, /Prefers metric units/);
});

test("remember's refusals carry the API's code and write nothing", needsStack, async () => {
  const client = memory();
  const user = unique("ts-refuse");
  await refused(client.remember(ctx(user), "# A heading"), InvalidInput, 422, "invalid_input");
  await refused(client.remember(ctx(user, { thread_owner_id: "someone-else" }), "a fact"), Forbidden, 403, "forbidden");
  await refused(client.remember(ctx(user, { visibility: "shared" }), "a fact"), InvalidInput, 422, "invalid_input");
  assert.deepEqual((await client.getContext(ctx(user))).recent_notes, []);
});

test(
  "every tools and context route refuses a foreign thread and a shared context without a workspace",
  needsStack,
  async () => {
    const client = memory();
    const user = unique("ts-every");
    const calls: [string, (context: ConversationContext) => Promise<unknown>][] = [
      ["remember", (context) => client.remember(context, "a fact")],
      ["update_memory", (context) => client.updateMemory(context, "# doc")],
      ["recall", (context) => client.recall(context, "fact")],
      ["context", (context) => client.getContext(context)],
    ];
    for (const [, call] of calls) {
      await refused(call(ctx(user, { thread_owner_id: "u-owner" })), Forbidden, 403, "forbidden");
      await refused(call(ctx(user, { visibility: "shared" })), InvalidInput, 422, "invalid_input");
    }
  },
);

test("an argument naming a scope is refused by the service, with details, and writes nothing", needsStack, async () => {
  const client = memory();
  const context = ctx(unique("ts-scope"));
  const error = await refused(
    client.callTool(context, "remember", { text: "x", user_id: "victim" }),
    InvalidInput,
    422,
    "invalid_input",
  );
  assert.ok(error.details?.some((detail) => detail.loc.includes("user_id")));
  assert.deepEqual((await client.getContext(context)).recent_notes, []);
  const before = exchanges.length;
  await assert.rejects(client.callTool(context, "delete_everything" as "recall", {}), RangeError);
  assert.equal(exchanges.length, before, "an unknown tool is refused before any request");
});

test("update_memory saves; a stale version is a conflict; empty content is refused", needsStack, async () => {
  const client = memory();
  const user = unique("ts-doc");
  const saved = await client.updateMemory(ctx(user, { document_version: 0 }), "# About\n- Works in Lisbon");
  await refused(
    client.updateMemory(ctx(user, { document_version: 0 }), "# About\n- Works in Porto"),
    VersionConflict,
    409,
    "version_conflict",
  );
  await refused(client.updateMemory(ctx(user), ""), InvalidInput, 422, "invalid_input");

  assert.equal(saved.document.version, 1);
  assert.equal(saved.compressed, false);
  assert.equal((await client.getContext(ctx(user))).document.content, "# About\n- Works in Lisbon");
});

test("recall finds the scope's note and refuses a blank query or k out of range", needsStack, async () => {
  const client = memory();
  const team = ctx(unique("ts-recall"), { visibility: "shared", workspace_id: unique("w-recall") });
  await client.remember(team, "The staging cluster lives in eu-west-1");
  await client.remember(team, "Lunch is at noon");

  const found = await client.recall(team, "which cluster for staging?", { k: 1 });
  await refused(client.recall(team, "   "), InvalidInput, 422, "invalid_input");
  await refused(client.recall(team, "cluster", { k: 21 }), InvalidInput, 422, "invalid_input");

  assert.equal(found.mode, "keyword");
  assert.deepEqual(
    found.notes.map((note) => note.text),
    ["The staging cluster lives in eu-west-1"],
  );
  assert.ok(found.notes[0]!.score > 0);
  assert.deepEqual((await client.recall(ctx(team.user_id), "cluster")).notes, []); // personal: not the team's
});

test(
  "over the daily quota, remember is 429 quota_exceeded with Retry-After, thrown at once",
  NOTES_QUOTA ? needsStack : { skip: "MEMORY_TEST_NOTES_QUOTA is not set" },
  async () => {
    const client = memory();
    const context = ctx(unique("ts-quota"));
    for (let i = 0; i < Number(NOTES_QUOTA); i++) await client.remember(context, `fact number ${i}`);
    const before = exchanges.length;
    const error = await refused(client.remember(context, "one too many"), RateLimited, 429, "quota_exceeded");

    assert.ok(error.retryAfterS !== null && error.retryAfterS > 0);
    assert.equal(exchanges.length, before + 1, "a Retry-After beyond the retry policy's bound is not waited for");
  },
);

// --- extraction ------------------------------------------------------------------------------------------------

test(
  "extract writes notes citing their messages once per extraction id, and refuses a bad id",
  needsStack,
  async () => {
    const client = memory();
    const context = ctx(unique("ts-extract"), { thread_id: "t-9" });
    const messages = [
      { role: "user", content: "I prefer trains to planes." },
      { role: "assistant", content: "Noted." },
    ];
    const first = await client.extract(context, "x-1", messages);
    const again = await client.extract(context, "x-1", messages);

    assert.equal(first.status, "written");
    assert.deepEqual(
      first.notes.map((note) => [note.source, note.origin.messages]),
      [["extraction", [0]]],
    );
    assert.deepEqual(again, { status: "duplicate", notes: first.notes, skipped: [] });
    await refused(client.extract(context, "has space", messages), InvalidInput, 422, "invalid_input");
  },
);

// --- the flush, over Lambda Invoke ----------------------------------------------------------------------------

test(
  "the flush is written once per compaction, then answers duplicate",
  FLUSH_NOTE ? needsStack : { skip: "MEMORY_TEST_FLUSH_NOTE is not set (the stack has no chat model)" },
  async () => {
    const client = memory();
    const team = ctx(unique("ts-flush"), { visibility: "shared", workspace_id: unique("w-flush"), thread_id: "t-9" });
    const messages = [
      { role: "user", content: "Let's plan the billing migration." },
      { role: "assistant", content: "Sure: what is left?" },
    ];
    const first = await client.flush(team, "cmp-1", messages);
    const again = await client.flush(team, "cmp-1", messages);

    assert.equal(first.status, "written");
    assert.equal(first.note?.text, FLUSH_NOTE);
    assert.equal(first.note?.source, "flush");
    assert.deepEqual(again, { status: "duplicate", note: first.note });
    assert.deepEqual(
      (await client.getContext(team)).recent_notes.map((note) => note.text),
      [FLUSH_NOTE],
    );
  },
);

test("a flush to a missing function is failed, never thrown", needsStack, async () => {
  const client = new MemoryClient(api(), { lambdaEndpoint: lambda(), flushFunction: "NoSuchFunction" });
  const outcome = await client.flush(ctx(unique("ts-flush-missing")), "cmp-1", [{ role: "user", content: "x" }]);
  assert.equal(outcome.status, "failed");
  assert.equal(outcome.note, null);
  assert.match(outcome.reason ?? "", /failed/);
});

// --- management: the document and its history ----------------------------------------------------------------

for (const kind of ["personal", "workspace"] as const) {
  test(
    `the ${kind} document: read, save, history, a version, restore; stale and missing versions refused`,
    needsStack,
    async () => {
      const user = unique(`ts-mgmt-${kind}`);
      const scope: ScopeOption = kind === "workspace" ? { workspace: unique("w-mgmt") } : {};
      const client = dashboard(token(user, scope.workspace ? [scope.workspace] : []));

      const empty = await client.getDocument(scope);
      const first = await client.putDocument("# Notes\n- one", 0, scope);
      await refused(client.putDocument("# Notes\n- stale", 0, scope), VersionConflict, 409, "version_conflict");
      const second = await client.putDocument("# Notes\n- two", 1, scope);
      const versions = await client.listVersions({ ...scope, limit: 1 });
      const older = await client.listVersions({ ...scope, limit: 1, cursor: versions.next_cursor ?? "" });
      const one = await client.getVersion(1, scope);
      await refused(client.getVersion(99, scope), NotFound, 404, "not_found");
      const restored = await client.restoreVersion(1, 2, scope);
      await refused(client.restoreVersion(1, 2, scope), VersionConflict, 409, "version_conflict");
      await refused(client.restoreVersion(42, 3, scope), NotFound, 404, "not_found");
      const provenance = await client.getProvenance(scope);

      assert.deepEqual([empty.document.version, empty.document.content], [0, ""]);
      assert.deepEqual(empty.limits, { soft: 18000, hard: 25000 });
      assert.deepEqual([first.document.version, second.document.version], [1, 2]);
      assert.deepEqual(
        versions.versions.map((entry) => [entry.version, entry.reason]),
        [[2, "dashboard"]],
      );
      assert.deepEqual(
        older.versions.map((entry) => entry.version),
        [1],
      );
      assert.equal(one.document.content, "# Notes\n- one");
      assert.deepEqual([restored.document.version, restored.document.content], [3, "# Notes\n- one"]);
      assert.deepEqual(provenance, {
        version: 3,
        lines: [
          { line: "# Notes", notes: [] },
          { line: "- one", notes: [] },
        ],
      }); // written by hand: no line rests on a note
    },
  );
}

// --- management: notes --------------------------------------------------------------------------------------

test("notes by day, search and delete; a missing note and bad parameters refused", needsStack, async () => {
  const user = unique("ts-notes");
  const workspace = unique("w-notes");
  const tools = memory();
  const team = await tools.remember(
    ctx(user, { visibility: "shared", workspace_id: workspace }),
    "The deploy window is Tuesday",
  );
  const personal = await tools.remember(ctx(user), "Personal: likes tea");
  const client = dashboard(token(user, [workspace]));

  const teamDays = await client.listNotes({ workspace, days: 2 });
  const personalDays = await client.listNotes({ before: "2999-01-01" });
  const found = await client.searchNotes("deploy window", { workspace, k: 3 });
  const notFound = await client.searchNotes("deploy");
  for (const [note, scope] of [
    [team.note, { workspace }],
    [personal.note, {}],
  ] as const) {
    await client.deleteNote(note.id, scope);
    await refused(client.deleteNote(note.id, scope), NotFound, 404, "not_found");
  }
  await refused(client.listNotes({ workspace, days: 0 }), InvalidInput, 422, "invalid_input");
  await refused(client.listNotes({ before: "2026-13-45" }), InvalidInput, 422, "invalid_input");
  await refused(client.searchNotes(" ", { workspace }), InvalidInput, 422, "invalid_input");

  assert.deepEqual(
    teamDays.days.map((day) => [day.day, day.notes.map((note) => note.text)]),
    [[team.note.day, ["The deploy window is Tuesday"]]],
  );
  assert.deepEqual(
    personalDays.days.map((day) => day.notes.map((note) => note.text)),
    [["Personal: likes tea"]],
  );
  assert.deepEqual(
    found.notes.map((note) => note.id),
    [team.note.id],
  );
  assert.deepEqual(notFound.notes, []);
  assert.deepEqual((await client.listNotes({ workspace })).days, []);
  assert.deepEqual((await client.listNotes()).days, []);
});

// --- management: people's control ------------------------------------------------------------------------------

test(
  "export, injections, usage, what the agent sees, erasing my notes in a workspace and erasing my personal memory",
  needsStack,
  async () => {
    const user = unique("ts-people");
    const workspace = unique("w-people");
    const tools = memory();
    const team = ctx(user, { visibility: "shared", workspace_id: workspace });
    await tools.remember(ctx(user), "Personal fact");
    await tools.remember(team, "Team fact by me");
    const turn = await tools.getContext(ctx(user, { thread_id: "t-shown" }));
    const teamTurn = await tools.getContext({ ...team, thread_id: "t-team" });
    const client = dashboard(token(user, [workspace]));

    const personalNotes = await exportedNotes(client);
    const teamNotes = await exportedNotes(client, { workspace });
    // The record of what a turn was shown is written off the turn's path.
    const shown = (page: { injections: unknown[] }) => page.injections.length > 0;
    const injections = await eventually(() => client.listInjections({ threadId: "t-shown", limit: 5 }), shown);
    const teamInjections = await eventually(() => client.listInjections({ workspace }), shown);
    const usage = await client.usage();
    const teamUsage = await client.usage({ workspace });
    const sees = await client.agentView();
    const teamSees = await client.agentView({ workspace });
    await refused(client.agentView({ workspace: unique("w-not-mine") }), Forbidden, 403, "forbidden");
    const mine = await client.eraseMyNotes({ workspace });
    const erased = await client.erase();
    const again = await client.erase();
    await refused(client.listInjections({ limit: 0 }), InvalidInput, 422, "invalid_input");

    assert.deepEqual(personalNotes, ["Personal fact"]);
    assert.deepEqual(teamNotes, ["Team fact by me"]);
    assert.deepEqual(
      injections.injections.map((entry) => entry.thread_id),
      ["t-shown"],
    );
    assert.deepEqual(
      teamInjections.injections.map((entry) => entry.thread_id),
      ["t-team"],
    );
    assert.deepEqual([usage.notes_today, teamUsage.notes_today], [1, 1]);
    assert.deepEqual([sees.system_prompt, teamSees.system_prompt], [turn.system_prompt, teamTurn.system_prompt]);
    assert.equal(mine.erased.notes, 1);
    assert.deepEqual(await exportedNotes(client, { workspace }), []);
    assert.equal(erased.erased.notes, 1);
    assert.deepEqual(again.erased, { notes: 0, versions: 0, other: 0 });
    assert.deepEqual(await exportedNotes(client), []);
  },
);

test("operators: runs listed and started, a workspace erased; anyone else refused", needsStack, async () => {
  const workspace = unique("w-ops");
  await memory().remember(ctx(unique("ts-ops-user"), { visibility: "shared", workspace_id: workspace }), "A team fact");
  const operator = dashboard(token(unique("ts-operator"), [], { admin: true }));
  const member = dashboard(token(unique("ts-member"), [workspace]));

  const started = await operator.startRun();
  const runs = await operator.listRuns({ limit: 5 });
  await refused(member.erase({ workspace }), Forbidden, 403, "forbidden");
  await refused(member.listRuns(), Forbidden, 403, "forbidden");
  await refused(member.startRun(), Forbidden, 403, "forbidden");
  const erased = await operator.erase({ workspace });
  await refused(operator.listRuns({ limit: 101 }), InvalidInput, 422, "invalid_input");

  assert.equal(started.status, "started");
  assert.ok(Array.isArray(runs.runs));
  assert.equal(erased.erased.notes, 1);
});

// --- the backend's own data flows ---------------------------------------------------------------------------

test(
  "the backend exports, reads usage and erases a user and a workspace by id; bad ids refused",
  needsStack,
  async () => {
    const user = unique("ts-platform-user");
    const neighbour = unique("ts-platform-neighbour");
    const workspace = unique("w-platform");
    const client = memory();
    await client.remember(ctx(user), "Flies to Lisbon in March");
    await client.remember(ctx(neighbour), "Flies to Oslo in May");
    await client.remember(ctx(user, { visibility: "shared", workspace_id: workspace }), "Standup at 9:30");

    const exported = await client.admin.export({ user });
    const notes =
      exported.next_cursor === null ? [] : (await client.admin.export({ user, cursor: exported.next_cursor })).notes;
    const usage = await client.admin.usage({ user });
    const team = await client.admin.export({ workspace });
    const teamUsage = await client.admin.usage({ workspace });
    const erased = await client.admin.erase({ user });
    const again = await client.admin.erase({ user });
    const teamErased = await client.admin.erase({ workspace });
    await refused(client.admin.erase({ user: "u 1" }), InvalidInput, 422, "invalid_input");
    await refused(client.admin.export({ workspace: "w 1" }), InvalidInput, 422, "invalid_input");
    await refused(client.admin.usage({ user: "u 1" }), InvalidInput, 422, "invalid_input");
    await refused(client.admin.export({ user: "u 1" }), InvalidInput, 422, "invalid_input");
    await refused(client.admin.erase({ workspace: "w 1" }), InvalidInput, 422, "invalid_input");
    await refused(client.admin.usage({ workspace: "w 1" }), InvalidInput, 422, "invalid_input");

    assert.deepEqual(
      notes.map((note) => note.text),
      ["Flies to Lisbon in March"],
    );
    assert.equal(usage.notes_today, 1);
    assert.equal(team.scope, "team");
    assert.equal(teamUsage.notes_today, 1);
    assert.equal(erased.erased.notes, 1);
    assert.deepEqual(again.erased, { notes: 0, versions: 0, other: 0 });
    assert.equal(teamErased.erased.notes, 1);
    assert.deepEqual((await client.recall(ctx(user), "Lisbon")).notes, []);
    assert.equal((await client.admin.usage({ user: neighbour })).notes_today, 1);
  },
);

test("the backend imports notes at their own dates; the same import_id again writes nothing", needsStack, async () => {
  const user = unique("ts-import-user");
  const client = memory();
  const notes = [
    { text: "Moved to Lisbon in the spring", created_at: "2026-09-14T18:05:00+02:00" },
    { text: "Allergic to penicillin", created_at: "2026-09-02T07:10:00Z" },
  ];

  const receipt = await client.admin.importNotes({ user, importId: "ts-import-1", notes });
  const again = await client.admin.importNotes({ user, importId: "ts-import-1", notes });
  const workspace = unique("w-import");
  const team = await client.admin.importNotes({
    workspace,
    importId: "ts-import-team",
    notes: [{ text: "Moved to Lisbon in the spring", created_at: "2026-09-14T18:05:00+02:00", author: user }],
  });
  const undated = [{ text: "no offset", created_at: "2026-09-02T07:10:00" }];
  await refused(
    client.admin.importNotes({ user, importId: "ts-bad", notes: undated }),
    InvalidInput,
    422,
    "invalid_input",
  );
  await refused(
    client.admin.importNotes({ workspace, importId: "ts-bad", notes: undated }),
    InvalidInput,
    422,
    "invalid_input",
  );
  const exported = await client.admin.export({ user });
  const stored =
    exported.next_cursor === null ? [] : (await client.admin.export({ user, cursor: exported.next_cursor })).notes;

  assert.deepEqual(receipt.notes, [
    { index: 1, id: "2026-09-02.1" },
    { index: 0, id: "2026-09-14.1" },
  ]);
  assert.deepEqual(again, receipt);
  assert.deepEqual(team.notes, [{ index: 0, id: "2026-09-14.1" }]);
  assert.deepEqual(
    stored.map((note) => [note.day, note.text]),
    [
      ["2026-09-02", "Allergic to penicillin"],
      ["2026-09-14", "Moved to Lisbon in the spring"],
    ],
  );
});

// --- management: who may call ---------------------------------------------------------------------------------

type Call = (client: ManagementClient, scope: ScopeOption) => Promise<unknown>;
const EVERY_SCOPED_CALL: [string, Call][] = [
  ["getDocument", (c, s) => c.getDocument(s)],
  ["putDocument", (c, s) => c.putDocument("# x", 0, s)],
  ["getProvenance", (c, s) => c.getProvenance(s)],
  ["listVersions", (c, s) => c.listVersions(s)],
  ["getVersion", (c, s) => c.getVersion(1, s)],
  ["restoreVersion", (c, s) => c.restoreVersion(1, 0, s)],
  ["listNotes", (c, s) => c.listNotes(s)],
  ["searchNotes", (c, s) => c.searchNotes("x", s)],
  ["deleteNote", (c, s) => c.deleteNote("2026-12-03.1", s)],
  ["export", (c, s) => c.export(s)],
  ["erase", (c, s) => c.erase(s)],
  ["listInjections", (c, s) => c.listInjections(s)],
  ["usage", (c, s) => c.usage(s)],
  ["agentView", (c, s) => c.agentView(s)],
];

test("every management route refuses no token, an expired one and a forged one with 401", needsStack, async () => {
  const user = unique("ts-401");
  const workspace = unique("w-401");
  const bad = [
    "not-a-jwt",
    token(user, [workspace], { ttlS: -3600 }),
    token(user, [workspace], { secret: "not-the-stack's-secret" }),
  ];
  for (const jwt of bad) {
    const client = dashboard(jwt);
    for (const [name, call] of EVERY_SCOPED_CALL) {
      for (const scope of [{}, { workspace }]) {
        const error = await refused(call(client, scope), Unauthorized, 401, "unauthorized").catch(
          (failure: unknown) => {
            throw new Error(`${name} ${JSON.stringify(scope)}: ${String(failure)}`);
          },
        );
        assert.ok(error.serviceMessage);
      }
    }
    await refused(client.eraseMyNotes({ workspace }), Unauthorized, 401, "unauthorized");
    await refused(client.listRuns(), Unauthorized, 401, "unauthorized");
    await refused(client.startRun(), Unauthorized, 401, "unauthorized");
  }
});

test("every workspace route refuses a user who is not a member with 403, and writes nothing", needsStack, async () => {
  const workspace = unique("w-403");
  const owner = ctx(unique("ts-403-owner"), { visibility: "shared", workspace_id: workspace });
  await memory().remember(owner, "Team secret plan");
  const outsider = dashboard(token(unique("ts-403-outsider"), [unique("w-other")]));
  for (const [name, call] of EVERY_SCOPED_CALL) {
    await refused(call(outsider, { workspace }), Forbidden, 403, "forbidden").catch((failure: unknown) => {
      throw new Error(`${name}: ${String(failure)}`);
    });
  }
  await refused(outsider.eraseMyNotes({ workspace }), Forbidden, 403, "forbidden");
  assert.deepEqual(
    (await memory().getContext(owner)).recent_notes.map((note) => note.text),
    ["Team secret plan"],
  );
});

// --- coverage, from what went over the wire ---------------------------------------------------------------------

test("every operation of docs/openapi.json was answered 2xx, and refused where it can be", needsStack, () => {
  const spec = JSON.parse(readFileSync(new URL("../../../docs/openapi.json", import.meta.url), "utf8")) as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  const missing: string[] = [];
  for (const [template, operations] of Object.entries(spec.paths)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    for (const [method, operation] of Object.entries(operations)) {
      const seen = exchanges.filter((e) => e.method === method.toUpperCase() && pattern.test(e.path));
      const statuses = new Set(seen.map((e) => String(e.status)));
      if (![...statuses].some((status) => status.startsWith("2"))) missing.push(`${method} ${template}: no 2xx`);
      // 400 and 415 need a body that is not JSON, which no typed method sends.
      const refusals = Object.keys(operation.responses).filter((s) => s.startsWith("4") && s !== "400" && s !== "415");
      if (refusals.length > 0 && !refusals.some((status) => statuses.has(status))) {
        missing.push(`${method} ${template}: none of ${refusals.join(", ")}`);
      }
    }
  }
  assert.deepEqual(missing, []);
  const classes = new Set(exchanges.map((e) => e.status).filter((status) => status >= 400));
  for (const status of [401, 403, 404, 409, 422, ...(NOTES_QUOTA ? [429] : [])])
    assert.ok(classes.has(status), `${status}`);
});
