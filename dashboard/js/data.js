// "Your data" (docs/api.md §6): usage against the quotas, what the agent sees, the turns it was shown,
// and the person's controls: Export (a download of every page) and Erase (after typing the memory's name).

import { memoryBase, query } from './api.js';
import { threadHref } from './notes.js';
import { busy, el, formatCount, formatInstant, say, timeEl } from './ui.js';

const NOTES_BLOCK_MAX = 4000;

/** The memory block as /v1/context assembles it: the document, then today's and yesterday's notes. */
function preview(document, days) {
  const lines = [];
  let size = '<recent_memory_notes>\n</recent_memory_notes>'.length;
  for (const day of days) {
    for (const note of day.notes) {
      const line = `- [${note.day} #${note.position}] ${note.text}`;
      if (size + line.length + 1 > NOTES_BLOCK_MAX) continue;
      size += line.length + 1;
      lines.push(line);
    }
  }
  const parts = [];
  if (document.content) parts.push(document.content);
  if (lines.length) parts.push(['<recent_memory_notes>', ...lines, '</recent_memory_notes>'].join('\n'));
  return parts.join('\n\n') || '(nothing: the agent sees no memory yet)';
}

function meter(id, label, value, max) {
  return el('div', { class: 'usage' },
    el('label', { for: id }, `${label}: ${formatCount(value)} of ${formatCount(max)}`),
    el('meter', { id, min: '0', max: String(max), value: String(value), high: String(Math.floor(max * 0.9)) }));
}

function download(name, data) {
  const url = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }));
  const link = el('a', { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function renderData(panel, { api, memory, user }) {
  const base = memoryBase(memory);
  const name = memory.kind === 'personal' ? 'my memory' : memory.workspace;
  const status = el('div', { role: 'status', id: 'data-status', hidden: true });
  const error = el('div', { role: 'alert', id: 'data-error', hidden: true });
  const usage = el('section', { 'aria-labelledby': 'usage-title' }, el('h3', { id: 'usage-title' }, 'Usage'));
  const sees = el('pre', { id: 'agent-sees', tabindex: '0', 'aria-label': 'What the agent sees' }, 'Loading…');
  const turns = el('ul', { id: 'injections', class: 'plain' });
  const thread = new URL(window.location.href).searchParams.get('thread'); // from a note's origin link
  const turnsTitle = thread ? `Turns of thread ${thread} and what they were shown` : 'Turns that were shown this memory';

  async function load() {
    try {
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
      const [used, current, notes, shown] = await Promise.all([
        api.request('GET', `${base}/usage`),
        api.request('GET', `${base}/document`),
        api.request('GET', `${base}/notes${query({ before: tomorrow, days: 2 })}`),
        api.request('GET', `${base}/injections${query({ limit: thread ? 50 : 10, thread_id: thread })}`),
      ]);
      usage.replaceChildren(el('h3', { id: 'usage-title' }, 'Usage'),
        meter('usage-notes', 'Notes written today', used.notes_today, used.notes_per_day_quota),
        meter('usage-chars', 'Characters stored', used.chars, used.chars_quota));
      const today = new Date().toISOString().slice(0, 10);
      const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      sees.textContent = preview(current.document, notes.days.filter((d) => d.day === today || d.day === yesterday));
      turns.replaceChildren(...(shown.injections.length ? shown.injections.map((turn) => el('li', {},
        timeEl(turn.at), ' ',
        thread ? `thread ${turn.thread_id}` : el('a', { href: threadHref(turn.thread_id), 'data-route': true }, `thread ${turn.thread_id}`),
        `: document version ${turn.document_version}, `,
        turn.note_ids.length ? `notes ${turn.note_ids.join(', ')}` : 'no notes'))
        : [el('li', {}, thread ? `No recorded turn of thread ${thread} was shown this memory.` : 'No turn was shown this memory yet.')]));
    } catch (failure) {
      say(error, failure.message, 'error');
    }
  }

  const exportButton = el('button', { type: 'button', id: 'export' }, 'Export');
  exportButton.addEventListener('click', async () => {
    busy(exportButton, true);
    say(error, '');
    try {
      let cursor = null;
      let whole = null;
      do {
        const page = await api.request('GET', `${base}/export${query({ cursor })}`);
        if (!whole) whole = { ...page, versions: [], notes: [] };
        whole.versions.push(...page.versions);
        whole.notes.push(...page.notes);
        cursor = page.next_cursor;
      } while (cursor);
      delete whole.next_cursor;
      download(`memory-${memory.kind === 'personal' ? 'personal' : memory.workspace}.json`, whole);
      say(status, `Exported ${formatCount(whole.notes.length)} notes and ${formatCount(whole.versions.length)} versions.`);
    } catch (failure) {
      say(error, failure.message, 'error');
    } finally {
      busy(exportButton, false);
    }
  });

  function eraseForm(id, label, path, explain) {
    const input = el('input', { id: `${id}-confirm`, autocomplete: 'off', 'aria-describedby': `${id}-hint` });
    const button = el('button', { type: 'submit', class: 'danger', disabled: true }, label);
    input.addEventListener('input', () => { button.disabled = input.value.trim() !== name; });
    const form = el('form', { class: 'erase', id },
      el('p', { id: `${id}-hint` }, explain, ' Type ', el('strong', {}, name), ' to confirm.'),
      el('label', { for: `${id}-confirm` }, `Name of the memory to erase (${label.toLowerCase()})`), input, button);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      if (input.value.trim() !== name) return;
      busy(button, true);
      try {
        const receipt = await api.request('DELETE', path);
        const { notes, versions, other } = receipt.erased;
        say(status, `Erased ${formatCount(notes)} notes, ${formatCount(versions)} versions and ${formatCount(other)} other items at ${formatInstant(receipt.finished_at)}.`);
        input.value = '';
        await load();
      } catch (failure) {
        say(error, failure.message, 'error');
      } finally {
        busy(button, false);
        button.disabled = input.value.trim() !== name;
      }
    });
    return form;
  }

  const forms = memory.kind === 'personal'
    ? [eraseForm('erase-all', 'Erase my memory', base, 'Erases the document, every version and every note, for good (backups expire within 35 days).')]
    : [eraseForm('erase-mine', 'Erase my notes', `${base}/notes${query({ author: 'me' })}`, 'Erases the notes you wrote in this workspace.'),
      user?.admin ? eraseForm('erase-all', 'Erase this workspace', base, 'Operators only: erases the whole team memory.') : null];

  panel.replaceChildren(status, error, usage,
    el('section', { 'aria-labelledby': 'sees-title' }, el('h3', { id: 'sees-title' }, 'What the agent sees'),
      el('p', { class: 'hint' }, 'A preview of the memory block put in front of the model at the start of each turn.'), sees),
    el('section', { 'aria-labelledby': 'turns-title' }, el('h3', { id: 'turns-title' }, turnsTitle),
      thread ? el('p', {}, el('a', { href: threadHref(null), 'data-route': true }, 'Show the turns of every thread')) : null, turns),
    el('section', { 'aria-labelledby': 'control-title' }, el('h3', { id: 'control-title' }, 'Export and erase'),
      el('p', {}, 'Download everything this memory holds as one JSON document.'), exportButton, ...forms.filter(Boolean)));
  load();
}
