/**
 * The fence: stored text made safe to hand to a model, by the service's own rule (the one its
 * `system_prompt` applies to every note and to the document).
 *
 * Notes and the document are written by people and by models that may themselves have been
 * prompt-injected, so a note or a document in a tool result must not be able to close the tool result it
 * travels in or forge a tag of the prompt: every `<` becomes `&lt;`, an `&` that starts something
 * entity-like becomes `&amp;` (so the escaping is exactly reversible), and a note, rendered as one line, has
 * its line breaks turned into spaces. `test/fence.test.ts` checks both functions against the service's own,
 * on adversarial texts, and every tool result of the conversation helper and its formats against a hostile
 * note.
 */

// Every character Python's str.splitlines() breaks on, plus the tab, as the service's rule lists them.
const LINE_BREAKS = /[\n\r\t\v\f\x1c\x1d\x1e\x85\u2028\u2029]/g;
const ENTITY_LIKE = /&(?=#?[A-Za-z0-9]+;)/g;
// The one field of a tool answer that is a whole text, fenced as a block keeps its lines: the document's content.
const BLOCK_FIELDS = new Set(["content"]);

/** `text` made safe to place inside a block: it can contain no tag, whatever it held. */
export function fence(text: string): string {
  return text.replace(ENTITY_LIKE, "&amp;").replaceAll("<", "&lt;");
}

/** A stored text rendered as one line (a note): one line, fenced. */
export function fenceLine(text: string): string {
  return fence(text.replace(LINE_BREAKS, " "));
}

/**
 * A copy of a tool's answer (`remember`, `update_memory`, `recall`, or any tool the service adds) with every
 * string fenced: the document's `content` as a block, every other string as one line. Every string rather
 * than the fields known today to hold stored text, so that a field or a tool the service adds later reaches
 * the model fenced too; ids, days, modes and counts hold nothing the fence changes.
 */
export function fencedAnswer<T>(answer: T): T {
  const walk = (value: unknown, key?: string): unknown => {
    if (typeof value === "string") return key !== undefined && BLOCK_FIELDS.has(key) ? fence(value) : fenceLine(value);
    if (Array.isArray(value)) return value.map((item) => walk(item));
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, walk(item, name)]));
    }
    return value;
  };
  return walk(answer) as T;
}
