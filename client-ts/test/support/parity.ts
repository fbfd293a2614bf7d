/**
 * For `tests/client_ts/test_node_client.py`, which compares the two clients: what this package's
 * `Conversation` gives for one conversation, as JSON on stdout (the tool definitions in every format, the
 * memory block, and a recall's tool result).
 *
 *     node dist/test/support/parity.js <api url> <conversation context as JSON> <recall query>
 */

import { Conversation, FORMATS, MemoryClient, type StandardJsonSchema } from "../../src/index.js";

const [apiUrl, context, query] = process.argv.slice(2);
if (apiUrl === undefined || context === undefined || query === undefined) {
  throw new Error("usage: parity.js <api url> <context json> <recall query>");
}
const conversation = new Conversation(new MemoryClient(apiUrl), JSON.parse(context));
const tools: Record<string, unknown> = {};
for (const format of FORMATS) tools[format] = await conversation.tools({ format });
// The AI SDK's shape holds functions: its JSON Schemas stand for it.
const vercel = tools["vercel-ai"] as Record<string, { description: string; inputSchema: StandardJsonSchema }>;
tools["vercel-ai"] = Object.entries(vercel).map(([name, tool]) => ({
  name,
  description: tool.description,
  parameters: tool.inputSchema["~standard"].jsonSchema.input({ target: "draft-07" }),
}));
const systemPrompt = await conversation.systemPrompt();
const recalled = await conversation.handle("recall", { query });
process.stdout.write(JSON.stringify({ tools, system_prompt: systemPrompt, recall: recalled }));
