// The operators' console's single sign-on with OpenID Connect (issue 31,
// docs/console.md) in a real browser: headless Chromium (playwright-core)
// signs in at a real OpenID provider, oidc-provider (oauth_idp.mjs), whose
// dev interaction pages (login form: any login name; consent) it fills in.
// The console is oidc-provider's confidential client (authorization code +
// PKCE, client_secret_basic); a login name starting with "admin" puts the
// user in the group airlock-admins, which the config makes administrators.
//
//   admin-ann   reaches the console's pages as oidc:admin-ann@<issuer host>, then signs out
//   staff-bob   is refused: "not an administrator", no console session
//   a tampered or replayed state is refused
// Every outcome is audited; the authorization code is in no log.
//
// Chromium: $AIRLOCK_CHROMIUM, else /usr/bin/chromium.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { launchChromium } from './browser.mjs';

import { AIRLOCK_BIN, assertBinary, freePort, sleep, stopProcess } from './helpers.mjs';
import { ADMIN_GROUP, CONSOLE_CLIENT, startIdp } from './oauth_idp.mjs';

const WAIT = 15000;
const ID_TOKEN_TTL = 600;  // the provider's ID token lifetime (s): a console session ends with it at the latest

let tmp;
let configFile;
let idp;
let airlock;
let stderr = '';
let CONSOLE;  // http://127.0.0.1:PORT/console/
let issuerHost;
let browser;

const audit = () =>
  JSON.parse(execFileSync(AIRLOCK_BIN, ['audit', '--config', configFile, '--json', '--limit', '100000', '--type', 'event'],
    { encoding: 'utf8' }));
const tid = (page, id) => page.getByTestId(id);

before(async () => {
  assertBinary();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-console-sso-'));
  const port = await freePort();
  CONSOLE = `http://127.0.0.1:${port}/console/`;
  idp = await startIdp({ resource: `http://127.0.0.1:${port}/mcp`, consoleRedirectUri: `${CONSOLE}sso/callback`,
    idTokenTtl: ID_TOKEN_TTL });
  issuerHost = new URL(idp.issuer).host.replace(':', '_');
  const secretFile = path.join(tmp, 'console-secret');
  fs.writeFileSync(secretFile, `${CONSOLE_CLIENT.secret}\n`, { mode: 0o600 });
  configFile = path.join(tmp, 'airlock.json');
  fs.writeFileSync(configFile, JSON.stringify({
    server: { state_dir: path.join(tmp, 'state'), http: { console: { sso: {
      issuer: idp.issuer, client_id: CONSOLE_CLIENT.id, client_secret_file: secretFile,
      provider_name: 'Test IdP', admin_claim: 'groups', admin_values: [ADMIN_GROUP],
      // redirect_uri derived: http://127.0.0.1:PORT/console/sso/callback
    } } } },
  }));
  airlock = spawn(AIRLOCK_BIN, ['serve', '--http', `127.0.0.1:${port}`, '--config', configFile],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  airlock.stderr.on('data', (d) => { stderr += d; });
  airlock.stdout.resume();
  for (let i = 0; i < 200 && !stderr.includes(`127.0.0.1:${port}/mcp`); i++) {
    if (airlock.exitCode !== null) break;
    await sleep(100);
  }
  assert.ok(stderr.includes(`127.0.0.1:${port}/mcp`), `airlock did not start:\n${stderr}`);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close().catch(() => {});
  if (airlock) await stopProcess(airlock);
  if (idp) await idp.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

// A fresh browser context (no cookies at airlock or the provider).
async function openPage(t) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  t.after(() => context.close().catch(() => {}));
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT);
  const callbacks = [];  // the callback URLs the provider sent the browser to
  page.on('request', (r) => { if (r.url().startsWith(`${CONSOLE}sso/callback`)) callbacks.push(r.url()); });
  return { page, context, callbacks };
}

// From the console's sign-in page through the provider's login and consent
// pages as `login`; resolves on the provider's redirect back to airlock.
// `tamper(url)`: the authorization request is sent again changed (as an
// attacker in the middle would), the provider echoing what it got.
async function signInAtProvider(page, login, tamper = null) {
  const authRequests = [];
  const onRequest = (r) => { if (r.url().startsWith(`${idp.issuer}/auth?`)) authRequests.push(r.url()); };
  page.on('request', onRequest);
  await page.goto(CONSOLE);
  await tid(page, 'sso-signin').waitFor({ state: 'visible' });
  assert.equal(await tid(page, 'sso-signin').textContent(), 'Sign in with Test IdP');
  await tid(page, 'sso-signin').click();
  await page.waitForURL((u) => u.href.startsWith(idp.issuer));
  page.off('request', onRequest);
  const auth = new URL(authRequests[0]);
  assert.equal(auth.searchParams.get('code_challenge_method'), 'S256');
  assert.match(auth.searchParams.get('code_challenge'), /^[\w-]{43}$/);
  assert.match(auth.searchParams.get('state'), /^[0-9a-f]{32}$/);
  assert.match(auth.searchParams.get('nonce'), /^[0-9a-f]{32}$/);
  if (tamper) {
    await page.goto(tamper(auth).href);
    await page.waitForURL((u) => u.href.startsWith(`${idp.issuer}/interaction/`));
  }
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.locator('button[type="submit"]').click();
  await page.locator('button', { hasText: 'Continue' }).click();  // consent
}

describe('console: single sign-on with OpenID Connect', () => {
  it('the sign-in page offers the provider and the key form', async (t) => {
    const { page } = await openPage(t);
    await page.goto(CONSOLE);
    await tid(page, 'sso-signin').waitFor({ state: 'visible' });
    assert.equal(await tid(page, 'sso-signin').textContent(), 'Sign in with Test IdP');
    assert.equal(await tid(page, 'signin-form').isVisible(), true, 'allow_key_signin defaults to true');
    const o = await (await fetch(`${CONSOLE}api/signin-options`)).json();
    assert.deepEqual(o, { key_signin: true, sso: { provider: 'Test IdP', login: '/console/sso/login' } });
  });

  it('an administrator reaches the console, for at most the ID token\'s lifetime, and signs out', async (t) => {
    const { page, context, callbacks } = await openPage(t);
    await signInAtProvider(page, 'admin-ann');
    await page.locator('#topbar:not([hidden])').waitFor();
    // The ID token was issued before this moment, so it expires by
    // signedIn + ID_TOKEN_TTL (the sign-in itself can take seconds on a
    // loaded machine, which is why the bound is not taken before it).
    const signedIn = Date.now();
    const user = `oidc:admin-ann@${issuerHost}`;
    assert.equal(await tid(page, 'whoami').textContent(), `signed in as ${user} (admin)`);
    await page.waitForSelector('[data-testid="page-proposals"][data-loaded="true"]');
    for (const p of ['audit', 'live']) {
      await page.goto(`${CONSOLE}#/${p}`);
      await page.waitForSelector(`[data-testid="page-${p}"][data-loaded="true"]`);
    }
    // The session cookie: HttpOnly, Strict; the pre-login cookie is spent.
    const cookies = (await context.cookies()).filter((c) => c.name.startsWith('airlock_'));
    assert.deepEqual(cookies.map((c) => c.name), ['airlock_console']);
    assert.equal(cookies[0].httpOnly, true);
    assert.equal(cookies[0].sameSite, 'Strict');
    assert.ok(cookies[0].expires * 1000 <= signedIn + ID_TOKEN_TTL * 1000 + 2000, 'the cookie outlives the ID token');
    const who = await (await context.request.get(`${CONSOLE}api/whoami`)).json();
    assert.ok(Date.parse(who.expires_at) <= signedIn + ID_TOKEN_TTL * 1000 + 2000, who.expires_at);

    const code = new URL(callbacks[0]).searchParams.get('code');
    assert.ok(code, 'the provider sent a code');
    await tid(page, 'signout').click();
    await tid(page, 'sso-signin').waitFor({ state: 'visible' });
    assert.equal((await context.request.get(`${CONSOLE}api/whoami`)).status(), 401, 'signed out');

    const rows = audit();
    const signin = rows.find((r) => r.kind === 'console_signin' && r.actor === user);
    assert.ok(signin, JSON.stringify(rows));
    assert.equal(signin.detail.auth, 'oidc');
    assert.equal(signin.detail.role, 'admin');
    assert.ok(rows.some((r) => r.kind === 'console_signout' && r.actor === user));
    const all = JSON.stringify(rows) + stderr;
    assert.ok(!all.includes(code), 'the authorization code is in no log');
  });

  it('a user who is not an administrator is refused and audited', async (t) => {
    const { page, context } = await openPage(t);
    await signInAtProvider(page, 'staff-bob');
    await tid(page, 'sso-result').waitFor();
    assert.match(await page.locator('h1').textContent(), /Not an administrator/);
    assert.match(await tid(page, 'sso-message').textContent(), /not an administrator/);
    assert.deepEqual((await context.cookies()).filter((c) => c.name.startsWith('airlock_console')), [],
      'no console session');
    assert.equal((await context.request.get(`${CONSOLE}api/whoami`)).status(), 401);
    const denied = audit().find((r) => r.kind === 'console_signin_denied' && r.actor === `oidc:staff-bob@${issuerHost}`);
    assert.ok(denied, 'the refusal is audited');
    assert.equal(denied.detail.reason, 'not an administrator');
  });

  it('a tampered state and a replayed callback are refused', async (t) => {
    const { page, context } = await openPage(t);
    await signInAtProvider(page, 'admin-tampered', (auth) => {
      auth.searchParams.set('state', 'f'.repeat(32));
      return auth;
    });
    await tid(page, 'sso-result').waitFor();
    assert.match(await page.locator('h1').textContent(), /Sign-in refused/);
    assert.match(await tid(page, 'sso-message').textContent(), /unknown or already used sign-in state/);
    assert.equal((await context.request.get(`${CONSOLE}api/whoami`)).status(), 401);

    // A full sign-in, then its callback URL again: the state is used up.
    const second = await openPage(t);
    await signInAtProvider(second.page, 'admin-replay');
    await second.page.locator('#topbar:not([hidden])').waitFor();
    const used = second.callbacks[0];
    assert.ok(used);
    const third = await openPage(t);
    await third.page.goto(used);
    await tid(third.page, 'sso-result').waitFor();
    assert.match(await tid(third.page, 'sso-message').textContent(), /unknown or already used sign-in state/);
    assert.equal((await third.context.request.get(`${CONSOLE}api/whoami`)).status(), 401);
    const reasons = audit().filter((r) => r.kind === 'console_signin_denied').map((r) => r.detail?.reason ?? '');
    assert.ok(reasons.some((r) => /unknown or already used sign-in state/.test(r)), reasons.join('\n'));
  });
});
