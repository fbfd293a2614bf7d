/**
 * The tool definitions of `GET /v1/tools` in each model provider's request shape (never hand-copied).
 *
 * - `openai-chat` (Chat Completions `tools`): `{type: "function", function: {name, description, parameters}}`;
 * - `openai-responses` (Responses `tools`): `{type: "function", name, description, parameters, strict: false}`;
 * - `anthropic` (Messages `tools`): `{name, description, input_schema}`;
 * - `bedrock` (Converse `toolConfig.tools`): `{toolSpec: {name, description, inputSchema: {json}}}`;
 * - `vercel-ai` (the AI SDK's `tools` of `generateText`/`streamText`): `{[name]: {description, inputSchema,
 *   execute}}`, the object `tool()` returns, with the schema as a Standard JSON Schema (the vendor-neutral
 *   interface the AI SDK reads, so the `ai` package is not needed at run time) and `execute` running the call
 *   with the conversation's context.
 *
 * The first four are the Python client's shapes, byte for byte (a test compares them). `strict` is false for
 * OpenAI: strict mode wants every property required, and `recall`'s `k` is optional; the service checks the
 * arguments strictly itself.
 */

import type { ToolDefinition } from "./types.js";

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A tool's `parameters`: a JSON Schema of an object (the service serves nothing else). */
export interface JsonSchemaObject {
  type: "object";
  [keyword: string]: JsonValue;
}

export interface OpenAIChatTool {
  type: "function";
  function: { name: string; description: string; parameters: JsonSchemaObject };
}

export interface OpenAIResponsesTool {
  type: "function";
  name: string;
  description: string;
  parameters: JsonSchemaObject;
  strict: false;
}

export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonSchemaObject;
}

export interface BedrockTool {
  toolSpec: { name: string; description: string; inputSchema: { json: JsonSchemaObject } };
}

/** A Standard Schema (standardschema.dev) with its JSON Schema: what the AI SDK takes as `inputSchema`. */
export interface StandardJsonSchema {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => { value: Record<string, unknown> } | { issues: { message: string }[] };
    readonly jsonSchema: {
      readonly input: (options: { target: string }) => JsonSchemaObject;
      readonly output: (options: { target: string }) => JsonSchemaObject;
    };
  };
}

export interface VercelAITool<Result> {
  description: string;
  inputSchema: StandardJsonSchema;
  execute: (input: Record<string, unknown>) => Promise<Result>;
}

/** What `tools({format})` resolves to, per format. */
export interface ToolShapes<Result = unknown> {
  "openai-chat": OpenAIChatTool[];
  "openai-responses": OpenAIResponsesTool[];
  anthropic: AnthropicTool[];
  bedrock: BedrockTool[];
  "vercel-ai": Record<string, VercelAITool<Result>>;
}
export type ToolFormat = keyof ToolShapes;
export const FORMATS: readonly ToolFormat[] = ["openai-chat", "openai-responses", "anthropic", "bedrock", "vercel-ai"];

/** A tool's parameters, checked to be an object schema (and copied: a caller may edit the result freely). */
function parametersOf(tool: ToolDefinition): JsonSchemaObject {
  const parameters = structuredClone(tool.parameters) as JsonSchemaObject;
  if (parameters.type !== "object") throw new TypeError(`the tool ${tool.name} takes no JSON object`);
  return parameters;
}

/** `parameters` as a Standard JSON Schema; validation only checks for an object (the service checks the rest). */
function standardJsonSchema(parameters: JsonSchemaObject): StandardJsonSchema {
  return {
    "~standard": {
      version: 1,
      vendor: "agent-memory",
      validate: (value) =>
        typeof value === "object" && value !== null && !Array.isArray(value)
          ? { value: value as Record<string, unknown> }
          : { issues: [{ message: "the tool arguments must be a JSON object" }] },
      jsonSchema: { input: () => structuredClone(parameters), output: () => structuredClone(parameters) },
    },
  };
}

/** Each tool in `format`'s shape; `run` executes a call (the `vercel-ai` shape's `execute`). */
export function convert<F extends ToolFormat, Result>(
  tools: ToolDefinition[],
  format: F,
  run: (name: string, input: Record<string, unknown>) => Promise<Result>,
): ToolShapes<Result>[F] {
  const described = tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    schema: parametersOf(tool),
  }));
  const shapes: { [K in ToolFormat]: () => ToolShapes<Result>[K] } = {
    "openai-chat": () =>
      described.map(({ name, description, schema }) => ({
        type: "function",
        function: { name, description, parameters: schema },
      })),
    "openai-responses": () =>
      described.map(({ name, description, schema }) => ({
        type: "function",
        name,
        description,
        parameters: schema,
        strict: false,
      })),
    anthropic: () => described.map(({ name, description, schema }) => ({ name, description, input_schema: schema })),
    bedrock: () =>
      described.map(({ name, description, schema }) => ({
        toolSpec: { name, description, inputSchema: { json: schema } },
      })),
    "vercel-ai": () =>
      Object.fromEntries(
        described.map(({ name, description, schema }) => [
          name,
          { description, inputSchema: standardJsonSchema(schema), execute: (input) => run(name, input) },
        ]),
      ),
  };
  const shape = shapes[format];
  if (shape === undefined)
    throw new RangeError(`unknown tool format ${JSON.stringify(format)}; one of ${FORMATS.join(", ")}`);
  return shape();
}
