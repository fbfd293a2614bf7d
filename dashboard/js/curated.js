// The Curated memory tab: the document in an editor with a live count against the limits and a Markdown
// preview, Save with expected_version, a 409 that keeps the typed text and shows it against the server's,
// the history (view a version, restore it, compare any two), and where each line comes from: the notes a
// consolidation cited for it, with their text and date.

import { memoryBase, query } from './api.js';
import { diffView } from './diff.js';
import { renderMarkdown } from './markdown.js';
import { notesById } from './notes.js';
import { busy, confirmDialog, el, formatCount, formatInstant, say, timeEl, viewDialog } from './ui.js';

const DEFAULT_LIMITS = { soft: 18000, hard: 25000 };
const REASONS = {
  tool: 'written by the agent',
  dashboard: 'edited here',
  compression: 'compressed by the model',
  consolidation: 'nightly consolidation',
  restore: 'restored from history',
};

function describeAuthor(by) {
  if (!by) return '';
  if (by.run_id) return `run ${by.run_id}`;
  if (by.thread_id) return `${by.user_id} in thread ${by.thread_id}`;
  return by.user_id || '';
}

export function renderCurated(panel, { api, memory }) {
  const base = memoryBase(memory);
  let limits = DEFAULT_LIMITS;
  let loaded = null; // the document as last read or saved: {content, version, chars, updated_at}
  let newest = 0; // the newest version the server has shown: History marks it current (after a 409, not `loaded`)

  const editor = el('textarea', {
    id: 'document-editor', rows: 18, spellcheck: 'true', 'aria-describedby': 'document-count document-version',
    disabled: true, // until the document is loaded, so that nothing typed is overwritten
  });
  const count = el('p', { id: 'document-count', class: 'count' });
  const versionLine = el('p', { id: 'document-version', class: 'muted' });
  const status = el('div', { role: 'status', id: 'document-status', hidden: true });
  const error = el('div', { role: 'alert', id: 'document-error', hidden: true });
  const conflict = el('div', { id: 'document-conflict', class: 'conflict', hidden: true, tabindex: '-1' });
  const save = el('button', { type: 'submit', id: 'document-save' }, 'Save');
  const history = el('section', { class: 'history', 'aria-labelledby': 'history-title' });

  function updateCount() {
    const chars = editor.value.length;
    let note = `${formatCount(chars)} / ${formatCount(limits.soft)} characters (hard limit ${formatCount(limits.hard)})`;
    let level = 'ok';
    if (chars > limits.hard) {
      note += ' — over the hard limit: saving asks the model to compress it, or is refused';
      level = 'over-hard';
    } else if (chars > limits.soft) {
      note += ' — over the soft limit: it will be saved with a warning';
      level = 'over-soft';
    }
    count.textContent = note;
    count.dataset.level = level;
    const dirty = loaded !== null && editor.value !== loaded.content;
    save.textContent = dirty ? 'Save changes' : 'Save';
  }

  function showDocument(document) {
    loaded = document;
    newest = document.version;
    editor.value = document.content;
    editor.disabled = false;
    versionLine.replaceChildren(...(document.version
      ? [`Version ${document.version}, saved `, timeEl(document.updated_at)]
      : ['No document yet: what you save becomes version 1.']));
    updateCount();
    updatePreview();
    compareOptions();
  }

  // --- the Markdown preview of the editor's text ---
  const preview = el('div', { id: 'document-preview', class: 'markdown', hidden: true, tabindex: '0', role: 'region', 'aria-label': 'Preview of the document' });
  const previewToggle = el('button', {
    type: 'button', class: 'secondary', id: 'preview-toggle', 'aria-expanded': 'false', 'aria-controls': 'document-preview',
    onclick: () => {
      preview.hidden = !preview.hidden;
      previewToggle.setAttribute('aria-expanded', String(!preview.hidden));
      previewToggle.textContent = preview.hidden ? 'Show preview' : 'Hide preview';
      updatePreview();
    },
  }, 'Show preview');
  let previewQueued = false;
  function updatePreview() {
    if (preview.hidden || previewQueued) return;
    previewQueued = true;
    requestAnimationFrame(() => {
      previewQueued = false;
      preview.replaceChildren(editor.value.trim() ? renderMarkdown(editor.value) : el('p', { class: 'muted' }, '(empty)'));
    });
  }

  async function load() {
    const answer = await api.request('GET', `${base}/document`);
    limits = answer.limits || DEFAULT_LIMITS;
    showDocument(answer.document);
  }

  // --- where each line comes from (GET {base}/document/provenance) ---
  const provenance = el('section', { class: 'provenance', id: 'provenance', 'aria-labelledby': 'provenance-title' });
  const provenanceHeading = el('h3', { id: 'provenance-title' }, 'Where each line comes from');

  function sourceItem(id, note) {
    if (!note) return el('li', { class: 'source muted' }, 'a note no longer in this memory');
    return el('li', { class: 'source', 'data-note-id': id }, el('span', { class: 'source-text' }, note.text), ' ', timeEl(note.created_at));
  }

  async function loadProvenance() {
    try {
      const answer = await api.request('GET', `${base}/document/provenance`);
      const notes = await notesById(api, base, answer.lines.flatMap((line) => line.notes));
      const rows = answer.lines.filter((line) => line.line.trim()).map((line) => el('li', { class: 'provenance-line' },
        el('code', { class: 'line' }, line.line),
        line.notes.length
          ? el('ul', { class: 'sources', 'aria-label': 'The notes it comes from' }, line.notes.map((id) => sourceItem(id, notes.get(id))))
          : el('p', { class: 'muted no-source' }, 'Written by hand, by the agent or by a rewrite: no note.')));
      provenance.replaceChildren(provenanceHeading,
        el('p', { class: 'muted' }, `Version ${answer.version}: each line with the notes a consolidation cited for it.`),
        rows.length ? el('ol', { id: 'provenance-lines' }, rows) : el('p', { class: 'empty' }, 'The document is empty.'));
    } catch (failure) {
      provenance.replaceChildren(provenanceHeading, el('div', { role: 'alert', class: 'message error' }, failure.message));
    }
  }

  async function onSave(event) {
    event.preventDefault();
    say(error, '');
    say(status, '');
    busy(save, true);
    try {
      const answer = await api.request('PUT', `${base}/document`, {
        content: editor.value, expected_version: loaded.version,
      });
      conflict.hidden = true;
      showDocument(answer.document);
      const lines = [el('p', {}, `Saved as version ${answer.document.version}.`)];
      if (answer.compressed) {
        lines.push(el('p', { class: 'warning' },
          `It was over ${formatCount(limits.hard)} characters, so the model compressed it to ${formatCount(answer.document.chars)}. Review it below; the longer text is in the history.`));
      }
      for (const warning of answer.warnings || []) lines.push(el('p', { class: 'warning' }, `Warning: ${warning}`));
      say(status, el('div', {}, lines), answer.compressed || answer.warnings?.length ? 'warning' : 'success');
      await Promise.all([loadHistory(), loadProvenance()]);
    } catch (failure) {
      if (failure.status === 409) await showConflict(failure);
      else say(error, failure.message, 'error');
    } finally {
      busy(save, false);
    }
  }

  // 409: someone (the agent, another person) saved since we loaded. The typed text stays in the editor.
  async function showConflict(failure) {
    let latest = null;
    try {
      latest = (await api.request('GET', `${base}/document`)).document;
    } catch (loadFailure) {
      say(error, `${failure.message} (and the latest version could not be loaded: ${loadFailure.message})`, 'error');
      return;
    }
    newest = latest.version;
    compareOptions();
    loadHistory(); // the version saved elsewhere is listed, and marked current
    const mine = editor.value;
    const keepMine = el('button', {
      type: 'button', id: 'conflict-keep-mine', onclick: () => {
        loaded = latest; // save over the latest version: Save sends its version now
        conflict.hidden = true;
        versionLine.replaceChildren(`Version ${latest.version}, saved `, timeEl(latest.updated_at), ' (your text is in the editor)');
        say(status, `Your text is in the editor; Save writes it over version ${latest.version}.`, 'info');
        editor.focus();
        updateCount();
      },
    }, 'Keep my text (save it over theirs)');
    const loadLatest = el('button', {
      type: 'button', class: 'secondary', id: 'conflict-load-latest', onclick: () => {
        showDocument(latest);
        conflict.replaceChildren(
          el('h3', {}, 'Your text, kept'),
          el('p', {}, 'The editor now holds the latest version. Copy what you need from your text:'),
          el('label', { for: 'conflict-mine' }, 'Your unsaved text'),
          el('textarea', { id: 'conflict-mine', readonly: true, rows: 8 }, mine),
        );
        editor.focus();
      },
    }, 'Load the latest version (keep my text aside)');
    conflict.replaceChildren(
      el('h3', {}, 'Changed elsewhere'),
      el('p', {}, `${failure.message}. This memory was changed elsewhere: it is now version ${latest.version}, saved `,
        timeEl(latest.updated_at), '. Nothing of yours was saved, and your text is still in the editor.'),
      el('h4', {}, `Version ${latest.version} against your text`),
      diffView(latest.content, mine, {
        id: 'conflict-diff', leftTitle: `Version ${latest.version} (saved elsewhere)`, rightTitle: 'Your text (not saved)',
        caption: `Differences between version ${latest.version} and your unsaved text`,
      }),
      el('details', {}, el('summary', {}, `Show version ${latest.version}`), el('pre', {}, latest.content || '(empty)')),
      el('div', { class: 'actions' }, keepMine, loadLatest),
    );
    conflict.hidden = false;
    conflict.focus();
  }

  // --- history ---
  const historyList = el('ol', { class: 'versions', id: 'versions' });
  const historyError = el('div', { role: 'alert', hidden: true });
  const moreVersions = el('button', { type: 'button', class: 'secondary', hidden: true }, 'Older versions');
  let cursor = null;

  function versionRow(item) {
    const view = el('button', {
      type: 'button', class: 'secondary small', 'aria-label': `View version ${item.version}`,
      onclick: async () => {
        try {
          const { document, edits } = await api.request('GET', `${base}/document/versions/${item.version}`);
          viewDialog({
            title: `Version ${item.version}`,
            meta: `${REASONS[item.reason] || item.reason}, ${formatInstant(item.updated_at)}, ${formatCount(document.chars)} characters`,
            content: document.content,
            edits,
          });
        } catch (failure) {
          say(historyError, failure.message, 'error');
        }
      },
    }, 'View');
    const restore = el('button', {
      type: 'button', class: 'small', 'aria-label': `Restore version ${item.version}`,
      onclick: async () => {
        const ok = await confirmDialog({
          title: `Restore version ${item.version}?`,
          text: `Its content becomes a new version of this memory. The current version stays in the history, so this can be undone.`,
          confirmLabel: 'Restore',
        });
        if (!ok) return;
        try {
          const answer = await api.request('POST', `${base}/document/versions/${item.version}/restore`, {
            expected_version: loaded.version,
          });
          showDocument(answer.document);
          say(status, `Version ${item.version} restored as version ${answer.document.version}.`, 'success');
          await loadHistory();
          editor.focus();
        } catch (failure) {
          say(historyError, failure.message, 'error');
          restore.focus();
        }
      },
    }, 'Restore');
    const isCurrent = item.version === newest;
    return el('li', { 'data-version': item.version },
      el('span', { class: 'version-number' }, `v${item.version}`),
      el('span', { class: 'version-reason' }, REASONS[item.reason] || item.reason),
      el('span', { class: 'muted' }, describeAuthor(item.by)),
      timeEl(item.updated_at),
      el('span', { class: 'muted' }, `${formatCount(item.chars)} chars`),
      el('span', { class: 'row-actions' }, view, isCurrent ? el('span', { class: 'badge' }, 'current') : restore),
    );
  }

  // --- compare any two versions ---
  const compareFrom = el('select', { id: 'compare-from' });
  const compareTo = el('select', { id: 'compare-to' });
  const compareButton = el('button', { type: 'submit', class: 'secondary' }, 'Compare');
  const compareResult = el('div', { id: 'version-diff', tabindex: '-1' });
  const compareForm = el('form', { class: 'compare', hidden: true },
    el('label', { for: 'compare-from' }, 'Compare version'), compareFrom,
    el('label', { for: 'compare-to' }, 'with version'), compareTo, compareButton);

  function compareOptions() {
    compareForm.hidden = newest < 2;
    const numbers = Array.from({ length: newest }, (_, i) => newest - i);
    const fill = (select, chosen) => {
      select.replaceChildren(...numbers.map((n) => el('option', { value: String(n), selected: n === chosen }, `v${n}`)));
    };
    fill(compareFrom, newest - 1);
    fill(compareTo, newest);
  }

  async function versionContent(number) {
    if (number === loaded.version) return loaded.content;
    return (await api.request('GET', `${base}/document/versions/${number}`)).document.content;
  }

  compareForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(historyError, '');
    const [older, newer] = [Number(compareFrom.value), Number(compareTo.value)];
    busy(compareButton, true);
    try {
      const [before, after] = await Promise.all([versionContent(older), versionContent(newer)]);
      compareResult.replaceChildren(
        el('h4', {}, `Version ${older} against version ${newer}`),
        diffView(before, after, {
          id: 'compare-table', leftTitle: `Version ${older}`, rightTitle: `Version ${newer}`,
          caption: `Differences between version ${older} and version ${newer}`,
        }));
      compareResult.focus();
    } catch (failure) {
      say(historyError, failure.message, 'error');
    } finally {
      busy(compareButton, false);
    }
  });

  async function loadHistory(more = false) {
    say(historyError, '');
    try {
      const answer = await api.request('GET', `${base}/document/versions${query({ limit: 10, cursor: more ? cursor : null })}`);
      if (!more) historyList.replaceChildren();
      historyList.append(...answer.versions.map(versionRow));
      if (!historyList.children.length) historyList.append(el('li', { class: 'empty' }, 'No versions yet.'));
      cursor = answer.next_cursor;
      moreVersions.hidden = !cursor;
    } catch (failure) {
      say(historyError, failure.message, 'error');
    }
  }
  moreVersions.addEventListener('click', () => loadHistory(true));

  editor.addEventListener('input', () => {
    updateCount();
    updatePreview();
  });
  const form = el('form', { onsubmit: onSave, class: 'editor-form' },
    el('label', { for: 'document-editor' }, 'Curated memory (Markdown)'),
    editor, count, versionLine,
    el('div', { class: 'actions' }, save, previewToggle),
    preview,
  );
  history.append(el('h3', { id: 'history-title' }, 'History'), compareForm, compareResult, historyError, historyList, moreVersions);
  panel.replaceChildren(form, conflict, status, error, history, provenance);

  return load().then(() => Promise.all([loadHistory(), loadProvenance()])).catch((failure) => {
    panel.replaceChildren(el('div', { role: 'alert', class: 'message error' }, failure.message));
  });
}
