// A line diff (Myers' O(ND) algorithm) and its side-by-side table: two versions of a document, or the
// editor's text against the server's after a 409. Written here rather than taken from npm: about a hundred
// lines, no dependency to pin, audit and serve, and the table needs our own markup anyway.
//
// Every line reaches the page as a text node (el() never parses HTML): a document holding <script> or
// markup shows it as text.

import { el, formatCount } from './ui.js';

const MAX_EDITS = 2000; // beyond this many changed lines, the two texts are shown as replaced whole
const CONTEXT = 3; // unchanged lines kept around each change; longer unchanged runs fold into one row

const same = (text) => ({ op: 'same', text });
const del = (text) => ({ op: 'del', text });
const add = (text) => ({ op: 'add', text });

function lines(text) {
  return text ? text.split('\n') : [];
}

function backtrack(a, b, trace, x, y) {
  const out = [];
  for (let d = trace.length - 1; d > 0; d -= 1) {
    const v = trace[d];
    const k = x - y;
    const prevK = k === -d || (k !== d && v.get(k - 1) < v.get(k + 1)) ? k + 1 : k - 1;
    const prevX = v.get(prevK);
    const prevY = prevX - prevK;
    for (; x > prevX && y > prevY; x -= 1, y -= 1) out.push(same(a[x - 1]));
    out.push(x === prevX ? add(b[prevY]) : del(a[prevX]));
    x = prevX;
    y = prevY;
  }
  for (; x > 0 && y > 0; x -= 1, y -= 1) out.push(same(a[x - 1]));
  return out.reverse();
}

function myers(a, b) {
  const n = a.length;
  const m = b.length;
  if (!n || !m) return [...a.map(del), ...b.map(add)];
  const v = new Map([[1, 0]]);
  const trace = [];
  for (let d = 0; d <= Math.min(n + m, MAX_EDITS); d += 1) {
    trace.push(new Map(v));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v.get(k - 1) < v.get(k + 1)) ? v.get(k + 1) : v.get(k - 1) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x += 1;
        y += 1;
      }
      v.set(k, x);
      if (x >= n && y >= m) return backtrack(a, b, trace, x, y);
    }
  }
  return [...a.map(del), ...b.map(add)];
}

/** The operations turning `before` into `after`, line by line: [{op: 'same'|'del'|'add', text}]. */
export function diffLines(before, after) {
  const a = lines(before);
  const b = lines(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  return [...a.slice(0, start).map(same), ...myers(a.slice(start, endA), b.slice(start, endB)), ...a.slice(endA).map(same)];
}

/** Rows of the side-by-side view: a removed line faces the added line that replaced it. */
function rows(ops) {
  const out = [];
  let left = 0;
  let right = 0;
  let removed = [];
  let added = [];
  const pair = () => {
    for (let i = 0; i < Math.max(removed.length, added.length); i += 1) {
      out.push({ kind: 'change', left: removed[i] || null, right: added[i] || null });
    }
    removed = [];
    added = [];
  };
  for (const op of ops) {
    if (op.op === 'same') {
      pair();
      left += 1;
      right += 1;
      out.push({ kind: 'same', left: { n: left, text: op.text }, right: { n: right, text: op.text } });
    } else if (op.op === 'del') {
      left += 1;
      removed.push({ n: left, text: op.text });
    } else {
      right += 1;
      added.push({ n: right, text: op.text });
    }
  }
  pair();
  return out;
}

/** Unchanged runs longer than the context fold into one row ("12 unchanged lines"). */
function folded(all) {
  const near = all.map((row, i) => row.kind !== 'same'
    || all.slice(Math.max(0, i - CONTEXT), i + CONTEXT + 1).some((other) => other.kind !== 'same'));
  const out = [];
  for (let i = 0; i < all.length; i += 1) {
    if (near[i]) {
      out.push(all[i]);
      continue;
    }
    let j = i;
    while (j < all.length && !near[j]) j += 1;
    out.push({ kind: 'fold', count: j - i });
    i = j - 1;
  }
  return out;
}

function cells(side, kind) {
  if (!side) return [el('td', { class: 'diff-n' }), el('td', { class: 'diff-empty' })];
  const mark = kind === 'del' ? el('del', {}, side.text) : kind === 'add' ? el('ins', {}, side.text) : side.text;
  return [el('td', { class: 'diff-n' }, String(side.n)), el('td', { class: `diff-${kind}` }, mark)];
}

/** A side-by-side table of `before` (left) against `after` (right), with a one-line summary above it. */
export function diffView(before, after, { id, leftTitle, rightTitle, caption }) {
  const ops = diffLines(before, after);
  const removedCount = ops.filter((op) => op.op === 'del').length;
  const addedCount = ops.filter((op) => op.op === 'add').length;
  const summary = removedCount || addedCount
    ? `${formatCount(removedCount)} ${removedCount === 1 ? 'line' : 'lines'} removed, ${formatCount(addedCount)} added`
    : 'No difference: the two texts are the same.';
  const body = el('tbody', {}, folded(rows(ops)).map((row) => {
    if (row.kind === 'fold') {
      return el('tr', { class: 'diff-fold' }, el('td', { colspan: '4' }, `${formatCount(row.count)} unchanged ${row.count === 1 ? 'line' : 'lines'}`));
    }
    const kind = row.kind === 'same' ? 'same' : null;
    return el('tr', { class: `diff-${row.kind}` }, ...cells(row.left, kind || 'del'), ...cells(row.right, kind || 'add'));
  }));
  return el('div', { class: 'diff', id },
    el('p', { class: 'diff-summary' }, summary),
    removedCount || addedCount ? el('div', { class: 'diff-scroll', tabindex: '0', role: 'region', 'aria-label': caption },
      el('table', { class: 'diff-table' },
        el('caption', { class: 'visually-hidden' }, caption),
        el('thead', {}, el('tr', {},
          el('th', { scope: 'col', class: 'diff-n' }, 'Line'), el('th', { scope: 'col' }, leftTitle),
          el('th', { scope: 'col', class: 'diff-n' }, 'Line'), el('th', { scope: 'col' }, rightTitle))),
        body)) : null);
}
