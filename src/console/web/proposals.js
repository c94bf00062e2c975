// proposals.js — the Proposals page (code tools waiting for a decision, #/proposals) and a
// tool's detail page (#/proposals/ID): its declaration, schema, code and diff against the
// approved version it would replace, with the approve and reject forms.

import { get, post, seg } from './api.js';
import {
  h, fill, table, fields, panel, badge, shortHash, pretty, list, fmtMs, dash, yesNo, hashHref,
  withLoading, showError, clearError, showNotice, roleChooser,
} from './dom.js';

export function mountProposals(outlet, ctx) {
  const body = h('div');
  const root = h('section', { class: 'page', 'data-testid': 'page-proposals' },
    h('div', { class: 'page-head' }, h('h1', null, 'Proposals'),
      h('span', { class: 'muted' }, 'code tools waiting for an approval decision')),
    body);
  outlet.append(root);
  withLoading(root, ctx, async () => {
    const data = await get('tools', { state: 'proposed' });
    if (!ctx.alive()) return;
    const tools = Array.isArray(data.tools) ? data.tools : [];
    fill(body, table(
      ['name', 'version', 'endpoint', 'language', 'proposer', 'proposed at', 'intact'],
      tools.map(proposalRow), 'No proposals are waiting.'));
  });
}

function proposalRow(t) {
  const href = hashHref('proposals', t.id);
  return h('tr', {
    class: 'clickable', 'data-testid': 'proposal-row', 'data-id': t.id,
    onclick: (ev) => { if (!ev.target.closest('a')) location.hash = href; },
  },
  h('td', null, h('a', { href }, dash(t.name))),
  h('td', { class: 'nowrap' }, dash(t.version)),
  h('td', null, dash(t.endpoint)),
  h('td', null, dash(t.language)),
  h('td', null, dash(t.proposer)),
  h('td', { class: 'nowrap' }, fmtMs(t.proposed_at)),
  h('td', null, intactBadge(t.intact)));
}

const intactBadge = (intact) => badge(intact === false ? 'modified' : 'intact');

export function mountProposal(outlet, ctx) {
  const id = ctx.params[0];
  const root = h('section', { class: 'page', 'data-testid': 'page-proposal' });
  outlet.append(root);

  const load = () => withLoading(root, ctx, async () => {
    const data = await get('tools/' + seg(id));
    if (!ctx.alive()) return;
    render(data);
  });

  function render(data) {
    const t = data.tool || {};
    const code = typeof t.code === 'string' ? t.code : (typeof data.code === 'string' ? data.code : '');
    const approval = t.approval || {};
    fill(root, 
      h('p', { class: 'crumbs' }, h('a', { href: '#/proposals' }, '← proposals'), ' · ',
        h('a', { href: '#/tools' }, 'code tools')),
      h('div', { class: 'page-head' },
        h('h1', { 'data-testid': 'proposal-name' }, dash(t.name)),
        h('span', { class: 'muted' }, `version ${dash(t.version)}`),
        badge(t.state, 'proposal-state'),
        t.intact === false ? badge('modified') : null),
      t.intact === false
        ? h('p', { class: 'warning' }, 'The stored code no longer matches its hash: this version cannot be approved.')
        : null,
      h('div', { class: 'columns' },
        panel('Tool', null, fields([
          ['description', dash(t.description)],
          ['language', dash(t.language)],
          ['endpoint', dash(t.endpoint)],
          ['proposer', dash(t.proposer)],
          ['proposed at', fmtMs(t.proposed_at)],
          ['hash', shortHash(t.hash, 24)],
          t.decided_by ? ['decided by', `${t.decided_by} at ${fmtMs(t.decided_at)}`] : null,
          t.approved_by ? ['approved by', `${t.approved_by} at ${fmtMs(t.approved_at)}`] : null,
          t.state === 'approved' || t.approved_by ? ['allow write', yesNo(approval.allow_write)] : null,
          t.state === 'approved' || t.approved_by ? ['runs as', runsAs(approval)] : null,
          t.reason || approval.reason ? ['reason', t.reason || approval.reason] : null,
        ])),
        panel('Declared access', { 'data-testid': 'proposal-connectors' }, fields([
          ['connectors', list(t.connectors)],
          ['tools', list(t.tools, 'every tool of the declared connectors')],
          ['limits', limitsView(t.limits)],
        ]))),
      panel('Input schema', null, h('pre', { class: 'code', 'data-testid': 'proposal-schema' }, pretty(t.input_schema) || '{}')),
      panel('Code', null, h('pre', { class: 'code', 'data-testid': 'proposal-code' }, h('code', null, code))),
      panel(data.supersedes ? `Changes against version ${dash(data.supersedes.version)} (approved)` : 'Changes', null,
        diffView(data.diff, data.supersedes)),
      t.state === 'proposed' ? decisionForms(t) : null,
    );
  }

  function decisionForms(t) {
    const me = ctx.me() || {};
    const allowWrite = h('input', { type: 'checkbox', 'data-testid': 'approve-allow-write' });
    const definer = roleChooser('approve-definer', me.roles, 'the caller');
    const approveReason = h('input', { type: 'text', 'data-testid': 'approve-reason', placeholder: 'optional' });
    const approveBtn = h('button', { type: 'submit', class: 'primary', 'data-testid': 'approve-submit' }, 'Approve');
    const rejectReason = h('input', { type: 'text', 'data-testid': 'reject-reason', placeholder: 'required' });
    const rejectBtn = h('button', { type: 'submit', class: 'danger', 'data-testid': 'reject-submit' }, 'Reject');
    const buttons = [approveBtn, rejectBtn];

    const decide = async (action, body) => {
      clearError();
      buttons.forEach((b) => { b.disabled = true; });
      try {
        const res = await post(`tools/${seg(id)}/${action}`, body);
        if (!ctx.alive()) return;
        const nt = res.tool || {};
        showNotice(`${action === 'approve' ? 'Approved' : 'Rejected'} ${dash(nt.name ?? t.name)} version ${dash(nt.version ?? t.version)}: the state is now ${dash(nt.state)}.`);
        await load();
      } catch (err) {
        ctx.fail(err);
        buttons.forEach((b) => { b.disabled = false; });
      }
    };

    const approveForm = h('form', {
      class: 'form', novalidate: true,
      onsubmit: (ev) => {
        ev.preventDefault();
        decide('approve', { allow_write: allowWrite.checked, definer_role: definer.value.trim(), reason: approveReason.value.trim() });
      },
    },
    h('label', { class: 'check' }, allowWrite, ' allow write (may call write-class connector tools, where the caller\'s role may write)'),
    h('label', null, 'run as ', definer),
    h('label', null, 'reason ', approveReason),
    approveBtn);

    const rejectForm = h('form', {
      class: 'form', novalidate: true,
      onsubmit: (ev) => {
        ev.preventDefault();
        const reason = rejectReason.value.trim();
        if (!reason) { showError('A reason is required to reject a proposal.'); rejectReason.focus(); return; }
        decide('reject', { reason });
      },
    },
    h('label', null, 'reason ', rejectReason),
    rejectBtn);

    return h('div', { class: 'columns' },
      panel('Approve', { class: 'panel decide' }, approveForm),
      panel('Reject', { class: 'panel decide' }, rejectForm));
  }

  load();
}

export function runsAs(approval) {
  const a = approval || {};
  return a.run_as_definer || a.definer_role ? `definer role ${dash(a.definer_role)}` : 'the caller';
}

function limitsView(limits) {
  if (!limits || typeof limits !== 'object' || !Object.keys(limits).length) {
    return h('span', { class: 'muted' }, 'defaults');
  }
  return fields(Object.entries(limits).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]));
}

// The diff (DiffVersions: "--- from", "+++ to", "=== section", "@@" hunks), one line per
// block, coloured by its first character; for a new tool, a note first.
function diffView(diff, supersedes) {
  const text = typeof diff === 'string' ? diff : '';
  const note = supersedes ? null : h('p', { class: 'muted' }, 'new tool (nothing to supersede)');
  if (!text.trim()) {
    return h('div', { 'data-testid': 'proposal-diff' },
      note || h('p', { class: 'muted' }, 'no changes against the approved version'));
  }
  let inHunk = false;  // "---"/"+++" are headers only outside hunks
  const lines = text.replace(/\n$/, '').split('\n').map((line) => {
    let cls = 'diff-line';
    if (line.startsWith('@@')) { cls += ' diff-hunk'; inHunk = true; }
    else if (line.startsWith('===')) { cls += ' diff-section'; inHunk = false; }
    else if (line.startsWith('!!!')) cls += ' diff-alert';
    else if (!inHunk && /^(\+\+\+|---|diff )/.test(line)) cls += ' diff-meta';
    else if (line.startsWith('+')) cls += ' diff-add';
    else if (line.startsWith('-')) cls += ' diff-del';
    return h('span', { class: cls }, line || ' ');
  });
  return h('div', { 'data-testid': 'proposal-diff' }, note, h('pre', { class: 'code diff' }, lines));
}
