// A user signs an MCP client in to airlock with the OAuth 2.1 authorization
// code flow + PKCE (issue 31, docs/security.md), each end of it stock: the
// SDK clients' own auth code, a real authorization server (oidc-provider,
// oauth_idp.mjs, with dynamic client registration), and a real browser
// (headless Chromium through playwright-core) for the user's step.
//
// The client only knows airlock's URL. From the 401's resource_metadata it
// finds the Protected Resource Metadata, then the provider's metadata,
// registers itself (RFC 7591, a public client with a loopback redirect URI),
// and hands the authorization URL (PKCE S256, state, resource = airlock's
// resource URI) to redirectToAuthorization; the test opens it in Chromium,
// signs in on the provider's login page, consents, and the redirect lands on
// the test's callback server, which checks `state` and passes the code to
// transport.finishAuth. A new connection then lists tools and runs code.
//
//   SDK v1 (@modelcontextprotocol/sdk)          staff-sam   → role reader
//   SDK v2 (@modelcontextprotocol/client) modern staff-mia   → role reader
//   SDK v2 legacy era                            admin-ada   → role admin
//   SDK v2 and v1, a user of no role's group     guest-gus   → 403 insufficient_scope
//
// Roles come from the `groups` claim the provider puts in the access token.
// The audit log names each caller oauth:<login>@<issuer host> with the
// client_id the SDK registered; no code or token is in any log.
//
// Chromium: $AIRLOCK_CHROMIUM, else /usr/bin/chromium.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { launchChromium } from './browser.mjs';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError as UnauthorizedErrorV1 } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  Client as ClientV2,
  InsufficientScopeError,
  StreamableHTTPClientTransport as TransportV2,
  UnauthorizedError as UnauthorizedErrorV2,
} from '@modelcontextprotocol/client';

import { AIRLOCK_BIN, assertBinary, freePort, runCode, sleep, stopProcess, textOf } from './helpers.mjs';
import { ADMIN_GROUP, startIdp } from './oauth_idp.mjs';

const WAIT = 15000;
const MODERN = '2026-07-28';

let tmp;
let configFile;
let idp;
let issuerHost;  // 127.0.0.1_PORT: the issuer's host in audit user names
let airlock;
let stderr = '';
let url;          // airlock's MCP endpoint = its resource URI
let browser;
let callback;     // the test's redirect target: { url, next(), server }
const secrets = [];  // codes and tokens seen, none of which may be logged

const audit = (args = []) =>
  JSON.parse(execFileSync(AIRLOCK_BIN, ['audit', '--config', configFile, '--json', '--limit', '100000', ...args],
    { encoding: 'utf8' }));
const jwtClaims = (t) => JSON.parse(Buffer.from(t.split('.')[1], 'base64url'));

// The redirect URI's server, as a native app runs one on loopback: it takes
// one authorization response at a time, checking its `state`.
async function startCallbackServer() {
  let waiter = null;
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://127.0.0.1');
    if (u.pathname !== '/callback' || !waiter) {
      res.writeHead(404).end();
      return;
    }
    const w = waiter;
    waiter = null;
    const ok = u.searchParams.get('state') === w.state;
    res.writeHead(ok ? 200 : 400, { 'content-type': 'text/html' })
      .end(ok ? '<h1 id="done">Signed in</h1>You may close this window.' : '<h1>state mismatch</h1>');
    if (ok) w.resolve(u.searchParams);
    else w.reject(new Error(`callback state ${u.searchParams.get('state')} is not ${w.state}`));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/callback`,
    // The next authorization response, which must carry `state`.
    next(state) {
      return new Promise((resolve, reject) => { waiter = { state, resolve, reject }; });
    },
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
  };
}

// An OAuthClientProvider as an app implements it (both SDKs' interface; the
// v2 extras — discovery state for the callback leg — are optional in v1):
// everything kept in memory; redirectToAuthorization records the URL the
// app would open in the user's browser.
class BrowserAppProvider {
  constructor(name, redirectUrl) {
    this.name = name;
    this._redirectUrl = redirectUrl;
    this.authorizationUrls = [];
    this._client = undefined;
    this._tokens = undefined;
    this._verifier = undefined;
    this._discovery = undefined;
    this.lastState = undefined;
  }
  get redirectUrl() { return this._redirectUrl; }
  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [this._redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    this.lastState = randomBytes(16).toString('hex');
    return this.lastState;
  }
  clientInformation() { return this._client; }
  saveClientInformation(info) { this._client = info; }
  tokens() { return this._tokens; }
  saveTokens(tokens) {
    this._tokens = tokens;
    secrets.push(tokens.access_token, ...(tokens.refresh_token ? [tokens.refresh_token] : []));
  }
  redirectToAuthorization(u) { this.authorizationUrls.push(new URL(u)); }
  saveCodeVerifier(v) { this._verifier = v; }
  codeVerifier() {
    if (!this._verifier) throw new Error('no code verifier saved');
    return this._verifier;
  }
  saveDiscoveryState(s) { this._discovery = s; }
  discoveryState() { return this._discovery; }
  invalidateCredentials(scope) {
    if (scope === 'all' || scope === 'client') this._client = undefined;
    if (scope === 'all' || scope === 'tokens') this._tokens = undefined;
    if (scope === 'all' || scope === 'verifier') this._verifier = undefined;
    if (scope === 'all' || scope === 'discovery') this._discovery = undefined;
  }
}

// A fetch that records what the SDK asks of whom, to show it discovered
// everything itself.
function recordingFetch() {
  const log = [];
  const f = async (input, init) => {
    const r = await fetch(input, init);
    const u = new URL(input instanceof Request ? input.url : String(input));
    log.push(`${init?.method ?? (input instanceof Request ? input.method : 'GET')} ${u.origin}${u.pathname} ${r.status}`);
    return r;
  };
  return { fetch: f, log };
}

// The user's step: the authorization URL in a fresh browser (no session at
// the provider), sign in as `login`, consent; resolves to the callback's
// query parameters.
async function signInInBrowser(t, authorizationUrl, state, login) {
  const context = await browser.newContext();
  t.after(() => context.close().catch(() => {}));
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT);
  const landed = callback.next(state);
  await page.goto(authorizationUrl.href);
  await page.waitForURL((u) => u.href.startsWith(`${idp.issuer}/interaction/`));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.locator('button[type="submit"]').click();
  await page.locator('button', { hasText: 'Continue' }).click();  // consent
  const params = await landed;
  await page.locator('#done').waitFor();  // the browser got the callback page
  secrets.push(params.get('code'));
  return params;
}

// The authorization request the SDK built: PKCE S256, the state it got from
// the provider, the resource indicator, the registered client and redirect.
function checkAuthorizationUrl(provider) {
  assert.equal(provider.authorizationUrls.length, 1, 'one authorization request');
  const a = provider.authorizationUrls[0];
  assert.equal(`${a.origin}${a.pathname}`, `${idp.issuer}/auth`);
  const q = a.searchParams;
  assert.equal(q.get('response_type'), 'code');
  assert.equal(q.get('code_challenge_method'), 'S256');
  assert.match(q.get('code_challenge'), /^[\w-]{43}$/);
  assert.equal(q.get('state'), provider.lastState);
  assert.equal(q.get('resource'), url, 'RFC 8707 resource = airlock\'s resource URI');
  assert.equal(q.get('redirect_uri'), callback.url);
  assert.equal(q.get('client_id'), provider.clientInformation().client_id);
  assert.ok(q.get('scope').split(' ').includes('mcp:use'), q.get('scope'));
}

// The discovery chain, in order, before the browser step.
function checkDiscovery(log) {
  const mcp = `POST ${url} 401`;
  const prm = `GET ${new URL(url).origin}/.well-known/oauth-protected-resource/mcp 200`;
  const i = log.indexOf(mcp);
  const j = log.indexOf(prm);
  const k = log.findIndex((l) => /^GET .*\/\.well-known\/(oauth-authorization-server|openid-configuration) 200$/.test(l)
    && l.includes(idp.issuer));
  const reg = log.indexOf(`POST ${idp.issuer}/reg 201`);
  assert.ok(i >= 0 && i < j && j < k && k < reg, log.join('\n'));
}

// The access token the SDK got: for airlock's resource, this user and client.
function checkToken(provider, login) {
  const c = jwtClaims(provider.tokens().access_token);
  assert.equal(c.iss, idp.issuer);
  assert.deepEqual([c.aud].flat(), [url], 'aud = airlock\'s resource URI');
  assert.equal(c.sub, login);
  assert.equal(c.client_id, provider.clientInformation().client_id);
  assert.ok(c.scope.split(' ').includes('mcp:use'), c.scope);
  return c;
}

const SDKS = {
  v1: {
    Unauthorized: UnauthorizedErrorV1,
    transport: (provider, opts) => new TransportV1(new URL(url), { authProvider: provider, ...opts }),
    client: (name) => new ClientV1({ name, version: '0.0.0' }, { capabilities: {} }),
    finishAuth: (transport, params) => transport.finishAuth(params.get('code')),
  },
  ...Object.fromEntries([['modern', { mode: { pin: MODERN } }], ['legacy', undefined]].map(([era, versionNegotiation]) => [
    `v2 ${era}`, {
      era,
      Unauthorized: UnauthorizedErrorV2,
      transport: (provider, opts) => new TransportV2(new URL(url), { authProvider: provider, ...opts }),
      client: (name) => new ClientV2({ name, version: '0.0.0' },
        { capabilities: {}, ...(versionNegotiation ? { versionNegotiation } : {}) }),
      // v2 takes the whole callback: it checks `iss` (RFC 9207) against the provider's metadata
      finishAuth: (transport, params) => transport.finishAuth(params),
    }])),
};

// The whole flow with `sdk` as `login`: up to and including finishAuth.
// Returns the provider (holding the tokens) and the discovery log.
async function authorize(t, sdk, name, login) {
  const provider = new BrowserAppProvider(name, callback.url);
  const rec = recordingFetch();
  const transport = sdk.transport(provider, { fetch: rec.fetch });
  const client = sdk.client(name);
  await assert.rejects(client.connect(transport), (e) => {
    assert.ok(e instanceof sdk.Unauthorized, `connect stops at the user's step with UnauthorizedError, not: ${e?.stack ?? e}`);
    return true;
  });
  await client.close().catch(() => {});
  checkDiscovery(rec.log);
  checkAuthorizationUrl(provider);
  const params = await signInInBrowser(t, provider.authorizationUrls[0], provider.lastState, login);
  if (sdk.era) assert.equal(params.get('iss'), idp.issuer, 'RFC 9207 iss in the authorization response');
  await sdk.finishAuth(transport, params);
  assert.ok(rec.log.some((l) => l === `POST ${idp.issuer}/token 200`), rec.log.join('\n'));
  t.diagnostic(`${name}: ${rec.log.join(' → ')}; scope asked "${provider.authorizationUrls[0].searchParams.get('scope')}"`
    + `, refresh token: ${Boolean(provider.tokens().refresh_token)}`);
  return provider;
}

before(async () => {
  assertBinary();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-oauth-code-'));
  const port = await freePort();
  url = `http://127.0.0.1:${port}/mcp`;
  idp = await startIdp({ resource: url, registration: true });
  issuerHost = new URL(idp.issuer).host.replace(':', '_');
  callback = await startCallbackServer();
  configFile = path.join(tmp, 'airlock.json');
  fs.writeFileSync(configFile, JSON.stringify({
    server: { state_dir: path.join(tmp, 'state'), http: { oauth: {
      issuer: idp.issuer, resource: url, scopes_supported: ['mcp:use'], required_scope: 'mcp:use',
      role_rules: [
        { claim: 'groups', value: ADMIN_GROUP, role: 'admin' },
        { claim: 'groups', value: 'staff', role: 'reader' },
      ],
    } } },
  }));
  airlock = spawn(AIRLOCK_BIN, ['serve', '--http', `127.0.0.1:${port}`, '--config', configFile],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  airlock.stderr.on('data', (d) => { stderr += d; });
  airlock.stdout.resume();
  for (let i = 0; i < 200 && !stderr.includes(url); i++) {
    if (airlock.exitCode !== null) break;
    await sleep(100);
  }
  assert.ok(stderr.includes(url), `airlock did not start:\n${stderr}`);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close().catch(() => {});
  if (airlock) await stopProcess(airlock);
  await callback?.close();
  if (idp) await idp.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('OAuth authorization code + PKCE: the SDK clients sign a user in through a browser', () => {
  const users = { v1: ['staff-sam', 'reader'], 'v2 modern': ['staff-mia', 'reader'], 'v2 legacy': ['admin-ada', 'admin'] };
  const clientIds = {};

  for (const [name, [login, role]] of Object.entries(users)) {
    it(`SDK ${name}: discovers, registers, signs ${login} in, then lists tools and runs code`, async (t) => {
      const sdk = SDKS[name];
      const appName = `oauth-code-${name.replace(' ', '-')}`;
      const provider = await authorize(t, sdk, appName, login);
      const claims = checkToken(provider, login);
      assert.deepEqual(claims.groups, [role === 'admin' ? ADMIN_GROUP : 'staff']);
      clientIds[name] = provider.clientInformation().client_id;

      // A new connection with the tokens the provider now holds.
      const client = sdk.client(appName);
      await client.connect(sdk.transport(provider));
      try {
        if (sdk.era === 'modern') assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
        if (sdk.era === 'legacy') assert.notEqual(client.getNegotiatedProtocolVersion(), MODERN);
        const { tools } = await client.listTools();
        assert.ok(tools.some((x) => x.name === 'run_code'), tools.map((x) => x.name).join(' '));
        const result = await runCode(client, { language: 'python', code: 'print(6 * 7)' });
        assert.equal(result.isError ?? false, false, textOf(result));
        assert.match(textOf(result), /42/);
      } finally {
        await client.close();
      }
      assert.equal(provider.authorizationUrls.length, 1, 'no second trip to the browser');

      // SDK v2 asks for offline_access (it registered for refresh_token):
      // an access token airlock refuses is replaced through the refresh
      // token, for the same resource, without the browser.
      if (sdk.era) {
        const { refresh_token: refresh, access_token: old } = provider.tokens();
        assert.ok(refresh, 'a refresh token');
        provider.saveTokens({ ...provider.tokens(), access_token: `${old.slice(0, -8)}AAAAAAAA` });
        const again = sdk.client(appName);
        await again.connect(sdk.transport(provider));
        try {
          assert.ok((await again.listTools()).tools.length > 0);
        } finally {
          await again.close();
        }
        assert.notEqual(provider.tokens().access_token, old, 'a new access token');
        assert.deepEqual(checkToken(provider, login).groups, claims.groups);
        assert.equal(provider.authorizationUrls.length, 1, 'no second trip to the browser');
      }

      const call = audit(['--user', `oauth:${login}@${issuerHost}`])
        .find((r) => r.kind === 'tool_call' && r.target === 'run_code');
      assert.ok(call, `the run is audited as oauth:${login}@${issuerHost}`);
      assert.equal(call.detail.auth, 'oauth');
      assert.equal(call.detail.key_id, clientIds[name], 'the registered client_id');
      assert.equal(call.detail.role, role);
    });
  }

  it('each SDK registered its own client', () => {
    const ids = Object.values(clientIds);
    assert.equal(ids.length, 3);
    assert.equal(new Set(ids).size, 3, ids.join(' '));
  });

  it('a user whose groups map to no role is refused with 403 insufficient_scope', async (t) => {
    // SDK v2 asked to throw on insufficient_scope (the default re-authorizes): the reason is the challenge's.
    const sdk = SDKS['v2 modern'];
    const provider = await authorize(t, sdk, 'oauth-code-guest-v2', 'guest-gus');
    assert.deepEqual(checkToken(provider, 'guest-gus').groups, ['guests']);
    const client = sdk.client('oauth-code-guest-v2');
    await assert.rejects(client.connect(new TransportV2(new URL(url), { authProvider: provider, onInsufficientScope: 'throw' })),
      (e) => {
        assert.ok(e instanceof InsufficientScopeError, String(e));
        assert.match(e.errorDescription ?? '', /no role rule matches/);
        return true;
      });
    await client.close().catch(() => {});
    // With its default (re-authorize), it refreshes the token, is refused
    // again, and gives up after its step-up retries: no browser trip.
    const c2 = sdk.client('oauth-code-guest-v2');
    await assert.rejects(c2.connect(sdk.transport(provider)), /403 insufficient_scope after step-up/);
    await c2.close().catch(() => {});
    assert.equal(provider.authorizationUrls.length, 1);

    // The same token on the wire.
    const r = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${provider.tokens().access_token}`, 'content-type': 'application/json',
        accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    assert.equal(r.status, 403);
    assert.match(r.headers.get('www-authenticate'), /error="insufficient_scope"/);
    assert.match(await r.text(), /no role rule matches/);

    // SDK v1 with its default: on the 403 it re-authorizes once, i.e. sends
    // the user to the browser again, and stops with UnauthorizedError.
    const v1 = SDKS.v1;
    const p1 = await authorize(t, v1, 'oauth-code-guest-v1', 'guest-gus');
    const c1 = v1.client('oauth-code-guest-v1');
    await assert.rejects(c1.connect(v1.transport(p1)), (e) => e instanceof UnauthorizedErrorV1, 'refused');
    await c1.close().catch(() => {});
    assert.equal(p1.authorizationUrls.length, 2, 'the 403 sent the user back to the provider');

    const denied = audit(['--user', 'oauth']).filter((x) => x.kind === 'auth_refused' && x.detail?.status === 403);
    const ids = [provider, p1].map((p) => p.clientInformation().client_id);
    for (const id of ids) {
      assert.ok(denied.some((x) => x.detail?.client_id === id && /no role rule matches/.test(x.detail?.reason ?? '')),
        JSON.stringify(denied));
    }
    assert.equal(audit(['--user', `oauth:guest-gus@${issuerHost}`]).filter((x) => x.kind === 'tool_call').length, 0);
  });

  it('no authorization code or token is in the audit log or the server log', () => {
    assert.ok(secrets.length >= 8, `${secrets.length} secrets seen`);
    const all = JSON.stringify(audit()) + stderr;
    for (const s of secrets) assert.ok(!all.includes(s), 'a code or token was logged');
  });
});
