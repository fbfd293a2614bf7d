// "Your data" (docs/api.md §6): usage against the quotas, what the agent sees, the turns it was shown,
// and the person's controls: Export (a download of every page) and Erase (after typing the memory's name).

import { memoryBase, query } from './api.js';
import { threadHref } from './notes.js';
import { busy, el, formatCount, formatInstant, say, timeEl } from './ui.js';

/** "1 note", "2 notes", "1,000 notes". */
function counted(count, noun) {
  return `${formatCount(count)} ${noun}${count === 1 ? '' : 's'}`;
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
      const [used, view, shown] = await Promise.all([
        api.request('GET', `${base}/usage`),
        api.request('GET', `${base}/context`),
        api.request('GET', `${base}/injections${query({ limit: thread ? 50 : 10, thread_id: thread })}`),
      ]);
      usage.replaceChildren(el('h3', { id: 'usage-title' }, 'Usage'),
        meter('usage-notes', 'Notes written today', used.notes_today, used.notes_per_day_quota),
        meter('usage-chars', 'Characters stored', used.chars, used.chars_quota));
      sees.textContent = view.system_prompt; // the service's own text: what the model gets, byte for byte
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
      say(status, `Exported ${counted(whole.notes.length, 'note')} and ${counted(whole.versions.length, 'version')}.`);
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
    // The label says exactly what to type, and nothing else: the button is enabled by that text alone.
    const form = el('form', { class: 'erase', id },
      el('p', { id: `${id}-hint` }, explain),
      el('label', { for: `${id}-confirm` }, `To ${label.toLowerCase()}, type `, el('strong', {}, name)), input, button);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      if (input.value.trim() !== name) return;
      busy(button, true);
      try {
        const receipt = await api.request('DELETE', path);
        const { notes, versions, other } = receipt.erased;
        say(status, `Erased ${counted(notes, 'note')}, ${counted(versions, 'version')} and ${counted(other, 'other item')} at ${formatInstant(receipt.finished_at)}.`);
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
      el('p', { class: 'hint' }, 'The text put in front of the model at the start of each turn, exactly as it gets it now.'), sees),
    el('section', { 'aria-labelledby': 'turns-title' }, el('h3', { id: 'turns-title' }, turnsTitle),
      thread ? el('p', {}, el('a', { href: threadHref(null), 'data-route': true }, 'Show the turns of every thread')) : null, turns),
    el('section', { 'aria-labelledby': 'control-title' }, el('h3', { id: 'control-title' }, 'Export and erase'),
      el('p', {}, 'Download everything this memory holds as one JSON document.'), exportButton, ...forms.filter(Boolean)));
  load();
}
