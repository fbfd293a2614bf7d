/** The conversation context as the API takes it. */

import type { ConversationContext } from "./types.js";

/** `context` as JSON: `visibility` defaulted to `"private"`, unset (undefined or null) keys left out. */
export function contextJson(context: ConversationContext): Record<string, unknown> {
  const json: Record<string, unknown> = { visibility: "private" };
  for (const [key, value] of Object.entries(context)) if (value !== undefined && value !== null) json[key] = value;
  return json;
}
