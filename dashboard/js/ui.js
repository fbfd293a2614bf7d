// Small DOM helpers: building elements, the confirm and view dialogs (focus goes back where it was), messages.

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else if (name === 'text') node.textContent = value;
    else if (value === true) node.setAttribute(name, '');
    else node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function formatCount(n) {
  return new Intl.NumberFormat('en').format(n);
}

const LOCAL = new Intl.DateTimeFormat('en-GB', {
  year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZoneName: 'short',
});

function localParts(iso) {
  const date = new Date(iso);
  if (!iso || Number.isNaN(date.getTime())) return null;
  return Object.fromEntries(LOCAL.formatToParts(date).map((part) => [part.type, part.value]));
}

/** "2026-12-03 11:15 GMT+1": an instant in the browser's time zone, named (UTC when the browser is on UTC). */
export function formatInstant(iso) {
  if (!iso) return '—';
  const p = localParts(iso);
  return p ? `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute} ${p.timeZoneName}` : iso;
}

/** "11:15 GMT+1": the time of day of an instant, in the browser's time zone. */
export function formatTime(iso) {
  const p = localParts(iso);
  return p ? `${p.hour}:${p.minute} ${p.timeZoneName}` : iso;
}

/** "2026-12-03 10:15:00 UTC": the instant as the service stores it (days are UTC days everywhere). */
export function formatUtc(iso) {
  const date = new Date(iso);
  if (!iso || Number.isNaN(date.getTime())) return iso || '';
  return `${date.toISOString().slice(0, 10)} ${date.toISOString().slice(11, 19)} UTC`;
}

/** A <time>: local time shown, the UTC instant on hover (and in `datetime` for machines). */
export function timeEl(iso, { timeOnly = false } = {}) {
  if (!iso) return el('span', {}, '—');
  return el('time', { datetime: iso, title: formatUtc(iso) }, timeOnly ? formatTime(iso) : formatInstant(iso));
}

export function formatDay(day) {
  const date = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) return day;
  return new Intl.DateTimeFormat('en-GB', {
    weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC',
  }).format(date);
}

/** Show a message in a region: role=status for news, role=alert for errors (each region has its role). */
export function say(region, message, kind = 'info') {
  region.replaceChildren();
  region.className = `message ${kind}`;
  region.hidden = !message;
  if (message instanceof Node) region.append(message);
  else if (message) region.textContent = message;
}

/** A modal confirm dialog; resolves true on confirm. Focus returns to what had it (or to `returnFocus`). */
export function confirmDialog({ title, text, confirmLabel }) {
  const dialog = document.getElementById('confirm-dialog');
  const opener = document.activeElement;
  dialog.querySelector('#confirm-title').textContent = title;
  dialog.querySelector('#confirm-text').textContent = text;
  dialog.querySelector('#confirm-ok').textContent = confirmLabel;
  dialog.returnValue = 'cancel';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      const confirmed = dialog.returnValue === 'ok';
      if (!confirmed && opener instanceof HTMLElement && opener.isConnected) opener.focus();
      resolve(confirmed);
    }, { once: true });
    dialog.showModal();
    dialog.querySelector('#confirm-cancel').focus();
  });
}

// ``edits``: a consolidation's cited edits (docs/api.md §6), each shown with the notes it cites; none: hidden.
export function viewDialog({ title, meta, content, edits = null }) {
  const dialog = document.getElementById('view-dialog');
  const opener = document.activeElement;
  dialog.querySelector('#view-title').textContent = title;
  dialog.querySelector('#view-meta').textContent = meta;
  dialog.querySelector('#view-content').textContent = content || '(empty)';
  const section = dialog.querySelector('#view-edits');
  section.hidden = !edits?.length;
  section.querySelector('ol').replaceChildren(...(edits || []).map(editItem));
  dialog.addEventListener('close', () => {
    if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
  }, { once: true });
  dialog.showModal();
  dialog.querySelector('button').focus();
}

const OPS = { add: 'Added', replace: 'Replaced', delete: 'Deleted' };

function editItem(edit) {
  const where = edit.op === 'add'
    ? (edit.after == null ? 'at the end' : ['after ', el('code', {}, edit.after)])
    : el('del', {}, edit.line);
  return el('li', { class: `edit edit-${edit.op}` },
    el('span', { class: 'badge' }, OPS[edit.op] || edit.op), ' ', where,
    edit.text != null ? el('pre', { class: 'edit-text' }, edit.text) : '',
    el('div', { class: 'muted edit-notes' }, 'Notes: ', ...edit.notes.flatMap((id, i) => [i ? ', ' : '', el('code', {}, id)])));
}

export function busy(button, isBusy) {
  button.disabled = isBusy;
  button.setAttribute('aria-busy', String(isBusy));
}
