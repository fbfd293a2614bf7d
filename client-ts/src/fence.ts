/**
 * The fence: stored text made safe to hand to a model, by the service's own rule (the one its
 * `system_prompt` applies to every note and to the document).
 *
 * Notes and the document are written by people and by models that may themselves have been
 * prompt-injected, so a recalled note must not be able to close the tool result it travels in or forge
 * a tag of the prompt: every `<` becomes `&lt;`, an `&` that starts something entity-like becomes `&amp;`
 * (so the escaping is exactly reversible), and a note, rendered as one line, has its line breaks turned
 * into spaces. `test/fence.test.ts` checks both functions against the service's own, on adversarial texts.
 */

// Every character Python's str.splitlines() breaks on, plus the tab, as the service's rule lists them.
const LINE_BREAKS = /[\n\r\t\v\f\x1c\x1d\x1e\x85\u2028\u2029]/g;
const ENTITY_LIKE = /&(?=#?[A-Za-z0-9]+;)/g;

/** `text` made safe to place inside a block: it can contain no tag, whatever it held. */
export function fence(text: string): string {
  return text.replace(ENTITY_LIKE, "&amp;").replaceAll("<", "&lt;");
}

/** A stored text rendered as one line (a note): one line, fenced. */
export function fenceLine(text: string): string {
  return fence(text.replace(LINE_BREAKS, " "));
}
