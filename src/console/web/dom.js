// dom.js — building the page safely, plus small formatting helpers shared by every page.
//
// RULE: every value that comes from the API (tool names, code, arguments, error texts, user
// names, output...) is untrusted. It reaches the page ONLY as text: through h() below, whose
// string children become text nodes, or through textContent. The console never parses markup
// from strings (no HTML-string properties or insertion methods, no document writing), never
// turns strings into code, and has no inline event handlers, style attributes or inline
// styling (the CSP forbids them too): looks come from classes in console.css and the hidden
// attribute. h() refuses the style, src, srcdoc and action attributes and any href that is
// not an in-page "#..." link; links built from data go through hashHref(), which
// percent-encodes every segment. Class names never come from data: badge() maps known words
// to a fixed set of classes.

// Element properties set as properties (not attributes).
const PROPS = new Set(['value', 'checked', 'disabled', 'hidden', 'selected', 'required', 'readOnly']);
const FORBIDDEN = new Set(['style', 'src', 'srcdoc', 'action', 'formaction']);

// h('tag', {attr: value, onclick: fn, class: 'a b'}, child, [children], 'text', ...)
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  append(el, children);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    const key = k.toLowerCase();
    if (FORBIDDEN.has(key)) throw new Error(`h(): attribute "${k}" is not allowed`);
    if (key.startsWith('on')) {
      if (typeof v !== 'function') throw new Error(`h(): ${k} must be a function`);
      el.addEventListener(key.slice(2), v);
    } else if (key === 'href') {
      if (!String(v).startsWith('#')) throw new Error('h(): only in-page "#..." links');
      el.setAttribute('href', String(v));
    } else if (key === 'class') {
      el.className = Array.isArray(v) ? v.filter(Boolean).join(' ') : String(v);
    } else if (PROPS.has(k)) {
      el[k] = v;
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  return el;
}

// Appends children: Nodes as they are, strings and numbers as text nodes, arrays flattened,
// null/undefined/false skipped.
export function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
  return el;
}

// Replaces el's children (same rules as append: null/false skipped, arrays flattened).
export function fill(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// "#/seg/seg?query", every segment percent-encoded: the only way data becomes a link.
export function hashHref(...segments) {
  return '#/' + segments.map((s) => encodeURIComponent(String(s))).join('/');
}

// --- the page-wide error and notice boxes (in index.html) ---------------------------------

const box = (id) => document.querySelector(`[data-testid="${id}"]`);

export function showError(message) {
  const el = box('error');
  el.textContent = String(message || 'something went wrong');
  el.hidden = false;
}
export function clearError() {
  const el = box('error');
  el.textContent = '';
  el.hidden = true;
}
export function showNotice(message) {
  const el = box('notice');
  el.textContent = String(message);
  el.hidden = false;
}
export function clearNotice() {
  const el = box('notice');
  el.textContent = '';
  el.hidden = true;
}

// Runs an async load for a page root: data-loaded="false" while it runs, "true" once the data
// was rendered (also after an error, which is then in the error box, so tests never hang).
export async function withLoading(root, ctx, fn) {
  root.setAttribute('data-loaded', 'false');
  try {
    await fn();
  } catch (err) {
    ctx.fail(err);
  } finally {
    if (ctx.alive()) root.setAttribute('data-loaded', 'true');
  }
}

// --- building blocks --------------------------------------------------------------------

const TONES = {
  good: ['approved', 'ok', 'success', 'allowed', 'active', 'up', 'connected', 'intact', 'yes'],
  bad: ['rejected', 'revoked', 'denied', 'error', 'failed', 'tampered', 'down', 'timeout',
    'limit', 'modified', 'no', 'crashed'],
  warn: ['proposed', 'pending', 'cancelled', 'canceled', 'cancel requested', 'running'],
  muted: ['superseded', 'unknown', 'none', 'caller'],
};

// A status badge; its colour comes from a fixed list of known words, never from the data.
export function badge(text, testid) {
  const word = String(text ?? '');
  const lower = word.toLowerCase();
  let tone = 'neutral';
  for (const [t, words] of Object.entries(TONES)) if (words.includes(lower)) tone = t;
  return h('span', { class: `badge badge-${tone}`, 'data-testid': testid }, word || '—');
}

export function table(headers, rows, empty = 'Nothing to show.') {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  return h('div', { class: 'table-wrap' }, h('table', { class: 'grid' },
    h('thead', null, h('tr', null, headers.map((t) => h('th', null, t)))),
    h('tbody', null, rows)));
}

// A definition list from [label, value] pairs; value: a Node, text, or null (skipped).
export function fields(pairs) {
  return h('dl', { class: 'fields' }, pairs.filter((p) => p && p[1] !== undefined && p[1] !== null)
    .map(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}

export function panel(title, attrs, ...children) {
  return h('section', { class: 'panel', ...attrs }, h('h2', null, title), ...children);
}

export const mono = (text, title) => h('span', { class: 'mono', title }, text ?? '');

export function shortHash(hash, n = 12) {
  const s = String(hash ?? '');
  return h('span', { class: 'mono nowrap', title: s }, s.length > n ? s.slice(0, n) + '…' : s);
}

// Pretty JSON text of a value; a string holding JSON is parsed first.
export function pretty(value) {
  if (value === undefined || value === null || value === '') return '';
  if (typeof value === 'string') {
    try { return JSON.stringify(JSON.parse(value), null, 2); } catch { return value; }
  }
  return JSON.stringify(value, null, 2);
}

// One-line JSON, cut at max characters.
export function compact(value, max = 160) {
  let s = typeof value === 'string' ? value : JSON.stringify(value ?? '');
  if (s === undefined) s = '';
  return s.length > max ? s.slice(0, max) + '…' : s;
}

export const label = (v) => (typeof v === 'string' ? v : JSON.stringify(v));

export function list(values, empty = 'none') {
  const items = Array.isArray(values) ? values : [];
  if (!items.length) return h('span', { class: 'muted' }, empty);
  return h('ul', { class: 'chips' }, items.map((v) => h('li', { class: 'mono' }, label(v))));
}

// --- times and sizes (shown in UTC, like the audit filters) ------------------------------

export function fmtMs(ms) {
  const n = Number(ms);
  if (!Number.isFinite(n) || n <= 0) return '—';
  return new Date(n).toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, 'Z');
}
export const fmtSec = (s) => fmtMs(Number(s) * 1000);

// A time of unknown shape: Unix ms, Unix seconds, or an ISO-8601 string.
export function fmtAny(v) {
  if (v === undefined || v === null || v === '' || v === 0) return '—';
  if (typeof v === 'number') return v < 1e11 ? fmtSec(v) : fmtMs(v);
  const s = String(v);
  if (/^\d+$/.test(s)) return fmtAny(Number(s));
  const t = /^\d{4}-\d\d-\d\dT/.test(s) ? Date.parse(s) : NaN;
  return Number.isFinite(t) ? fmtMs(t) : s;
}

export function fmtDuration(ms) {
  const n = Number(ms);
  if (!Number.isFinite(n) || ms === null || ms === undefined || ms === '') return '—';
  return n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(n < 10000 ? 2 : 1)} s`;
}

export function fmtBytes(b) {
  const n = Number(b);
  if (!Number.isFinite(n) || b === null || b === undefined) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export const yesNo = (b) => (b ? 'yes' : 'no');
export const dash = (v) => (v === undefined || v === null || v === '' ? '—' : String(v));

// A select of role names (first option "" = firstLabel, if given); a text input when the
// server sent no role list.
export function roleChooser(testid, roles, firstLabel, value = '') {
  const names = Array.isArray(roles) ? roles.filter((r) => typeof r === 'string') : [];
  if (!names.length && !firstLabel) {
    return h('input', { type: 'text', 'data-testid': testid, value, placeholder: 'role' });
  }
  const sel = h('select', { 'data-testid': testid },
    firstLabel ? h('option', { value: '' }, firstLabel) : null,
    names.map((r) => h('option', { value: r }, r)));
  sel.value = value;
  if (sel.selectedIndex < 0) sel.selectedIndex = 0;
  return sel;
}
