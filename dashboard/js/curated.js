// The Curated memory tab: the document in an editor with a live count against the limits, Save with
// expected_version, a 409 that keeps the typed text, and the history (view a version, restore it).

import { memoryBase, query } from './api.js';
import { busy, confirmDialog, el, formatCount, formatInstant, say, viewDialog } from './ui.js';

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
    editor.value = document.content;
    editor.disabled = false;
    versionLine.textContent = document.version
      ? `Version ${document.version}, saved ${formatInstant(document.updated_at)}`
      : 'No document yet: what you save becomes version 1.';
    updateCount();
  }

  async function load() {
    const answer = await api.request('GET', `${base}/document`);
    limits = answer.limits || DEFAULT_LIMITS;
    showDocument(answer.document);
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
      await loadHistory();
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
    const mine = editor.value;
    const keepMine = el('button', {
      type: 'button', id: 'conflict-keep-mine', onclick: () => {
        loaded = latest; // save over the latest version: Save sends its version now
        conflict.hidden = true;
        versionLine.textContent = `Version ${latest.version}, saved ${formatInstant(latest.updated_at)} (your text is in the editor)`;
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
      el('p', {}, `${failure.message}. This memory was changed elsewhere: it is now version ${latest.version}, saved ${formatInstant(latest.updated_at)}. Nothing of yours was saved, and your text is still in the editor.`),
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
          const { document } = await api.request('GET', `${base}/document/versions/${item.version}`);
          viewDialog({
            title: `Version ${item.version}`,
            meta: `${REASONS[item.reason] || item.reason}, ${formatInstant(item.updated_at)}, ${formatCount(document.chars)} characters`,
            content: document.content,
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
    const isCurrent = loaded && item.version === loaded.version;
    return el('li', { 'data-version': item.version },
      el('span', { class: 'version-number' }, `v${item.version}`),
      el('span', { class: 'version-reason' }, REASONS[item.reason] || item.reason),
      el('span', { class: 'muted' }, describeAuthor(item.by)),
      el('time', { datetime: item.updated_at }, formatInstant(item.updated_at)),
      el('span', { class: 'muted' }, `${formatCount(item.chars)} chars`),
      el('span', { class: 'row-actions' }, view, isCurrent ? el('span', { class: 'badge' }, 'current') : restore),
    );
  }

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

  editor.addEventListener('input', updateCount);
  const form = el('form', { onsubmit: onSave, class: 'editor-form' },
    el('label', { for: 'document-editor' }, 'Curated memory (Markdown)'),
    editor, count, versionLine,
    el('div', { class: 'actions' }, save),
  );
  history.append(el('h3', { id: 'history-title' }, 'History'), historyError, historyList, moreVersions);
  panel.replaceChildren(form, conflict, status, error, history);

  return load().then(() => loadHistory()).catch((failure) => {
    panel.replaceChildren(el('div', { role: 'alert', class: 'message error' }, failure.message));
  });
}
