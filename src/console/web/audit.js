// audit.js — the Audit page (#/audit?user=...&status=...: filters kept in the hash, rows of
// runs, bridged calls and events, hash-chain verification) and a run's page
// (#/audit/run/RUN_ID: its fields, code, result, every bridged call and its events).

import { get, seg } from './api.js';
import {
  h, fill, table, fields, panel, badge, shortHash, mono, pretty, compact, list, fmtAny, fmtDuration,
  fmtBytes, dash, hashHref, withLoading, clearError,
} from './dom.js';

// [query/API name, test id suffix, label, placeholder]
const FILTERS = [
  ['since', 'since', 'since', '2h, 7d, 2026-12-04T10:00:00Z'],
  ['until', 'until', 'until', 'same forms as since'],
  ['user', 'user', 'user', ''],
  ['endpoint', 'endpoint', 'endpoint', ''],
  ['language', 'language', 'language', 'python, javascript…'],
  ['status', 'status', 'status', 'SUCCESS, ERROR, DENIED…'],
  ['run_id', 'run', 'run id', 'r_…'],
  ['type', 'type', 'type', ''],
  ['limit', 'limit', 'limit', '200'],
];
const STATUSES = ['SUCCESS', 'ERROR', 'TIMEOUT', 'LIMIT', 'DENIED', 'CANCELLED'];

export function mountAudit(outlet, ctx) {
  const inputs = {};
  const controls = FILTERS.map(([name, id, text, placeholder]) => {
    let input;
    const value = ctx.query.get(name) || '';
    if (name === 'type') {
      input = h('select', { 'data-testid': 'audit-type' },
        h('option', { value: '' }, 'any'), ['run', 'call', 'event'].map((t) => h('option', { value: t }, t)));
      input.value = value;
      if (input.selectedIndex < 0) input.selectedIndex = 0;
    } else {
      input = h('input', {
        type: name === 'limit' ? 'number' : 'text', min: name === 'limit' ? '1' : undefined,
        'data-testid': `audit-${id}`, value, placeholder,
        list: name === 'status' ? 'audit-statuses' : undefined,
      });
    }
    inputs[name] = input;
    return h('label', null, h('span', null, text), input);
  });
  const form = h('form', { class: 'filters', novalidate: true, onsubmit: (ev) => { ev.preventDefault(); apply(); } },
    controls,
    h('datalist', { id: 'audit-statuses' }, STATUSES.map((s) => h('option', { value: s }))),
    h('div', { class: 'filter-buttons' },
      h('button', { type: 'submit', class: 'primary', 'data-testid': 'audit-apply' }, 'Apply'),
      h('button', { type: 'button', 'data-testid': 'audit-reset', onclick: () => navigate('#/audit') }, 'Reset')));

  const verifyResult = h('div', { class: 'verify', 'data-testid': 'verify-result', hidden: true });
  const verifyBtn = h('button', { type: 'button', 'data-testid': 'verify-chain', onclick: () => verify() }, 'Verify chain');
  const note = h('p', { class: 'muted' });
  const body = h('div');
  const root = h('section', { class: 'page', 'data-testid': 'page-audit' },
    h('div', { class: 'page-head' }, h('h1', null, 'Audit'), h('span', { class: 'spacer' }), verifyBtn),
    verifyResult, form, note, body);
  outlet.append(root);

  // Filters go into the hash (a reload keeps them); the hashchange reloads the page.
  function apply() {
    const qs = new URLSearchParams();
    for (const [name] of FILTERS) {
      const v = inputs[name].value.trim();
      if (v) qs.set(name, v);
    }
    const s = qs.toString();
    navigate('#/audit' + (s ? '?' + s : ''));
  }
  function navigate(hash) {
    clearError();
    root.setAttribute('data-loaded', 'false');
    const before = location.hash;
    location.hash = hash;
    if (location.hash === before) load();  // same filters: no hashchange, load again here
  }

  const load = () => withLoading(root, ctx, async () => {
    const query = {};
    for (const [name] of FILTERS) query[name] = ctx.query.get(name) || '';
    const data = await get('audit', query);
    if (!ctx.alive()) return;
    const rows = Array.isArray(data.rows) ? data.rows : [];
    note.textContent = `${rows.length} row${rows.length === 1 ? '' : 's'}` +
      (data.limited ? ' (limited: there are more; narrow the filters or raise the limit)' : '');
    fill(body, table(
      ['id', 'time', 'type', 'user / actor', 'endpoint', 'language / kind', 'status', 'run', 'summary'],
      rows.map(auditRow), 'No audit rows match these filters.'));
  });

  async function verify() {
    verifyBtn.disabled = true;
    try {
      const v = await get('audit/verify');
      if (!ctx.alive()) return;
      const p = v.problem;
      fill(verifyResult, 
        badge(v.ok ? 'ok' : 'TAMPERED'), ' ',
        h('span', null, `rows checked ${dash(v.rows_checked)} · last id ${dash(v.last_id)} · head hash `),
        shortHash(v.head_hash, 16),
        p ? h('p', { class: 'problem' }, `${dash(p.message)} (${dash(p.kind)} in ${dash(p.table)} #${dash(p.id)}${p.detail ? ': ' + compact(p.detail, 300) : ''})`) : null);
      verifyResult.className = v.ok ? 'verify verify-ok' : 'verify verify-bad';
      verifyResult.hidden = false;
    } catch (err) {
      ctx.fail(err);
    } finally {
      verifyBtn.disabled = false;
    }
  }

  load();
}

function auditRow(r) {
  let who = '', endpoint = '', kind = '', status = null, summary = '';
  if (r.type === 'run') {
    who = r.user ? `${r.user}${r.role ? ' (' + r.role + ')' : ''}` : '';
    endpoint = r.endpoint;
    kind = r.language || r.kind;
    status = badge(r.status);
    summary = [r.kind, fmtDuration(r.duration_ms), `calls ${dash(r.calls_total)} (${dash(r.calls_denied)} denied)`,
      r.error_code ? `error ${r.error_code}` : ''].filter(Boolean).join(' · ');
  } else if (r.type === 'call') {
    kind = r.effective_class ? `call (${r.effective_class})` : 'call';
    status = badge(r.decision);
    summary = [`#${dash(r.seq)} ${dash(r.connector)}.${dash(r.tool)}`, r.reason, r.result_status,
      r.duration_ms !== undefined ? fmtDuration(r.duration_ms) : ''].filter(Boolean).join(' · ');
  } else {
    who = r.actor;
    kind = r.kind;
    summary = [r.target, r.detail && Object.keys(r.detail).length ? compact(r.detail) : ''].filter(Boolean).join(' · ');
  }
  return h('tr', { 'data-testid': 'audit-row', 'data-id': r.id, 'data-run-id': r.run_id || undefined },
    h('td', { class: 'mono' }, dash(r.id)),
    h('td', { class: 'nowrap' }, fmtAny(r.recorded_at ?? r.at ?? r.started_at)),
    h('td', null, dash(r.type)),
    h('td', null, dash(who)),
    h('td', null, dash(endpoint)),
    h('td', null, dash(kind)),
    h('td', null, status || '—'),
    h('td', null, r.run_id
      ? h('a', { class: 'mono', href: hashHref('audit', 'run', r.run_id), 'data-testid': 'audit-run-link' }, r.run_id)
      : '—'),
    h('td', { class: 'summary', title: summary }, summary));
}

export function mountRun(outlet, ctx) {
  const runId = ctx.params[0];
  const root = h('section', { class: 'page', 'data-testid': 'page-run' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/audit' }, '← audit')),
    h('div', { class: 'page-head' }, h('h1', null, 'Run ', h('span', { class: 'mono', 'data-testid': 'run-id' }, runId))));
  const body = h('div');
  root.append(body);
  outlet.append(root);

  withLoading(root, ctx, async () => {
    const data = await get('audit/runs/' + seg(runId));
    if (!ctx.alive()) return;
    const run = data.run;
    const calls = Array.isArray(data.calls) ? data.calls : [];
    const events = Array.isArray(data.events) ? data.events : [];
    const head = root.querySelector('.page-head');
    head.append(badge(run ? run.status : 'unknown', 'run-status'));
    fill(body, 
      run ? h('div', null, runDetails(run)) : h('p', { class: 'warning' }, 'No run record: only its calls or events are known.'),
      panel(`Bridged calls (${calls.length})`, null, table(
        ['seq', 'connector.tool', 'class', 'decision', 'reason', 'result', 'bytes', 'duration', 'arguments (redacted)'],
        calls.map(callRow), 'No bridged calls.')),
      panel(`Events (${events.length})`, null, table(
        ['id', 'at', 'kind', 'actor', 'target', 'detail'],
        events.map((e) => h('tr', { 'data-testid': 'event-row', 'data-id': e.id },
          h('td', { class: 'mono' }, dash(e.id)),
          h('td', { class: 'nowrap' }, fmtAny(e.at ?? e.recorded_at)),
          h('td', null, dash(e.kind)),
          h('td', null, dash(e.actor)),
          h('td', null, dash(e.target)),
          h('td', null, h('pre', { class: 'code small' }, pretty(e.detail))))),
        'No events.')));
  });
}

function runDetails(run) {
  return [
    h('div', { class: 'columns' },
      panel('Run', null, fields([
        ['user', `${dash(run.user)}${run.role ? ' (' + run.role + ')' : ''}`],
        ['endpoint', dash(run.endpoint)],
        ['client', dash(run.client)],
        ['kind', dash(run.kind)],
        ['language', dash(run.language)],
        ['started', fmtAny(run.started_at)],
        ['ended', fmtAny(run.ended_at)],
        ['tool version', run.tool_version_hash ? shortHash(run.tool_version_hash, 24) : '—'],
        ['code sha256', run.code_sha256 ? shortHash(run.code_sha256, 24) : '—'],
        ['connectors', list(run.connectors)],
        ['limits', run.limits && Object.keys(run.limits).length ? mono(compact(run.limits, 400)) : 'defaults'],
      ])),
      panel('Result', null, fields([
        ['status', badge(run.status)],
        ['error code', dash(run.error_code)],
        ['duration', fmtDuration(run.duration_ms)],
        ['calls', `${dash(run.calls_total)} total, ${dash(run.calls_denied)} denied`],
        ['console output', fmtBytes(run.console_bytes)],
        ['result', fmtBytes(run.result_bytes)],
      ]))),
    panel('Code', null, h('pre', { class: 'code', 'data-testid': 'run-code' }, h('code', null, run.code ?? ''))),
  ];
}

function callRow(c) {
  return h('tr', { 'data-testid': 'call-row', 'data-id': c.id, 'data-seq': c.seq },
    h('td', null, dash(c.seq)),
    h('td', { class: 'mono' }, `${dash(c.connector)}.${dash(c.tool)}`),
    h('td', null, dash(c.effective_class)),
    h('td', null, badge(c.decision)),
    h('td', null, dash(c.reason)),
    h('td', null, dash(c.result_status)),
    h('td', null, fmtBytes(c.result_bytes)),
    h('td', null, fmtDuration(c.duration_ms)),
    h('td', null, h('pre', { class: 'code small' }, pretty(c.args_redacted))));
}
