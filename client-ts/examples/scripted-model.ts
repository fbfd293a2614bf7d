/**
 * A scripted chat model for the offline example: a `fetch` the OpenAI SDK sends its Chat Completions
 * requests to, answering as a model would, so the example's loop runs for real with no network model.
 *
 * It is a fake of the *model* only: it asks for the tool calls a real model would (in Chat Completions'
 * wire format, through the real SDK), and builds its answers from what the memory service really answered
 * (the tool results, the memory block in the system prompt), so a broken service shows in the transcript.
 */

interface WireMessage {
  role: string;
  content?: string | null;
}

interface ScriptedTurn {
  user: string;
  calls: [name: string, args: Record<string, unknown>][];
  /** The final answer, from the system prompt and the tool results of this turn. */
  answer: (system: string, results: Record<string, unknown>[]) => string;
}

/** The memory block's lines that mention any of `words` (what the model "read" in its system prompt). */
function memoryLines(system: string, ...words: string[]): string[] {
  return system
    .split("\n")
    .filter((line) => words.some((word) => line.toLowerCase().includes(word)))
    .map((line) => line.trim());
}

export const SCRIPT: ScriptedTurn[] = [
  {
    user: "Hi! I'm Ana. I live in Lisbon and I always want metric units.",
    calls: [["remember", { text: "Ana lives in Lisbon and wants metric units" }]],
    answer: (_, [result]) => `Nice to meet you, Ana. Noted (note ${(result?.["note"] as { id: string }).id}).`,
  },
  {
    user: "Please keep a profile of me: I'm a backend engineer, I work on billing.",
    calls: [["update_memory", { content: "# About Ana\n- Backend engineer, works on billing\n- Lives in Lisbon" }]],
    answer: (_, [result]) =>
      `Profile saved (document version ${(result?.["document"] as { version: number }).version}).`,
  },
  {
    user: "Where do I live again?",
    calls: [["recall", { query: "where does Ana live", k: 3 }]],
    answer: (_, [result]) => `From my notes: ${(result?.["notes"] as { text: string }[])[0]?.text ?? "nothing"}.`,
  },
  {
    user: "Let's plan the billing migration: cutover the week of January 12, Dana signs off payments.",
    calls: [],
    answer: () => "Planned: cutover week of January 12; open: Dana's payments sign-off.",
  },
  {
    user: "What's a good distance for a weekend run, and what were we planning?",
    calls: [],
    answer: (system) =>
      `Going by memory: ${memoryLines(system, "metric", "migration").join(" | ") || "(nothing in memory)"}`,
  },
];
export const SUMMARY = "Summary so far: Ana (Lisbon, metric units, billing engineer) planned the billing migration.";
export const SUMMARY_REQUEST = "Summarize our conversation so far in a few sentences, for yourself, to continue from.";

function completion(message: Record<string, unknown>, finish: string): Response {
  const body = {
    id: "scripted",
    object: "chat.completion",
    created: 0,
    model: "scripted",
    choices: [{ index: 0, message: { role: "assistant", content: null, ...message }, finish_reason: finish }],
  };
  return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
}

/** The `fetch` to give `new OpenAI({fetch})`: it plays `SCRIPT`, one user line after another. */
export const scriptedFetch: typeof fetch = async (_input, init) => {
  const request = JSON.parse(String(init?.body)) as {
    messages: WireMessage[];
    tools?: { function: { name: string } }[];
  };
  const messages = request.messages;
  const lastUser = [...messages].reverse().find((message) => message.role === "user")?.content ?? "";
  if (lastUser === SUMMARY_REQUEST) return completion({ content: SUMMARY }, "stop");
  const turn = SCRIPT.find((candidate) => candidate.user === lastUser);
  if (turn === undefined) throw new Error(`the script has no turn for ${JSON.stringify(lastUser)}`);
  const offered = new Set((request.tools ?? []).map((tool) => tool.function.name));
  if (messages.at(-1)?.role !== "tool" && turn.calls.length > 0) {
    const missing = turn.calls.filter(([name]) => !offered.has(name));
    if (missing.length > 0) throw new Error(`the script calls tools the agent did not offer: ${missing.join(", ")}`);
    const toolCalls = turn.calls.map(([name, args], i) => ({
      id: `call-${i + 1}`,
      type: "function",
      function: { name, arguments: JSON.stringify(args) },
    }));
    return completion({ tool_calls: toolCalls }, "tool_calls");
  }
  const results: Record<string, unknown>[] = [];
  for (const message of [...messages].reverse()) {
    if (message.role !== "tool") break;
    results.unshift(JSON.parse(String(message.content)) as Record<string, unknown>);
  }
  return completion({ content: turn.answer(String(messages[0]?.content ?? ""), results) }, "stop");
};
