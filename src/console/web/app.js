// app.js — the console's entry point: asks whoami whether a session exists, shows the sign-in
// form or the app (top bar, nav, the routed page), signs in (the API key is sent once, then
// dropped) and out, and sends every 401 back to the sign-in form with its message.

import { get, post, setCsrf, onUnauthorized } from './api.js';
import { showError, clearError, showNotice, clearNotice, fmtAny } from './dom.js';
import { Router } from './router.js';
import { mountProposals, mountProposal } from './proposals.js';
import { mountTools } from './tools.js';
import { mountAudit, mountRun } from './audit.js';
import { mountKeys } from './keys.js';
import { mountLive } from './live.js';

const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);
const els = {
  topbar: document.getElementById('topbar'),
  main: document.getElementById('main'),
  signin: document.getElementById('signin'),
  form: $('signin-form'),
  key: $('signin-key'),
  submit: $('signin-submit'),
  sso: $('sso'),
  ssoSignin: $('sso-signin'),
  whoami: $('whoami'),
  expiry: $('session-expiry'),
  signout: $('signout'),
};

let me = null;  // the whoami answer: {user, role, csrf, expires_at, roles, endpoints}

const routes = [
  { path: ['proposals'], nav: 'proposals', mount: mountProposals },
  { path: ['proposals', ':id'], nav: 'proposals', mount: mountProposal },
  { path: ['tools'], nav: 'tools', mount: mountTools },
  { path: ['audit'], nav: 'audit', mount: mountAudit },
  { path: ['audit', 'run', ':id'], nav: 'audit', mount: mountRun },
  { path: ['keys'], nav: 'keys', mount: mountKeys },
  { path: ['live'], nav: 'live', mount: mountLive },
];

const router = new Router(els.main, routes, {
  context: { me: () => me },
  onRoute(route) {
    clearError();
    clearNotice();
    for (const a of document.querySelectorAll('[data-nav]')) {
      const current = a.getAttribute('data-nav') === route.nav;
      a.classList.toggle('active', current);
      if (current) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    refreshSession();
  },
});

// Keeps the top bar's session expiry (sliding) and the CSRF token current.
function refreshSession() {
  get('whoami').then((w) => { if (me) setMe({ ...me, ...w }); }).catch(() => {});
}

function setMe(who) {
  me = who;
  setCsrf(who.csrf);
  els.whoami.textContent = `signed in as ${who.user ?? '?'} (${who.role ?? '?'})`;
  els.whoami.title = els.whoami.textContent;  // the bar may cut a long name short
  els.expiry.textContent = who.expires_at ? `session expires ${fmtAny(who.expires_at)}` : '';
}

function showApp(who) {
  setMe(who);
  els.signin.hidden = true;
  els.topbar.hidden = false;
  els.main.hidden = false;
  clearError();
  document.title = 'airlock console';
  router.start();
}

function showSignin(message) {
  me = null;
  setCsrf('');
  router.stop();
  els.topbar.hidden = true;
  els.main.hidden = true;
  els.whoami.textContent = '';
  els.expiry.textContent = '';
  els.signin.hidden = false;
  els.submit.disabled = false;
  clearNotice();
  if (message) showError(message);
  else clearError();
  document.title = 'sign in · airlock console';
  els.key.focus();
  showSigninOptions();
}

// Which sign-ins this server offers: single sign-on ("Sign in with <provider>")
// and/or the API key form.
async function showSigninOptions() {
  try {
    const o = await get('signin-options', undefined, { quiet401: true });
    if (o.sso) {
      els.ssoSignin.textContent = `Sign in with ${o.sso.provider}`;
      els.ssoSignin.setAttribute('href', o.sso.login);
      els.sso.hidden = false;
    } else {
      els.sso.hidden = true;
    }
    els.form.hidden = !o.key_signin;
  } catch {
    // an older server: the key form only
  }
}

onUnauthorized((message) => {
  if (me) showSignin(message || 'Your session has ended; sign in again.');
});

els.form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  let key = els.key.value.trim();
  els.key.value = '';  // the key is not kept in the page
  if (!key) {
    showError('Enter an admin API key.');
    return;
  }
  clearError();
  els.submit.disabled = true;
  try {
    const headers = { Authorization: 'Bearer ' + key };
    key = '';
    const session = await post('signin', undefined, { headers, quiet401: true });
    delete headers.Authorization;
    setCsrf(session.csrf);
    let who = session;
    try {
      who = { ...session, ...(await get('whoami', undefined, { quiet401: true })) };
    } catch {
      // whoami is only for the role list; the sign-in answer is enough to go on
    }
    showApp(who);
  } catch (err) {
    showError(err.message);
  } finally {
    key = '';
    els.submit.disabled = false;
  }
});

els.signout.addEventListener('click', async () => {
  els.signout.disabled = true;
  try {
    await post('signout', undefined, { quiet401: true });
  } catch {
    // signed out either way: the session may already have expired
  } finally {
    els.signout.disabled = false;
  }
  showSignin();
  showNotice('Signed out.');
});

async function boot() {
  try {
    const who = await get('whoami', undefined, { quiet401: true });
    showApp(who);
  } catch (err) {
    showSignin(err.status === 401 ? '' : err.message);
  }
}

boot();
