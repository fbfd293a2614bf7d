// The dashboard: people see and correct what their agents remember (docs/api.md §5 routes only).
//
// URLs, relative to /dashboard/ (deep links work: the server answers index.html for each):
//   memory                                   My memory (personal), ?tab=curated|notes
//   <workspace_id>/workspace-settings/team-memory   a workspace's team memory, ?tab=curated|notes
//   admin/system-jobs                         the consolidation runs (operators)
//   signin, callback                          sign-in (local development form, or OIDC with PKCE)

import { Api, ApiError, loadConfig, errorFrom } from './api.js';
import { renderCurated } from './curated.js';
import { renderData } from './data.js';
import { renderJobs } from './jobs.js';
import { renderNotes } from './notes.js';
import { beginSignIn, completeSignIn } from './oidc.js';
import { currentUser, forgetToken, storeToken, storedToken } from './session.js';
import { busy, el, say } from './ui.js';

const main = document.getElementById('main');
const picker = document.getElementById('picker');
const sessionBox = document.getElementById('session');
const banner = document.getElementById('banner');
const ID_PATTERN = /^[A-Za-z0-9._@-]{1,128}$/;
const TABS = [
  { id: 'curated', label: 'Curated memory', render: renderCurated },
  { id: 'notes', label: 'Recent notes', render: renderNotes },
  { id: 'data', label: 'Your data', render: renderData },
];

let config = null;
let api = null;
let cleanup = null;

function showBanner(message, { signIn = false } = {}) {
  banner.replaceChildren(el('span', {}, message),
    signIn ? el('a', { href: 'signin', 'data-route': true, onclick: () => { banner.hidden = true; } }, 'Sign in') : null,
    el('button', { type: 'button', class: 'secondary small', onclick: () => { banner.hidden = true; } }, 'Dismiss'));
  banner.hidden = false;
}

window.addEventListener('unhandledrejection', (event) => showBanner(event.reason?.message || String(event.reason)));
window.addEventListener('error', (event) => showBanner(event.message));

/** The route of a location: its path below /dashboard/, split, and the query. */
function routeOf(location) {
  const url = new URL(location);
  const root = new URL(document.baseURI).pathname;
  const rest = url.pathname.startsWith(root) ? url.pathname.slice(root.length) : '';
  return { parts: rest.split('/').filter(Boolean).map(decodeURIComponent), params: url.searchParams };
}

export function navigate(path, { replace = false } = {}) {
  const url = new URL(path, document.baseURI);
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  render({ focus: true });
}

document.addEventListener('click', (event) => {
  const link = event.target.closest?.('a[data-route]');
  if (!link || event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  navigate(link.getAttribute('href'));
});
window.addEventListener('popstate', () => render({ focus: true }));

function signOut() {
  forgetToken();
  navigate('signin');
}

function renderChrome(user, current) {
  sessionBox.replaceChildren();
  picker.replaceChildren();
  if (!user) return;
  sessionBox.append(
    el('span', {}, 'Signed in as ', el('strong', {}, user.sub), user.admin ? ' (operator)' : ''),
    el('button', { type: 'button', class: 'secondary small', onclick: signOut }, 'Sign out'),
  );
  const link = (href, label, hint, key) => el('li', {},
    el('a', { href, 'data-route': true, 'aria-current': key === current ? 'page' : null },
      el('span', {}, label), hint ? el('span', { class: 'hint' }, hint) : null));
  const items = [link('memory', 'My memory', 'MEMORY.md', 'personal')];
  for (const workspace of user.workspaces) {
    items.push(link(`${encodeURIComponent(workspace)}/workspace-settings/team-memory`,
      `Team: ${workspace}`, 'TEAM_MEMORY.md', `team:${workspace}`));
  }
  const lists = [el('h2', { class: 'picker-title' }, 'Memory'), el('ul', {}, items)];
  if (user.admin) {
    lists.push(el('h2', { class: 'picker-title' }, 'Admin'),
      el('ul', {}, link('admin/system-jobs', 'System jobs', 'consolidation', 'jobs')));
  }
  picker.append(...lists);
}

function heading(text) {
  return el('h1', { id: 'page-title', tabindex: '-1' }, text);
}

function renderMemory(memory, params) {
  const tabId = TABS.some((tab) => tab.id === params.get('tab')) ? params.get('tab') : 'curated';
  const title = memory.kind === 'personal' ? 'My memory' : `Team memory: ${memory.workspace}`;
  document.title = `${title} — Agent memory`;
  const intro = memory.kind === 'personal'
    ? 'What your agents remember about you in private conversations. Only you see it.'
    : `What agents remember in the shared conversations of workspace ${memory.workspace}. Every member can read and correct it.`;
  const tablist = el('div', { role: 'tablist', 'aria-label': 'Memory layers', class: 'tabs' });
  const panels = {};
  const buttons = TABS.map((tab) => {
    const button = el('button', {
      type: 'button', role: 'tab', id: `tab-${tab.id}`, 'aria-controls': `panel-${tab.id}`,
      'aria-selected': String(tab.id === tabId), tabindex: tab.id === tabId ? '0' : '-1',
      onclick: () => select(tab.id, true),
    }, tab.label);
    panels[tab.id] = el('section', {
      role: 'tabpanel', id: `panel-${tab.id}`, 'aria-labelledby': `tab-${tab.id}`, tabindex: '0', hidden: tab.id !== tabId,
    });
    return button;
  });
  tablist.append(...buttons);
  tablist.addEventListener('keydown', (event) => {
    const index = buttons.indexOf(document.activeElement);
    if (index < 0) return;
    const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: buttons.length - 1 };
    if (!(event.key in moves)) return;
    event.preventDefault();
    const next = (moves[event.key] + buttons.length) % buttons.length;
    select(TABS[next].id, true);
    buttons[next].focus();
  });
  const rendered = new Set();
  function select(id, updateUrl) {
    TABS.forEach((tab, i) => {
      const selected = tab.id === id;
      buttons[i].setAttribute('aria-selected', String(selected));
      buttons[i].tabIndex = selected ? 0 : -1;
      panels[tab.id].hidden = !selected;
    });
    if (updateUrl) {
      const url = new URL(window.location.href);
      url.searchParams.set('tab', id);
      history.replaceState(null, '', url);
    }
    if (!rendered.has(id)) {
      rendered.add(id);
      TABS.find((tab) => tab.id === id).render(panels[id], { api, memory, user: currentUser() });
    }
  }
  main.replaceChildren(heading(title), el('p', { class: 'intro' }, intro), tablist, ...Object.values(panels));
  select(tabId, false);
}

function renderSignIn(returnTo) {
  document.title = 'Sign in — Agent memory';
  const error = el('div', { role: 'alert', id: 'signin-error', hidden: true });
  if (config.mode === 'oidc') {
    const button = el('button', { type: 'button', id: 'signin-oidc' }, 'Sign in');
    button.addEventListener('click', async () => {
      busy(button, true);
      try {
        await beginSignIn(config, returnTo);
      } catch (failure) {
        say(error, failure.message, 'error');
        busy(button, false);
      }
    });
    main.replaceChildren(heading('Sign in'),
      el('p', {}, 'Sign in with your organisation’s account to see and correct what your agents remember.'),
      error, button);
    return;
  }
  const sub = el('input', { id: 'signin-user', name: 'sub', required: true, autocomplete: 'username', pattern: ID_PATTERN.source.slice(1, -1), 'aria-describedby': 'signin-user-hint' });
  const workspaces = el('input', { id: 'signin-workspaces', name: 'workspaces', autocomplete: 'off', 'aria-describedby': 'signin-workspaces-hint' });
  const admin = el('input', { type: 'checkbox', id: 'signin-admin', name: 'admin' });
  const submit = el('button', { type: 'submit' }, 'Sign in');
  const form = el('form', { class: 'signin', novalidate: true },
    el('p', { class: 'message warning' }, 'Development sign-in of the local stack: it mints a token with the local secret. It does not exist in AWS.'),
    el('label', { for: 'signin-user' }, 'User id'),
    sub,
    el('p', { id: 'signin-user-hint', class: 'hint' }, 'Letters, digits and . _ @ -, e.g. u-1'),
    el('label', { for: 'signin-workspaces' }, 'Workspaces'),
    workspaces,
    el('p', { id: 'signin-workspaces-hint', class: 'hint' }, 'The workspaces you are a member of, separated by spaces or commas, e.g. w-3 w-4'),
    el('div', { class: 'checkbox' }, admin, el('label', { for: 'signin-admin' }, 'Operator (memory_admin): sees System jobs')),
    error,
    el('div', { class: 'actions' }, submit),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(error, '');
    busy(submit, true);
    try {
      const response = await fetch('dev-token', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          sub: sub.value.trim(),
          workspaces: workspaces.value.split(/[\s,]+/).filter(Boolean),
          admin: admin.checked,
        }),
      });
      if (!response.ok) throw await errorFrom(response);
      storeToken((await response.json()).token);
      navigate(returnTo || 'memory', { replace: true });
    } catch (failure) {
      say(error, failure instanceof ApiError ? failure.message : `Cannot sign in: ${failure.message}`, 'error');
      sub.focus();
    } finally {
      busy(submit, false);
    }
  });
  main.replaceChildren(heading('Sign in'), form);
}

async function renderCallback() {
  main.replaceChildren(heading('Signing in…'));
  try {
    const { token, returnTo } = await completeSignIn(config, window.location.href);
    storeToken(token);
    navigate(returnTo || 'memory', { replace: true });
  } catch (failure) {
    main.replaceChildren(heading('Sign-in failed'),
      el('div', { role: 'alert', class: 'message error' }, failure.message),
      el('p', {}, el('a', { href: 'signin', 'data-route': true }, 'Sign in again')));
  }
}

function renderNotFound() {
  document.title = 'Not found — Agent memory';
  main.replaceChildren(heading('Page not found'),
    el('p', {}, 'There is no such page. ', el('a', { href: 'memory', 'data-route': true }, 'Go to My memory')));
}

function render({ focus = false } = {}) {
  if (cleanup) cleanup();
  cleanup = null;
  const { parts, params } = routeOf(window.location.href);
  const user = currentUser();
  const here = parts.join('/');
  if (here === 'callback') {
    renderChrome(null);
    renderCallback();
    return;
  }
  if (!user) {
    renderChrome(null);
    const returnTo = here && here !== 'signin' ? `${here}${window.location.search}` : '';
    if (here !== 'signin') history.replaceState(null, '', new URL('signin', document.baseURI));
    renderSignIn(returnTo);
  } else if (here === '' || here === 'signin') {
    navigate('memory', { replace: true });
    return;
  } else if (here === 'memory') {
    renderChrome(user, 'personal');
    renderMemory({ kind: 'personal' }, params);
  } else if (parts.length === 3 && parts[1] === 'workspace-settings' && parts[2] === 'team-memory') {
    renderChrome(user, `team:${parts[0]}`);
    renderMemory({ kind: 'team', workspace: parts[0] }, params);
  } else if (here === 'admin/system-jobs') {
    renderChrome(user, 'jobs');
    document.title = 'System jobs — Agent memory';
    const panel = el('section', { 'aria-labelledby': 'page-title' });
    main.replaceChildren(heading('System jobs'), panel);
    cleanup = renderJobs(panel, { api });
  } else {
    renderChrome(user, null);
    renderNotFound();
  }
  if (focus) document.getElementById('page-title')?.focus();
}

async function start() {
  try {
    config = await loadConfig();
  } catch (failure) {
    main.replaceChildren(heading('The dashboard cannot start'), el('div', { role: 'alert', class: 'message error' }, failure.message));
    return;
  }
  api = new Api(config.api_base_url || '', storedToken, (error) => {
    forgetToken();
    showBanner(`${error.message} — please sign in again.`, { signIn: true });
    renderChrome(null);
  });
  render();
}

start();
