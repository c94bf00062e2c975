// live.js — the Live page (#/live): tool calls in flight on every endpoint (with a Cancel
// button each) and the health of the runner, its sandbox pool, sessions and connectors.
// Refreshes every 2 s while shown; the router's cleanup stops the timer.

import { get, post } from './api.js';
import {
  h, fill, table, fields, panel, badge, dash, clearError, showError, showNotice,
} from './dom.js';

const REFRESH_MS = 2000;

export function mountLive(outlet, ctx) {
  const runsBody = h('div');
  const runnerPanel = panel('Runner', { 'data-testid': 'runner-health' });
  const poolPanel = panel('Sandbox pool', { 'data-testid': 'pool-state' });
  const sessionsPanel = panel('Sessions', { 'data-testid': 'sessions-state' });
  const connectorsPanel = panel('Connectors', { 'data-testid': 'connector-health' });
  const updated = h('span', { class: 'muted' });
  const root = h('section', { class: 'page', 'data-testid': 'page-live' },
    h('div', { class: 'page-head' }, h('h1', null, 'Live'), updated),
    panel('Runs in flight', null, runsBody),
    h('div', { class: 'columns four' }, runnerPanel, poolPanel, sessionsPanel),
    connectorsPanel);
  outlet.append(root);

  let inflight = null;  // the refresh under way, if any
  let pollError = false;  // the error box shows a refresh failure (cleared by the next success)

  // One refresh at a time; after an action, fresh = true waits for the one under way and
  // loads again, so what is shown is newer than the action.
  function refresh(fresh = false) {
    if (inflight) return fresh ? inflight.then(() => refresh()) : inflight;
    inflight = (async () => {
      try {
        const data = await get('live');
        if (!ctx.alive()) return;
        render(data);
        if (pollError) { clearError(); pollError = false; }
      } catch (err) {
        if (err.status !== 401 && ctx.alive()) { showError(err.message); pollError = true; }
      } finally {
        inflight = null;
        if (ctx.alive()) root.setAttribute('data-loaded', 'true');
      }
    })();
    return inflight;
  }

  function render(data) {
    const now = Date.now();
    const runs = Array.isArray(data.runs) ? data.runs : [];
    fill(runsBody, table(
      ['run id', 'user', 'role', 'endpoint', 'tool', 'client', 'running for', 'cancel requested', ''],
      runs.map((r) => runRow(r, now)), 'No tool calls in flight.'));
    renderRunner(data.runner);
    renderPool(data.runner && data.runner.pool);
    const s = data.sessions;
    fill(sessionsPanel, sessionsPanel.firstChild, s && typeof s === 'object'
      ? fields([['open', dash(s.open)], data.runner && data.runner.sessions !== undefined
        ? ['runner sessions', dash(data.runner.sessions)] : null])
      : h('p', { class: 'muted' }, 'not reported'));
    renderConnectors(data.connectors);
    updated.textContent = `updated ${new Date(now).toISOString().slice(11, 19)}Z, every ${REFRESH_MS / 1000} s`;
  }

  function runRow(r, now) {
    const started = Number(r.started_ms);
    const secs = Number.isFinite(started) && started > 0 ? Math.max(0, Math.round((now - started) / 1000)) : null;
    const cancel = h('button', {
      type: 'button', class: 'danger', 'data-testid': 'live-cancel', disabled: !!r.cancel_requested,
      onclick: async () => {
        clearError();
        cancel.disabled = true;
        try {
          await post('live/cancel', { run_id: r.run_id });
          if (!ctx.alive()) return;
          showNotice(`Cancel requested for run ${dash(r.run_id)}.`);
          root.setAttribute('data-loaded', 'false');
          await refresh(true);
        } catch (err) {
          ctx.fail(err);
          cancel.disabled = false;
        }
      },
    }, 'Cancel');
    return h('tr', { 'data-testid': 'live-row', 'data-run-id': r.run_id },
      h('td', { class: 'mono' }, dash(r.run_id)),
      h('td', null, dash(r.user)),
      h('td', { class: 'nowrap' }, dash(r.role)),
      h('td', null, dash(r.endpoint)),
      h('td', null, dash(r.tool)),
      h('td', null, dash(r.client)),
      h('td', null, secs === null ? '—' : `${secs} s`),
      h('td', null, r.cancel_requested ? badge('cancel requested') : 'no'),
      h('td', { class: 'actions' }, cancel));
  }

  function renderRunner(runner) {
    const title = runnerPanel.firstChild;
    if (!runner || typeof runner !== 'object') {
      fill(runnerPanel, title, h('p', { class: 'muted' }, 'not reported'));
      return;
    }
    fill(runnerPanel, title, fields([
      ['state', badge(runner.up ? 'up' : 'down')],
      ['pid', dash(runner.pid)],
      ['restarts', dash(runner.restarts)],
      ['in flight', dash(runner.in_flight)],
      ['queued', dash(runner.queued)],
      ['max concurrent', dash(runner.max_concurrent)],
      runner.error ? ['error', h('span', { class: 'error-text' }, String(runner.error))] : null,
    ]));
  }

  function renderPool(pool) {
    const title = poolPanel.firstChild;
    if (!pool || typeof pool !== 'object') {
      fill(poolPanel, title, h('p', { class: 'muted' }, 'no pool (sandboxes are started on demand) or not reported'));
      return;
    }
    fill(poolPanel, title, fields([
      ['ready', dash(pool.ready)],
      ['pending', dash(pool.pending)],
      ['hits', dash(pool.hits)],
      ['misses', dash(pool.misses)],
      ['created', dash(pool.created)],
      ['create failures', dash(pool.create_failures)],
      ['discarded', dash(pool.discarded)],
    ]));
  }

  function renderConnectors(connectors) {
    const title = connectorsPanel.firstChild;
    if (!Array.isArray(connectors)) {
      fill(connectorsPanel, title, h('p', { class: 'muted' }, 'not reported'));
      return;
    }
    fill(connectorsPanel, title, table(['name', 'state', 'transport', 'tools', 'error'],
      connectors.map((c) => h('tr', { 'data-testid': 'connector-row', 'data-name': c.name },
        h('td', { class: 'mono' }, dash(c.name)),
        h('td', null, badge(c.connected ? 'up' : 'down')),
        h('td', null, dash(c.transport)),
        h('td', null, c.tools === null || c.tools === undefined ? '—' : String(c.tools)),
        h('td', { class: 'error-text' }, c.error ? String(c.error) : ''))),
      'No connectors are configured.'));
  }

  root.setAttribute('data-loaded', 'false');
  refresh();
  const timer = setInterval(refresh, REFRESH_MS);
  return () => clearInterval(timer);
}
