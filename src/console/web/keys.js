// keys.js — the API keys page (#/keys): every key with its state, revoke with an inline
// confirmation, and a form creating a key whose secret is shown once (in the page only,
// never stored; gone when the box is dismissed or the page left).

import { get, post, seg } from './api.js';
import {
  h, fill, table, panel, badge, fmtSec, dash, withLoading, showError, clearError, showNotice,
  roleChooser,
} from './dom.js';

export function mountKeys(outlet, ctx) {
  const me = ctx.me() || {};
  const user = h('input', { type: 'text', 'data-testid': 'key-create-user', placeholder: 'user name', autocomplete: 'off' });
  const role = roleChooser('key-create-role', me.roles, '', me.roles && me.roles.length ? me.roles[0] : '');
  const name = h('input', { type: 'text', 'data-testid': 'key-create-name', placeholder: 'e.g. laptop, ci', autocomplete: 'off' });
  const submit = h('button', { type: 'submit', class: 'primary', 'data-testid': 'key-create-submit' }, 'Create key');
  const secretBox = h('div', { class: 'secret-box', hidden: true });
  const form = h('form', { class: 'form', novalidate: true, onsubmit: (ev) => { ev.preventDefault(); create(); } },
    h('label', null, 'user ', user), h('label', null, 'role ', role), h('label', null, 'name ', name), submit);
  const body = h('div');
  const root = h('section', { class: 'page', 'data-testid': 'page-keys' },
    h('div', { class: 'page-head' }, h('h1', null, 'API keys')),
    panel('Create a key', null, form, secretBox),
    body);
  outlet.append(root);

  const load = () => withLoading(root, ctx, async () => {
    const data = await get('keys');
    if (!ctx.alive()) return;
    const keys = Array.isArray(data.keys) ? data.keys : [];
    fill(body, table(['id', 'user', 'role', 'name', 'created', 'state', ''],
      keys.map(keyRow), 'No API keys.'));
  });

  function keyRow(k) {
    const revoked = Number(k.revoked_at) > 0;
    const actions = h('td', { class: 'actions' });
    const tr = h('tr', { 'data-testid': 'key-row', 'data-id': k.id },
      h('td', { class: 'mono' }, dash(k.id)),
      h('td', null, dash(k.user)),
      h('td', { class: 'nowrap' }, dash(k.role)),
      h('td', null, dash(k.name)),
      h('td', { class: 'nowrap' }, fmtSec(k.created_at)),
      h('td', { title: revoked ? `revoked ${fmtSec(k.revoked_at)}` : undefined }, badge(revoked ? 'revoked' : 'active')),
      actions);
    if (!revoked) {
      const open = h('button', { type: 'button', 'data-testid': 'key-revoke', onclick: () => confirmStep() }, 'Revoke…');
      const confirmStep = () => {
        const yes = h('button', {
          type: 'button', class: 'danger', 'data-testid': 'key-revoke-confirm',
          onclick: async () => {
            clearError();
            yes.disabled = true;
            try {
              const res = await post(`keys/${seg(k.id)}/revoke`);
              if (!ctx.alive()) return;
              const nk = res.key || k;
              showNotice(`Revoked key ${dash(nk.id)} of ${dash(nk.user)}${nk.name ? ' (' + nk.name + ')' : ''}.`);
              await load();
            } catch (err) {
              ctx.fail(err);
              yes.disabled = false;
            }
          },
        }, 'Yes');
        const no = h('button', { type: 'button', onclick: () => fill(actions, open) }, 'No');
        fill(actions, h('span', { class: 'confirm' }, 'Really revoke? ', yes, ' ', no));
      };
      actions.append(open);
    }
    return tr;
  }

  async function create() {
    const req = { user: user.value.trim(), role: role.value.trim(), name: name.value.trim() };
    if (!req.user || !req.role) { showError('A key needs a user and a role.'); return; }
    clearError();
    submit.disabled = true;
    try {
      const res = await post('keys', req);
      if (!ctx.alive()) return;
      user.value = '';
      name.value = '';
      showSecret(res.key || {}, String(res.secret ?? ''));
      await load();
    } catch (err) {
      ctx.fail(err);
    } finally {
      submit.disabled = false;
    }
  }

  // The secret lives only in this box's text; copying reads it from there.
  function showSecret(key, secret) {
    const code = h('code', { class: 'secret', 'data-testid': 'key-secret' }, secret);
    const copy = h('button', {
      type: 'button', 'data-testid': 'key-secret-copy',
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(code.textContent);
          showNotice('The secret was copied to the clipboard.');
        } catch {
          window.getSelection().selectAllChildren(code);  // at least select it for Ctrl+C
          showNotice('Press Ctrl+C to copy the selected secret.');
        }
      },
    }, 'Copy');
    const done = h('button', {
      type: 'button', 'data-testid': 'key-secret-dismiss',
      onclick: () => { secretBox.replaceChildren(); secretBox.hidden = true; },
    }, 'Done');
    fill(secretBox, 
      h('p', { class: 'warning' },
        `New key ${dash(key.id)} for ${dash(key.user)} (${dash(key.role)}). Copy its secret now: it is shown once and cannot be retrieved again.`),
      h('div', { class: 'secret-line' }, code, copy, done));
    secretBox.hidden = false;
  }

  load();
}
