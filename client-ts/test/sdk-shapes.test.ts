/**
 * The tool shapes, checked by each provider's own SDK rather than by our expectations.
 *
 * At compile time (`npm test` runs tsc first): each format is assigned to the SDK's own request type and
 * passed to the SDK's own call (`chat.completions.create`, `responses.create`, `messages.create`,
 * `ConverseCommand`, `generateText`); the `@ts-expect-error` lines prove the check bites on a wrong shape.
 * At run time: each SDK serializes the request offline (a fetch that answers for the provider, a
 * middleware that stops Bedrock's request before it leaves), and the tools it would send are the service's
 * `GET /v1/tools`, unchanged. The AI SDK runs a whole tool loop with a scripted model against the stack.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import Anthropic from "@anthropic-ai/sdk";
import type { Tool as AnthropicTool } from "@anthropic-ai/sdk/resources/messages";
import { BedrockRuntimeClient, ConverseCommand, type Tool as BedrockTool } from "@aws-sdk/client-bedrock-runtime";
import { generateText, stepCountIs, type ToolSet } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import OpenAI from "openai";
import type { ChatCompletionTool } from "openai/resources/chat/completions";
import type { FunctionTool } from "openai/resources/responses/responses";

import { Conversation, MemoryClient, type ToolDefinition } from "../src/index.js";
import { api, lambda, needsStack, unique } from "./support/stack.js";

/** A fetch standing in for a provider's API: keeps each request's JSON body and answers `answer`. */
function provider(answer: unknown) {
  const bodies: Record<string, unknown>[] = [];
  const fetch: typeof globalThis.fetch = async (_input, init) => {
    bodies.push(JSON.parse(String(init?.body)));
    return new Response(JSON.stringify(answer), { status: 200, headers: { "content-type": "application/json" } });
  };
  return { bodies, fetch };
}

function conversation(user: string): Conversation {
  return new Conversation(new MemoryClient(api(), { lambdaEndpoint: lambda() }), { user_id: user, thread_id: "t-1" });
}

/** `{name, description, parameters}` of each tool, as `GET /v1/tools` serves them. */
const served = (tools: ToolDefinition[]) =>
  tools.map(({ name, description, parameters }) => ({ name, description, parameters }));

test("OpenAI Chat Completions and Responses: the SDK's own types and requests", needsStack, async () => {
  const memory = conversation(unique("ts-openai"));
  const chat: ChatCompletionTool[] = await memory.tools({ format: "openai-chat" });
  const responses: FunctionTool[] = await memory.tools({ format: "openai-responses" });
  // @ts-expect-error Anthropic's shape is not a Chat Completions tool
  const wrong: ChatCompletionTool[] = await memory.tools({ format: "anthropic" });
  assert.ok(wrong);

  const completion = {
    id: "c-1",
    object: "chat.completion",
    created: 0,
    model: "gpt-test",
    choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  };
  const chatApi = provider(completion);
  const openai = new OpenAI({ apiKey: "test", baseURL: "http://openai.invalid/v1", fetch: chatApi.fetch });
  await openai.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }], tools: chat });
  const responsesApi = provider({ id: "r-1", object: "response", created_at: 0, status: "completed", output: [] });
  const openaiResponses = new OpenAI({
    apiKey: "test",
    baseURL: "http://openai.invalid/v1",
    fetch: responsesApi.fetch,
  });
  await openaiResponses.responses.create({ model: "gpt-test", input: "hi", tools: responses });

  const definitions = served(await memory.toolDefinitions());
  const sentChat = chatApi.bodies[0]!["tools"] as { type: string; function: unknown }[];
  assert.deepEqual(
    sentChat.map((tool) => tool.type),
    ["function", "function", "function"],
  );
  assert.deepEqual(
    sentChat.map((tool) => tool.function),
    definitions,
  );
  const sentResponses = responsesApi.bodies[0]!["tools"] as Record<string, unknown>[];
  assert.deepEqual(
    sentResponses.map(({ type, strict, ...tool }) => [type, strict, tool]),
    definitions.map((tool) => ["function", false, tool]),
  );
});

test("Anthropic Messages: the SDK's own type and request", needsStack, async () => {
  const memory = conversation(unique("ts-anthropic"));
  const tools: AnthropicTool[] = await memory.tools({ format: "anthropic" });
  // @ts-expect-error Bedrock's shape is not an Anthropic tool
  const wrong: AnthropicTool[] = await memory.tools({ format: "bedrock" });
  assert.ok(wrong);

  const messagesApi = provider({
    id: "m-1",
    type: "message",
    role: "assistant",
    model: "claude-test",
    content: [{ type: "text", text: "ok" }],
    stop_reason: "end_turn",
    usage: { input_tokens: 1, output_tokens: 1 },
  });
  const anthropic = new Anthropic({ apiKey: "test", baseURL: "http://anthropic.invalid", fetch: messagesApi.fetch });
  await anthropic.messages.create({
    model: "claude-test",
    max_tokens: 64,
    messages: [{ role: "user", content: "hi" }],
    tools,
  });

  const sent = messagesApi.bodies[0]!["tools"] as { name: string; description: string; input_schema: unknown }[];
  assert.deepEqual(
    sent.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.input_schema })),
    served(await memory.toolDefinitions()),
  );
});

test("Bedrock Converse: the SDK's own type, serialized by the SDK", needsStack, async () => {
  const memory = conversation(unique("ts-bedrock"));
  const tools: BedrockTool[] = await memory.tools({ format: "bedrock" });
  // @ts-expect-error OpenAI's shape is not a Converse tool
  const wrong: BedrockTool[] = await memory.tools({ format: "openai-chat" });
  assert.ok(wrong);

  const bedrock = new BedrockRuntimeClient({
    region: "us-east-1",
    credentials: { accessKeyId: "x", secretAccessKey: "y" },
  });
  let body = "";
  const stop = new Error("captured before sending");
  bedrock.middlewareStack.add(
    () => async (args) => {
      body = new TextDecoder().decode((args.request as { body: Uint8Array }).body);
      throw stop;
    },
    { step: "finalizeRequest" },
  );
  const command = new ConverseCommand({
    modelId: "anthropic.claude-3-5-haiku-20241022-v1:0",
    messages: [{ role: "user", content: [{ text: "hi" }] }],
    toolConfig: { tools, toolChoice: { auto: {} } },
  });
  await assert.rejects(bedrock.send(command), (error) => error === stop);

  const sent = (JSON.parse(body) as { toolConfig: { tools: { toolSpec: Record<string, unknown> }[] } }).toolConfig
    .tools;
  assert.deepEqual(
    sent.map(({ toolSpec }) => ({
      name: toolSpec["name"],
      description: toolSpec["description"],
      parameters: (toolSpec["inputSchema"] as { json: unknown }).json,
    })),
    served(await memory.toolDefinitions()),
  );
});

test("the Vercel AI SDK: generateText runs the memory tools with the conversation's identity", needsStack, async () => {
  const user = unique("ts-vercel");
  const memory = conversation(user);
  const tools: ToolSet = await memory.tools({ format: "vercel-ai" });
  // @ts-expect-error a list of tools is not the AI SDK's ToolSet
  const wrong: ToolSet = await memory.tools({ format: "openai-chat" });
  assert.ok(wrong);

  const finish = { unified: "tool-calls", raw: undefined } as const;
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 1, text: 1, reasoning: 0 },
  };
  const call = (id: string, toolName: string, input: unknown) =>
    ({ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) }) as const;
  const model = new MockLanguageModelV3({
    doGenerate: [
      {
        content: [
          call("c-1", "remember", { text: "Prefers metric units" }),
          call("c-2", "remember", { text: "x", user_id: "someone-else" }),
        ],
        finishReason: finish,
        usage,
        warnings: [],
      },
      {
        content: [{ type: "text", text: "Noted." }],
        finishReason: { unified: "stop", raw: undefined },
        usage,
        warnings: [],
      },
    ],
  });
  const result = await generateText({
    model,
    system: await memory.systemPrompt(),
    prompt: "I prefer metric units.",
    tools,
    stopWhen: stepCountIs(3),
  });

  assert.equal(result.text, "Noted.");
  const outputs = result.steps[0]!.toolResults.map((toolResult) => toolResult.output as Record<string, unknown>);
  assert.equal((outputs[0]!["note"] as { text: string }).text, "Prefers metric units");
  assert.equal((outputs[1]!["error"] as { code: string }).code, "invalid_input");
  const context = await new MemoryClient(api()).getContext({ user_id: user, thread_id: "t-2" });
  assert.deepEqual(
    context.recent_notes.map((note) => note.text),
    ["Prefers metric units"],
  );
  const offered = model.doGenerateCalls[0]!.tools as {
    type: string;
    name: string;
    description: string;
    inputSchema: unknown;
  }[];
  assert.deepEqual(
    offered.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.inputSchema })),
    served(await memory.toolDefinitions()),
  );
});
