/**
 * A chat backend's whole loop with durable memory, on the OpenAI SDK's Chat Completions, in one file.
 *
 * Each turn: `systemPrompt()` gives the memory block for the system prompt; the model gets it and the memory
 * tools; each tool call it makes is run by `handle()` with the conversation's context (the model never names
 * a user or a workspace); before the history is summarized (the compaction), `flush()` asks the service for
 * a note of the conversation.
 *
 *     make run                                    # the local stack, in another terminal
 *     cd client-ts && npm ci && npm run example   # offline: a scripted model plays the conversation
 *     npm run example -- --openai-base-url http://127.0.0.1:11434/v1 --model llama3.1   # a real model
 */

import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";

import { Conversation, MemoryClient } from "../src/index.js";
import { SCRIPT, SUMMARY_REQUEST, scriptedFetch } from "./scripted-model.js";

const INSTRUCTIONS = "You are a helpful assistant. Use your memory tools to keep durable facts about the user.";
const MAX_STEPS = 5; // model calls per turn: tool calls, then an answer

type Out = (line: string) => void;

function short(value: unknown, limit = 200): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}

/** One conversation: the model, the memory helper, the history and its compactions. */
export class Agent {
  history: ChatCompletionMessageParam[] = [];
  private compactions = 0;

  constructor(
    readonly openai: OpenAI,
    readonly model: string,
    readonly conversation: Conversation,
    readonly out: Out = console.log,
  ) {}

  async turn(userText: string): Promise<string> {
    const memoryBlock = await this.conversation.systemPrompt();
    const system: ChatCompletionMessageParam = { role: "system", content: `${INSTRUCTIONS}\n\n${memoryBlock}` };
    const tools = await this.conversation.tools({ format: "openai-chat" });
    this.out(`user> ${userText}`);
    this.history.push({ role: "user", content: userText });
    for (let step = 0; step < MAX_STEPS; step++) {
      const completion = await this.openai.chat.completions.create({
        model: this.model,
        messages: [system, ...this.history],
        tools,
      });
      const message = completion.choices[0]!.message;
      this.history.push(message);
      const calls = (message.tool_calls ?? []).filter((call) => call.type === "function");
      if (calls.length === 0) {
        this.out(`assistant> ${message.content ?? ""}`);
        return message.content ?? "";
      }
      for (const call of calls) {
        this.out(`model → ${call.function.name} ${short(call.function.arguments)}`);
        const result = await this.conversation.handle(call.function.name, call.function.arguments);
        this.out(`tool ← ${short(result)}`);
        this.history.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(result) });
      }
    }
    throw new Error(`no answer after ${MAX_STEPS} model calls`);
  }

  /** Flush first (a note of what the conversation is about), then replace the history by a summary. */
  async compact(): Promise<void> {
    this.compactions += 1;
    const compactionId = `${this.conversation.context.thread_id}-compaction-${this.compactions}`;
    const transcript = this.history.flatMap((message) =>
      typeof message.content === "string" && message.content ? [{ role: message.role, content: message.content }] : [],
    );
    const outcome = await this.conversation.flush(compactionId, transcript);
    this.out(`flush: ${outcome.status}${outcome.note ? ` — note ${outcome.note.id}: ${outcome.note.text}` : ""}`);
    if (outcome.reason) this.out(`flush reason: ${outcome.reason}`);
    const summary = await this.openai.chat.completions.create({
      model: this.model,
      messages: [...this.history, { role: "user", content: SUMMARY_REQUEST }],
      tools: await this.conversation.tools({ format: "openai-chat" }),
    });
    const text = summary.choices[0]!.message.content ?? "";
    this.out(`summary: ${text}`);
    this.history = [
      { role: "user", content: text },
      { role: "assistant", content: "Understood." },
    ];
  }
}

export interface ExampleOptions {
  apiUrl: string;
  lambdaUrl: string;
  user: string;
  /** An OpenAI-compatible server; without one, the scripted model answers. */
  openaiBaseUrl?: string;
  model?: string;
  out?: Out;
}

/** The script's user lines, in one conversation, compacted before the last one. */
export async function runExample(options: ExampleOptions): Promise<Agent> {
  const openai = options.openaiBaseUrl
    ? new OpenAI({ baseURL: options.openaiBaseUrl, apiKey: process.env["OPENAI_API_KEY"] ?? "unused" })
    : new OpenAI({ baseURL: "http://scripted.invalid/v1", apiKey: "unused", fetch: scriptedFetch });
  const memory = new MemoryClient(options.apiUrl, { lambdaEndpoint: options.lambdaUrl });
  const conversation = new Conversation(memory, { user_id: options.user, thread_id: "t-example" });
  const agent = new Agent(openai, options.model ?? "scripted", conversation, options.out);
  const users = SCRIPT.map((turn) => turn.user);
  for (const user of users.slice(0, -1)) await agent.turn(user);
  await agent.compact();
  await agent.turn(users.at(-1)!);
  return agent;
}

async function main(): Promise<void> {
  // The AWS SDK (the flush's Lambda client) warns on Node 20 that its releases after January 2027 need Node 22,
  // in the middle of the transcript. Its own switch turns the notice off for this run, unless it is set; a
  // backend that stays on these SDK versions should plan the move to Node 22 rather than hide it.
  process.env["AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED"] ??= "true";
  const { values } = parseArgs({
    options: {
      "api-url": { type: "string", default: "http://127.0.0.1:3000" },
      "lambda-url": { type: "string", default: "http://127.0.0.1:3001" },
      user: { type: "string", default: "ana" },
      "openai-base-url": { type: "string" },
      model: { type: "string" },
    },
  });
  if (values["openai-base-url"] !== undefined && values.model === undefined) {
    throw new Error("--openai-base-url needs --model (the server's model name)");
  }
  await runExample({
    apiUrl: values["api-url"],
    lambdaUrl: values["lambda-url"],
    user: values.user,
    ...(values["openai-base-url"] !== undefined && { openaiBaseUrl: values["openai-base-url"] }),
    ...(values.model !== undefined && { model: values.model }),
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
