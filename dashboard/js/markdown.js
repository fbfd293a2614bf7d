// A Markdown preview of the curated document: the subset a memory file uses (headings, paragraphs, lists
// with nesting, quotes, fenced code, rules; bold, italic, inline code, links). Written here rather than
// taken from npm: the page has no build step and no runtime dependency, and a library that returns HTML
// would need a sanitizer too. This one never produces HTML: it builds DOM nodes, and every piece of the
// document's text becomes a text node, so markup or a script in the document shows as text.
//
// Links become <a> only for http(s) and mailto addresses; anything else (javascript:, data:) stays text.

import { el } from './ui.js';

// Code spans; **strong** / __strong__; *em* / _em_ (underscores only at word edges, as CommonMark: not in
// snake_case or window.__name); [label](url).
const INLINE = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*(?=\S)([^*]+?)(?<=\S)\*\*|(?<!\w)__(?=\S)([^_]+?)(?<=\S)__(?!\w)|\*(?=\S)([^*]+?)(?<=\S)\*|(?<!\w)_(?=\S)([^_]+?)(?<=\S)_(?!\w)|\[([^\]]+)\]\(([^)\s]+)\)/g;
const SAFE_URL = /^(https?:\/\/|mailto:)/i;

/** Inline Markdown of one block's text, as nodes. */
export function inline(text) {
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    if (match.index > last) nodes.push(text.slice(last, match.index));
    const [whole, , code, strong, strong2, em, em2, label, url] = match;
    if (code !== undefined) nodes.push(el('code', {}, code));
    else if (strong !== undefined || strong2 !== undefined) nodes.push(el('strong', {}, inline(strong ?? strong2)));
    else if (em !== undefined || em2 !== undefined) nodes.push(el('em', {}, inline(em ?? em2)));
    else if (SAFE_URL.test(url)) nodes.push(el('a', { href: url, rel: 'noopener noreferrer nofollow', target: '_blank' }, inline(label)));
    else nodes.push(whole);
    last = match.index + whole.length;
  }
  if (last < text.length) nodes.push(text.slice(last));
  return nodes;
}

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])( *\1){2,}\s*$/;
const FENCE = /^ {0,3}(```|~~~)/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;

/**
 * The document as a fragment of nodes. Headings are shifted by `headingOffset` levels (the preview sits
 * under the page's own headings), never below h6.
 */
export function renderMarkdown(source, { headingOffset = 3 } = {}) {
  const out = document.createDocumentFragment();
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  let paragraph = [];
  let lists = []; // the open lists, outermost first: {indent, node}

  const endParagraph = () => {
    if (paragraph.length) out.append(el('p', {}, inline(paragraph.join(' '))));
    paragraph = [];
  };
  const endLists = () => { lists = []; };

  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i];
    const fence = line.match(FENCE);
    if (fence) {
      endParagraph();
      endLists();
      const code = [];
      for (i += 1; i < lines.length && !lines[i].trimStart().startsWith(fence[1]); i += 1) code.push(lines[i]);
      out.append(el('pre', { class: 'md-code' }, el('code', {}, code.join('\n'))));
      continue;
    }
    if (!line.trim()) {
      endParagraph();
      endLists();
      continue;
    }
    const heading = line.match(HEADING);
    if (heading) {
      endParagraph();
      endLists();
      const level = Math.min(6, heading[1].length + headingOffset);
      out.append(el(`h${level}`, { class: `md-h${heading[1].length}` }, inline(heading[2])));
      continue;
    }
    if (RULE.test(line)) {
      endParagraph();
      endLists();
      out.append(el('hr', {}));
      continue;
    }
    const quote = line.match(QUOTE);
    if (quote) {
      endParagraph();
      endLists();
      const quoted = [quote[1]];
      while (i + 1 < lines.length && QUOTE.test(lines[i + 1])) quoted.push(lines[(i += 1)].match(QUOTE)[1]);
      out.append(el('blockquote', {}, el('p', {}, inline(quoted.join(' ')))));
      continue;
    }
    const item = line.match(ITEM);
    if (item) {
      endParagraph();
      const indent = item[1].replace(/\t/g, '    ').length;
      const tag = /\d/.test(item[2]) ? 'ol' : 'ul';
      while (lists.length && indent < lists[lists.length - 1].indent) lists.pop();
      let open = lists[lists.length - 1];
      if (!open || indent > open.indent || open.node.tagName.toLowerCase() !== tag) {
        const list = el(tag, {});
        const parentItem = open && indent > open.indent ? open.node.lastElementChild : null;
        if (open && indent === open.indent) lists.pop();
        (parentItem || (lists.length ? lists[lists.length - 1].node.lastElementChild : null) || out).append(list);
        open = { indent, node: list };
        lists.push(open);
      }
      open.node.append(el('li', {}, inline(item[3])));
      continue;
    }
    if (lists.length && /^\s+\S/.test(line)) { // a continuation line of the last item
      const last = lists[lists.length - 1].node.lastElementChild;
      last.append(' ', ...inline(line.trim()));
      continue;
    }
    endLists();
    paragraph.push(line.trim());
  }
  endParagraph();
  return out;
}
