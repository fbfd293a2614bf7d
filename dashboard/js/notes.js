// The Recent notes tab: days newest first with their notes, "Load older" by day (next_before), search
// (semantic, keyword fallback; the answer's mode shown discreetly), and delete behind a confirm dialog.
// Each note shows where it came from (its thread, linked to what that thread's turns were shown) and, on
// request, the turns it was injected into (docs/api.md §6 injections, kept MEMORY_INJECTION_TTL_DAYS).
// A superseded note (a consolidation replaced the line it was cited for) is struck through, with links to
// the notes that replaced it.

import { memoryBase, query } from './api.js';
import { busy, confirmDialog, el, formatCount, formatDay, say, timeEl } from './ui.js';

const DAYS_PER_PAGE = 2;
const TURN_PAGES = 5; // "Turns that saw this note" reads at most this many pages of 100 injection records

/** The Your data tab of this memory, its turns narrowed to one thread. */
export function threadHref(threadId) {
  const url = new URL(window.location.href);
  url.search = query({ tab: 'data', thread: threadId });
  return `${url.pathname}${url.search}`;
}

/** The turns whose injection record holds `noteId`, newest first; `complete` false when pages were left. */
async function turnsThatSaw(api, base, noteId) {
  const turns = [];
  let cursor = null;
  for (let page = 0; page < TURN_PAGES; page += 1) {
    const answer = await api.request('GET', `${base}/injections${query({ limit: 100, cursor })}`);
    turns.push(...answer.injections.filter((turn) => turn.note_ids.includes(noteId)));
    cursor = answer.next_cursor;
    if (!cursor) return { turns, complete: true };
  }
  return { turns, complete: false };
}
/** The day after `day` (YYYY-MM-DD, UTC). */
function nextDay(day) {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + 1);
  return date.toISOString().slice(0, 10);
}

/**
 * The notes of these ids (`<day>.<position>`), read from the day listing, 31 days that have notes a page,
 * from the newest id's day down to the oldest's: a Map of id to note. An id no longer listed (the note was
 * deleted) is left out.
 */
export async function notesById(api, base, ids) {
  const wanted = new Set(ids);
  const found = new Map();
  if (!wanted.size) return found;
  const days = [...wanted].map((id) => id.split('.')[0]).sort();
  let before = nextDay(days[days.length - 1]);
  while (before && before > days[0] && found.size < wanted.size) {
    const answer = await api.request('GET', `${base}/notes${query({ before, days: 31 })}`);
    for (const day of answer.days) for (const note of day.notes) if (wanted.has(note.id)) found.set(note.id, note);
    before = answer.next_before;
  }
  return found;
}

const MODES = { semantic: 'semantic search', hybrid: 'hybrid search', keyword: 'keyword search' };

export function renderNotes(panel, { api, memory }) {
  const base = memoryBase(memory);
  const status = el('div', { role: 'status', id: 'notes-status', class: 'message', hidden: true });
  const error = el('div', { role: 'alert', id: 'notes-error', hidden: true });
  const daysList = el('div', { id: 'notes-days', class: 'days' });
  const older = el('button', { type: 'button', id: 'notes-older', class: 'secondary', hidden: true }, 'Load older');
  const end = el('p', { id: 'notes-end', class: 'muted', hidden: true, tabindex: '-1' }, 'No older notes.');
  let nextBefore = null;

  // --- delete ---
  async function remove(note, item, button) {
    const ok = await confirmDialog({
      title: 'Delete this note?',
      text: `“${note.text}” is removed from this memory at once: from this list, from search and from what the agent sees. This cannot be undone.`,
      confirmLabel: 'Delete note',
    });
    if (!ok) return;
    busy(button, true);
    let goneAlready = null;
    try {
      await api.request('DELETE', `${base}/notes/${encodeURIComponent(note.id)}`);
    } catch (failure) {
      if (failure.status !== 404) {
        busy(button, false);
        say(error, failure.message, 'error');
        button.focus();
        return;
      }
      goneAlready = failure; // deleted meanwhile (another tab, a teammate): say so, and drop it here too
    }
    // Gone at once, from every list it appears in (the day listing and search results).
    const next = focusTargetAfter(item);
    for (const node of panel.querySelectorAll(`li[data-note-id="${CSS.escape(note.id)}"]`)) {
      const list = node.parentElement;
      node.remove();
      if (list && !list.children.length) {
        const day = list.closest('.day');
        if (day) day.remove();
        else list.append(el('li', { class: 'empty' }, 'No notes left here.'));
      }
    }
    if (goneAlready) {
      say(error, goneAlready.message, 'error');
      say(status, '');
    } else {
      say(error, '');
      say(status, 'Note deleted.', 'success');
    }
    (next && next.isConnected ? next : panel.querySelector('#notes-heading')).focus();
  }

  function focusTargetAfter(item) {
    const sibling = item.nextElementSibling || item.previousElementSibling;
    if (sibling?.querySelector('button.danger')) return sibling.querySelector('button.danger');
    const day = item.closest('.day');
    const otherDay = day?.nextElementSibling || day?.previousElementSibling;
    return otherDay?.querySelector('button.danger') || null;
  }

  function seenIn(note, item) {
    const region = el('div', { class: 'note-turns', id: `turns-${note.id}`, hidden: true, role: 'region', 'aria-label': `Turns that saw the note ${note.id}` });
    const button = el('button', {
      type: 'button', class: 'secondary small note-turns-toggle', 'aria-expanded': 'false', 'aria-controls': region.id,
      'aria-label': `Turns that saw it: ${note.text.slice(0, 80)}`,
      onclick: async () => {
        if (!region.hidden) {
          region.hidden = true;
          button.setAttribute('aria-expanded', 'false');
          return;
        }
        busy(button, true);
        try {
          const { turns, complete } = await turnsThatSaw(api, base, note.id);
          const rows = turns.map((turn) => el('li', {}, timeEl(turn.at), ' in ',
            el('a', { href: threadHref(turn.thread_id), 'data-route': true }, `thread ${turn.thread_id}`),
            ` (document version ${turn.document_version})`));
          region.replaceChildren(
            el('p', {}, turns.length
              ? `Put in front of the model in ${formatCount(turns.length)} ${turns.length === 1 ? 'turn' : 'turns'}:`
              : 'No recorded turn was shown this note (turns are recorded for a limited time).'),
            rows.length ? el('ul', { class: 'plain' }, rows) : null,
            complete ? null : el('p', { class: 'muted' }, `Only the newest ${TURN_PAGES * 100} turns were searched.`));
          region.hidden = false;
          button.setAttribute('aria-expanded', 'true');
        } catch (failure) {
          say(error, failure.message, 'error');
        } finally {
          busy(button, false);
        }
      },
    }, 'Turns that saw it');
    return [button, region];
  }

  // --- superseded notes: struck through, with links to the notes that replaced them ---
  async function goTo(id, link) {
    let target = daysList.querySelector(`[id="note-${CSS.escape(id)}"]`);
    while (!target && nextBefore) {
      busy(link, true);
      try {
        await loadDays(nextBefore);
      } finally {
        busy(link, false);
      }
      target = daysList.querySelector(`[id="note-${CSS.escape(id)}"]`);
    }
    if (!target) {
      say(error, 'The note that replaced it is no longer in this memory.', 'error');
      return;
    }
    target.scrollIntoView({ block: 'center' });
    target.focus();
  }

  function replacedBy(note) {
    const links = note.superseded_by.map((id) => el('a', {
      href: `#note-${id}`, class: 'replacement', 'data-replacement-id': id,
      onclick: (event) => { event.preventDefault(); goTo(id, event.currentTarget); },
    }, `a note of ${formatDay(id.split('.')[0])}`));
    notesById(api, base, note.superseded_by).then((found) => {
      for (const link of links) {
        const replacement = found.get(link.dataset.replacementId);
        if (replacement) link.replaceChildren(`“${replacement.text}” (`, timeEl(replacement.created_at), ')');
      }
    }, () => {}); // the links still work with their days as text
    const parts = links.flatMap((link, index) => (index ? [', ', link] : [link]));
    return el('p', { class: 'superseded-by' }, 'Out of date, replaced in the document by ', ...parts);
  }

  function noteItem(note, { withDay = false, score } = {}) {
    // In the day listing each note is a target of the links from the notes it replaced.
    const item = el('li', { class: 'note', 'data-note-id': note.id, id: withDay ? null : `note-${note.id}`, tabindex: withDay ? null : '-1' });
    const del = el('button', {
      type: 'button', class: 'danger small', 'aria-label': `Delete note: ${note.text.slice(0, 80)}`,
      onclick: () => remove(note, item, del),
    }, 'Delete');
    const [turnsButton, turns] = seenIn(note, item);
    item.append(
      timeEl(note.created_at, { timeOnly: !withDay }),
      el('p', { class: 'note-text' }, note.superseded_by ? el('del', {}, note.text) : note.text),
      el('span', { class: 'note-meta' },
        el('span', { class: `badge source-${note.source}` }, note.source),
        note.consolidated ? el('span', { class: 'badge' }, 'consolidated') : null,
        note.origin ? el('a', { class: 'note-origin', href: threadHref(note.origin.thread_id), 'data-route': true,
          title: `What the turns of thread ${note.origin.thread_id} were shown` }, `from thread ${note.origin.thread_id}`) : null,
        score !== undefined ? el('span', { class: 'muted' }, `score ${Number(score).toFixed(2)}`) : null),
      el('span', { class: 'row-actions' }, turnsButton, del),
      note.superseded_by ? replacedBy(note) : null,
      turns,
    );
    return item;
  }

  function daySection(day) {
    const headingId = `day-${day.day}`;
    return el('section', { class: 'day', 'aria-labelledby': headingId, 'data-day': day.day },
      el('h4', { id: headingId }, formatDay(day.day)),
      el('ul', { class: 'notes' }, day.notes.map((note) => noteItem(note))));
  }

  async function loadDays(before) {
    say(error, '');
    busy(older, true);
    try {
      const answer = await api.request('GET', `${base}/notes${query({ before, days: DAYS_PER_PAGE })}`);
      const firstNew = answer.days.length ? daySection(answer.days[0]) : null;
      daysList.append(...(firstNew ? [firstNew] : []), ...answer.days.slice(1).map(daySection));
      if (!before && !answer.days.length) daysList.append(el('p', { class: 'empty' }, 'No notes yet.'));
      nextBefore = answer.next_before;
      older.hidden = !nextBefore;
      end.hidden = Boolean(nextBefore) || !daysList.querySelector('.day');
      if (before && firstNew) firstNew.querySelector('h4').setAttribute('tabindex', '-1');
      return firstNew;
    } catch (failure) {
      say(error, failure.message, 'error');
      return null;
    } finally {
      busy(older, false);
    }
  }

  older.addEventListener('click', async () => {
    const first = await loadDays(nextBefore);
    if (first) first.querySelector('h4').focus(); // keyboard users land on the first older day
    else if (older.hidden) end.focus();
  });

  // --- search ---
  const searchInput = el('input', { type: 'search', id: 'notes-search', name: 'q', maxlength: 2000, autocomplete: 'off' });
  const searchButton = el('button', { type: 'submit' }, 'Search');
  const clear = el('button', { type: 'button', class: 'secondary', hidden: true }, 'Clear search');
  const results = el('section', { id: 'search-results', class: 'search-results', hidden: true, 'aria-labelledby': 'results-title' });

  async function search(event) {
    event.preventDefault();
    const q = searchInput.value.trim();
    if (!q) {
      say(error, 'Type what to search for.', 'error');
      searchInput.focus();
      return;
    }
    say(error, '');
    busy(searchButton, true);
    try {
      const answer = await api.request('GET', `${base}/notes/search${query({ q, k: 20 })}`);
      const list = el('ul', { class: 'notes' }, answer.notes.map((note) => noteItem(note, { withDay: true, score: note.score })));
      if (!answer.notes.length) list.append(el('li', { class: 'empty' }, 'No note matches.'));
      results.replaceChildren(
        el('h4', { id: 'results-title', tabindex: '-1' },
          `${answer.notes.length} ${answer.notes.length === 1 ? 'note' : 'notes'} for “${q}”`,
          el('span', { class: 'mode', id: 'search-mode', title: 'How this search was answered' }, MODES[answer.mode] || answer.mode)),
        list,
      );
      results.hidden = false;
      clear.hidden = false;
      results.querySelector('h4').focus();
    } catch (failure) {
      say(error, failure.message, 'error');
    } finally {
      busy(searchButton, false);
    }
  }
  clear.addEventListener('click', () => {
    results.hidden = true;
    results.replaceChildren();
    clear.hidden = true;
    searchInput.value = '';
    searchInput.focus();
  });

  panel.replaceChildren(
    el('form', { role: 'search', class: 'search', onsubmit: search },
      el('label', { for: 'notes-search' }, 'Search notes'),
      el('div', { class: 'search-row' }, searchInput, searchButton, clear)),
    status, error, results,
    el('h3', { id: 'notes-heading', tabindex: '-1' }, 'Notes by day'),
    daysList, older, end,
  );
  return loadDays(null);
}
