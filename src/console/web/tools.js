// tools.js — the Code tools page (#/tools?state=...): approved code tools by default, or
// those of another state, with an inline "revoke with a reason" form on each approved one.

import { get, post, seg } from './api.js';
import {
  h, fill, table, badge, shortHash, fmtMs, dash, yesNo, hashHref, withLoading, showError,
  clearError, showNotice,
} from './dom.js';
import { runsAs } from './proposals.js';

const STATES = ['approved', 'all', 'proposed', 'rejected', 'revoked', 'superseded'];

export function mountTools(outlet, ctx) {
  const wanted = ctx.query.get('state') || 'approved';
  const state = STATES.includes(wanted) ? wanted : 'approved';
  const filter = h('select', {
    'data-testid': 'tools-state',
    onchange: () => {
      root.setAttribute('data-loaded', 'false');
      location.hash = '#/tools?state=' + encodeURIComponent(filter.value);
    },
  }, STATES.map((s) => h('option', { value: s }, s)));
  filter.value = state;
  const body = h('div');
  const root = h('section', { class: 'page', 'data-testid': 'page-tools' },
    h('div', { class: 'page-head' }, h('h1', null, 'Code tools'),
      h('label', { class: 'inline' }, 'state ', filter)),
    body);
  outlet.append(root);

  const load = () => withLoading(root, ctx, async () => {
    const data = await get('tools', { state: state === 'all' ? '' : state });
    if (!ctx.alive()) return;
    const tools = Array.isArray(data.tools) ? data.tools : [];
    fill(body, table(
      ['name', 'version', 'endpoint', 'state', 'approved by', 'approved at', 'allow write', 'runs as', 'hash', ''],
      tools.map(row), state === 'approved' ? 'No approved code tools.' : `No code tools in state ${state}.`));
  });

  function row(t) {
    const approval = t.approval || {};
    const approvedBy = t.approved_by || (t.state === 'approved' ? t.decided_by : '');
    const approvedAt = t.approved_at || (t.state === 'approved' ? t.decided_at : 0);
    const actions = h('td', { class: 'actions' });
    const tr = h('tr', { 'data-testid': 'tool-row', 'data-id': t.id },
      h('td', null, h('a', { href: hashHref('proposals', t.id) }, dash(t.name))),
      h('td', { class: 'nowrap' }, dash(t.version)),
      h('td', null, dash(t.endpoint)),
      h('td', null, badge(t.state)),
      h('td', null, dash(approvedBy)),
      h('td', { class: 'nowrap' }, fmtMs(approvedAt)),
      h('td', null, approvedBy ? yesNo(approval.allow_write) : '—'),
      h('td', null, approvedBy ? runsAs(approval) : '—'),
      h('td', null, shortHash(t.hash)),
      actions);
    if (t.state === 'approved') {
      const open = h('button', { type: 'button', 'data-testid': 'revoke-open', onclick: () => showForm() }, 'Revoke…');
      actions.append(open);
      const showForm = () => {
        const reason = h('input', { type: 'text', 'data-testid': 'revoke-reason', placeholder: 'reason (required)' });
        const submit = h('button', { type: 'submit', class: 'danger', 'data-testid': 'revoke-submit' }, 'Revoke');
        const cancel = h('button', { type: 'button', onclick: () => fill(actions, open) }, 'Cancel');
        const form = h('form', {
          class: 'inline-form', novalidate: true,
          onsubmit: async (ev) => {
            ev.preventDefault();
            const why = reason.value.trim();
            if (!why) { showError('A reason is required to revoke a tool.'); reason.focus(); return; }
            clearError();
            submit.disabled = true;
            try {
              const res = await post(`tools/${seg(t.id)}/revoke`, { reason: why });
              if (!ctx.alive()) return;
              const nt = res.tool || {};
              showNotice(`Revoked ${dash(nt.name ?? t.name)} version ${dash(nt.version ?? t.version)}: the state is now ${dash(nt.state)}.`);
              await load();
            } catch (err) {
              ctx.fail(err);
              submit.disabled = false;
            }
          },
        }, reason, submit, cancel);
        fill(actions, form);
        reason.focus();
      };
    } else if (t.reason || approval.reason) {
      actions.append(h('span', { class: 'muted', title: t.reason || approval.reason }, t.reason || approval.reason));
    }
    return tr;
  }

  load();
}
