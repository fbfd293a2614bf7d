// System jobs (operators, memory_admin): the consolidation runs, newest first, and "Run now".

import { query } from './api.js';
import { busy, el, formatCount, say, timeEl } from './ui.js';

const RUNS = '/v1/admin/consolidation/runs';
const POLL_MS = 1000;
const POLL_FOR_MS = 60000; // docs/api.md §5: a run started by POST is listed within 60 s

// A run fanned out to workers (docs/api.md §6): its groups counted so far of those planned.
function progress(run) {
  const counted = (run.groups_done ?? 0) + (run.groups_failed ?? 0);
  const planned = run.groups_planned == null ? '' : ` ${formatCount(counted)} of ${formatCount(run.groups_planned)} groups`;
  return el('span', { class: 'badge' }, `running${planned}`);
}

// How the run's groups were folded (cited edits, rewrite, without a model, nothing to change).
function folds(run) {
  const f = run.folds ?? {};
  const parts = [['edits', f.edits], ['rewrite', f.rewrite], ['model-free', f.model_free], ['unchanged', f.unchanged]]
    .filter(([, count]) => count)
    .map(([name, count]) => `${formatCount(count)} ${name}`);
  return parts.length ? parts.join(', ') : el('span', { class: 'muted' }, 'none');
}

function tokens(run) {
  const t = run.tokens ?? { input: 0, output: 0 };
  return `${formatCount(t.input ?? 0)} / ${formatCount(t.output ?? 0)}`;
}

function runRow(run) {
  const failures = run.failures?.length
    ? el('ul', { class: 'failures' }, run.failures.map((f) => el('li', {}, el('code', {}, f.scope), `: ${f.reason}`)))
    : el('span', { class: 'muted' }, 'none');
  return el('tr', { 'data-run-id': run.run_id },
    el('th', { scope: 'row' }, timeEl(run.started_at),
      el('div', { class: 'muted run-id' }, run.run_id)),
    el('td', { 'data-label': 'Finished' }, run.finished_at ? timeEl(run.finished_at) : progress(run)),
    el('td', { 'data-label': 'Groups done / failed' }, `${formatCount(run.groups_done ?? 0)} / ${formatCount(run.groups_failed ?? 0)}`),
    el('td', { 'data-label': 'Notes consolidated / remaining' }, `${formatCount(run.notes_consolidated ?? 0)} / ${formatCount(run.notes_remaining ?? 0)}`),
    el('td', { 'data-label': 'Failures' }, failures),
    el('td', { 'data-label': 'Folds', class: 'folds' }, folds(run)),
    el('td', { 'data-label': 'Model tokens in / out', class: 'tokens' }, tokens(run)),
  );
}

export function renderJobs(panel, { api }) {
  const status = el('div', { role: 'status', id: 'jobs-status', hidden: true });
  const error = el('div', { role: 'alert', id: 'jobs-error', hidden: true });
  const runNow = el('button', { type: 'button', id: 'run-now' }, 'Run now');
  const refresh = el('button', { type: 'button', class: 'secondary', id: 'runs-refresh' }, 'Refresh');
  const body = el('tbody', { id: 'runs' });
  const table = el('table', { class: 'runs' },
    el('caption', {}, 'Consolidation runs, newest first'),
    el('thead', {}, el('tr', {},
      el('th', { scope: 'col' }, 'Started'),
      el('th', { scope: 'col' }, 'Finished'),
      el('th', { scope: 'col' }, 'Groups done / failed'),
      el('th', { scope: 'col' }, 'Notes consolidated / remaining'),
      el('th', { scope: 'col' }, 'Failures'),
      el('th', { scope: 'col' }, 'Folds'),
      el('th', { scope: 'col' }, 'Model tokens in / out'))),
    body);
  let stopped = false;

  async function load() {
    const answer = await api.request('GET', `${RUNS}${query({ limit: 20 })}`);
    body.replaceChildren(...answer.runs.map(runRow));
    if (!answer.runs.length) body.append(el('tr', {}, el('td', { colspan: 7, class: 'empty' }, 'No runs yet.')));
    return answer.runs;
  }

  async function reload() {
    say(error, '');
    busy(refresh, true);
    try {
      await load();
    } catch (failure) {
      say(error, failure.message, 'error');
    } finally {
      busy(refresh, false);
    }
  }

  async function start() {
    say(error, '');
    busy(runNow, true);
    let runId;
    try {
      runId = (await api.request('POST', RUNS)).run_id;
    } catch (failure) {
      say(error, failure.message, 'error');
      busy(runNow, false);
      return;
    }
    say(status, `Run ${runId} started; waiting for it to be listed…`, 'info');
    const deadline = Date.now() + POLL_FOR_MS;
    try {
      while (!stopped && Date.now() < deadline) {
        const run = (await load()).find((item) => item.run_id === runId);
        if (run?.finished_at) {
          const failed = run.groups_failed ? `, ${run.groups_failed} failed` : '';
          say(status, `Run ${runId} finished: ${run.groups_done} groups done${failed}, ${run.notes_consolidated} notes consolidated, ${run.notes_remaining} remaining.`, run.groups_failed ? 'warning' : 'success');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      if (!stopped) say(status, `Run ${runId} was started but is not finished yet; Refresh to see it.`, 'warning');
    } catch (failure) {
      say(error, failure.message, 'error');
    } finally {
      busy(runNow, false);
    }
  }

  runNow.addEventListener('click', start);
  refresh.addEventListener('click', reload);
  panel.replaceChildren(
    el('p', {}, 'Every night the consolidation folds week-old notes into each memory’s curated document. “Run now” starts a run at once.'),
    el('div', { class: 'actions' }, runNow, refresh),
    status, error,
    el('div', { class: 'table-wrap' }, table),
  );
  reload();
  return () => { stopped = true; };
}
