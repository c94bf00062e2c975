// airlock as an OAuth 2.1 resource server (docs/security.md) against a real
// authorization server, oidc-provider (oauth_idp.mjs): the MCP SDK client
// discovers it through airlock's Protected Resource Metadata and connects
// with the client credentials grant; roles follow scopes; the bad-token
// matrix is refused with 401/403 and a clear reason; a key rotation at the
// provider is picked up without restarting airlock. A second airlock
// introspects opaque tokens (RFC 7662): one runs code, and once revoked at
// the provider it is refused after the cache window, audited.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createPrivateKey, createHmac, generateKeyPairSync, sign as cryptoSign } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import {
  Client as ClientV2,
  ClientCredentialsProvider as ClientCredentialsProviderV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client';
import { AIRLOCK_BIN, assertBinary, freePort, newClient, runCode, stopProcess, textOf, sleep } from './helpers.mjs';
import { startIdp, CLIENTS } from './oauth_idp.mjs';

let idp;
let airlock;
let url;
let stderr = '';
let configFile;
// The introspecting airlock: opaque tokens for its resource url2.
let airlock2;
let url2;
let stderr2 = '';
let configFile2;
const audit = (args = [], config = configFile) =>
  JSON.parse(execFileSync(AIRLOCK_BIN, ['audit', '--config', config, '--json', ...args], { encoding: 'utf8' }));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-oauth-'));

const b64u = (x) => Buffer.from(typeof x === 'string' ? x : JSON.stringify(x)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

// A token signed by the provider's own current key (its private JWK), with
// any claims: for the time and issuer cases the provider would never mint.
function forge(claims, { key = idp.keys()[0], header = {} } = {}) {
  const h = { alg: 'RS256', typ: 'at+jwt', kid: key.kid, ...header };
  const input = `${b64u(h)}.${b64u(claims)}`;
  const sig = cryptoSign('sha256', Buffer.from(input), createPrivateKey({ key, format: 'jwk' }));
  return `${input}.${sig.toString('base64url')}`;
}
const goodClaims = () => ({ iss: idp.issuer, sub: 'e2e-user', aud: url, scope: 'mcp:use', client_id: 'e2e-user',
  iat: now(), exp: now() + 300 });

async function initialize(token, target = url) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const r = await fetch(target, { method: 'POST', headers, body: JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'oauth-e2e', version: '1' } } }) });
  const body = await r.text();
  let message = body;
  try { message = JSON.parse(body).error?.message ?? body; } catch { /* not JSON */ }
  return { status: r.status, challenge: r.headers.get('www-authenticate') ?? '', body: message };
}

// `airlock serve --http` on `port` with `config`; resolves once it prints `target`.
async function serve(port, config, target, onStderr) {
  const proc = spawn(AIRLOCK_BIN, ['serve', '--http', `127.0.0.1:${port}`, '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (d) => { err += d; onStderr(d); });
  proc.stdout.resume();
  for (let i = 0; i < 200 && !err.includes(target); i++) {
    if (proc.exitCode !== null) break;
    await sleep(100);
  }
  assert.ok(err.includes(target), `airlock did not start:\n${err}`);
  return proc;
}

before(async () => {
  assertBinary();
  const port = await freePort();
  const port2 = await freePort();
  url = `http://127.0.0.1:${port}/mcp`;
  url2 = `http://127.0.0.1:${port2}/mcp`;
  idp = await startIdp({ resource: url, opaqueResources: [url2, 'http://127.0.0.1:3/opaque-other'] });
  const config = path.join(tmp, 'airlock.json');
  configFile = config;
  fs.writeFileSync(config, JSON.stringify({
    server: { state_dir: path.join(tmp, 'state'), http: { oauth: {
      issuer: idp.issuer, resource: url, scopes_supported: ['mcp:use'],
      role_rules: [{ scope: 'mcp:use', role: 'reader' }], jwks_refresh_min_s: 1,
    } } },
  }));
  airlock = await serve(port, config, url, (d) => { stderr += d; });

  const secretFile = path.join(tmp, 'introspection-secret');
  fs.writeFileSync(secretFile, `${CLIENTS.introspector.secret}\n`, { mode: 0o600 });
  configFile2 = path.join(tmp, 'airlock2.json');
  fs.writeFileSync(configFile2, JSON.stringify({
    server: { state_dir: path.join(tmp, 'state2'), http: { oauth: {
      issuer: idp.issuer, resource: url2, scopes_supported: ['mcp:use'],
      role_rules: [{ scope: 'mcp:use', role: 'reader' }],
      // the endpoint comes from the provider's discovery document
      introspection: { client_id: CLIENTS.introspector.id, client_secret_file: secretFile, cache_s: 1 },
    } } },
  }));
  airlock2 = await serve(port2, configFile2, url2, (d) => { stderr2 += d; });
});

after(async () => {
  if (airlock) await stopProcess(airlock);
  if (airlock2) await stopProcess(airlock2);
  if (idp) await idp.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('Protected Resource Metadata names the authorization server', async () => {
  for (const p of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
    const r = await fetch(new URL(p, url));
    assert.equal(r.status, 200, p);
    const m = await r.json();
    assert.equal(m.resource, url);
    assert.deepEqual(m.authorization_servers, [idp.issuer]);
    assert.deepEqual(m.scopes_supported, ['mcp:use']);
  }
  const r = await initialize(undefined);
  assert.equal(r.status, 401);
  assert.match(r.challenge, /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp", scope="mcp:use"$/);
});

test('the SDK client connects with client credentials and runs code', async () => {
  const authProvider = new ClientCredentialsProvider({
    clientId: CLIENTS.user.id, clientSecret: CLIENTS.user.secret, scope: 'mcp:use', expectedIssuer: idp.issuer });
  const client = newClient('oauth-e2e');
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider }));
  try {
    const result = await runCode(client, { language: 'python', code: 'print(6 * 7)' });
    assert.equal(result.isError ?? false, false, textOf(result));
    assert.match(textOf(result), /42/);
  } finally {
    await client.close();
  }
});

// The SDK v2 client (@modelcontextprotocol/client) does the same on its own:
// the 401's resource_metadata → airlock's Protected Resource Metadata → the
// provider's discovery document → a client credentials token for the
// resource, in the modern era (pinned 2026-07-28) and in the legacy one.
for (const [era, versionNegotiation] of [['modern', { mode: { pin: '2026-07-28' } }], ['legacy', undefined]]) {
  test(`the SDK v2 client connects with client credentials and runs code (${era} era)`, async () => {
    const authProvider = new ClientCredentialsProviderV2({
      clientId: CLIENTS.user.id, clientSecret: CLIENTS.user.secret, scope: 'mcp:use', expectedIssuer: idp.issuer });
    const client = new ClientV2({ name: `oauth-e2e-v2-${era}`, version: '0.0.0' },
      { capabilities: {}, ...(versionNegotiation ? { versionNegotiation } : {}) });
    await client.connect(new StreamableHTTPClientTransportV2(new URL(url), { authProvider }));
    try {
      assert.ok(authProvider.tokens()?.access_token, 'the provider holds the token it fetched');
      if (era === 'modern') assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      else assert.notEqual(client.getNegotiatedProtocolVersion(), '2026-07-28');
      const result = await runCode(client, { language: 'python', code: 'print(6 * 7)' });
      assert.equal(result.isError ?? false, false, textOf(result));
      assert.match(textOf(result), /42/);
    } finally {
      await client.close();
    }
  });
}

test('a valid token matching no role rule gets 403 insufficient_scope', async () => {
  const token = await idp.token(CLIENTS.nobody);
  const r = await initialize(token);
  assert.equal(r.status, 403, r.body);
  assert.match(r.challenge, /error="insufficient_scope"/);
  assert.match(r.body, /no role rule matches/);
});

test('bad tokens are refused with a reason', async () => {
  const pub = idp.keys()[0];
  const stranger = { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), kid: 'not-published' };
  const good = forge(goodClaims());
  const [gh, , gs] = good.split('.');
  const cases = {
    expired: [forge({ ...goodClaims(), exp: now() - 3600 }), /token expired/],
    'not yet valid': [forge({ ...goodClaims(), nbf: now() + 3600 }), /not yet valid/],
    'wrong audience': [forge({ ...goodClaims(), aud: 'http://127.0.0.1:1/mcp' }), /audience/],
    'wrong issuer': [forge({ ...goodClaims(), iss: 'http://127.0.0.1:1' }), /issuer/],
    'token for another resource': [await idp.token(CLIENTS.user, { aud: 'http://127.0.0.1:2/other' }), /audience/],
    'unknown kid': [forge(goodClaims(), { key: stranger }), /signing key .* is unknown/],
    'alg none': [`${b64u({ alg: 'none', kid: pub.kid })}.${b64u(goodClaims())}.`, /algorithm "none"/],
    'HS256 with the public key': [(() => {
      const input = `${b64u({ alg: 'HS256', kid: pub.kid })}.${b64u(goodClaims())}`;
      return `${input}.${createHmac('sha256', Buffer.from(pub.n, 'base64url')).update(input).digest('base64url')}`;
    })(), /algorithm "HS256"/],
    'tampered payload': [`${gh}.${b64u({ ...goodClaims(), scope: 'mcp:use admin' })}.${gs}`, /signature is invalid/],
    garbage: ['garbage', /not a JWT/],
  };
  assert.equal((await initialize(good)).status, 200, 'the forged-but-genuine control token is accepted');
  // Over 8 KiB a token does not fit the front door's header field limit:
  // 431, refused before any worker or validator reads it.
  for (const pad of [7000, 16 * 1024]) {
    assert.equal((await initialize(forge({ ...goodClaims(), pad: 'x'.repeat(pad) }))).status, 431, `pad ${pad}`);
  }
  for (const [name, [token, reason]] of Object.entries(cases)) {
    const r = await initialize(token);
    assert.equal(r.status, 401, `${name}: ${r.body}`);
    assert.match(r.challenge, /error="invalid_token"/, name);
    assert.match(r.body, reason, name);
  }
});

test('a key rotation at the provider is picked up without a restart', async () => {
  await sleep(1500);  // past jwks_refresh_min_s since the unknown-kid case's fetch
  await idp.rotate();
  const token = await idp.token(CLIENTS.user);
  const kid = JSON.parse(Buffer.from(token.split('.')[0], 'base64url')).kid;
  assert.equal(kid, idp.keys()[0].kid, 'the provider signs with its new key');
  const r = await initialize(token);
  assert.equal(r.status, 200, r.body);
});

test('refusals and OAuth callers are in the audit log', async () => {
  const refused = audit(['--user', 'oauth']).filter((r) => r.kind === 'auth_refused');
  const reasons = refused.map((r) => r.detail?.reason ?? '').join('\n');
  for (const re of [/token expired/, /not yet valid/, /audience/, /issuer/, /signing key .* is unknown/,
    /algorithm "none"/, /algorithm "HS256"/, /signature is invalid/, /not a JWT/, /no role rule matches/]) {
    assert.match(reasons, re);
  }
  assert.ok(refused.some((r) => r.detail?.status === 403 && r.detail?.client_id === 'e2e-nobody'), reasons);
  const port = new URL(idp.issuer).port;  // user: oauth:<sub>@<issuer host>
  const runs = audit(['--user', `oauth:e2e-user@127.0.0.1_${port}`]);
  const call = runs.find((r) => r.kind === 'tool_call' && r.target === 'run_code');
  assert.ok(call, 'the SDK client\'s run is audited under its OAuth identity');
  assert.equal(call.detail.auth, 'oauth');
  assert.equal(call.detail.key_id, 'e2e-user');  // the OAuth client_id
  assert.equal(call.detail.role, 'reader');
});

test('a flood of garbage tokens cannot fill the audit log', async () => {
  const count = () => audit(['--user', 'oauth']).filter((r) => r.kind === 'auth_refused').length;
  const before = count();
  for (let i = 0; i < 10; i++) {
    const batch = [];
    for (let j = 0; j < 30; j++) batch.push(initialize(`garbage-${i}-${j}`));
    for (const r of await Promise.all(batch)) assert.equal(r.status, 401);
  }
  const added = count() - before;
  assert.ok(added <= 30, `300 refused tokens wrote ${added} audit rows (at most 30 a minute)`);
});

test('an opaque token is introspected, runs code, and once revoked is refused and audited', async () => {
  const token = await idp.token(CLIENTS.user, { aud: url2 });
  assert.ok(!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(token), 'the provider issued an opaque token for url2');
  const client = newClient('oauth-opaque-e2e');
  await client.connect(new StreamableHTTPClientTransport(new URL(url2),
    { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  try {
    const result = await runCode(client, { language: 'python', code: 'print(6 * 7)' });
    assert.equal(result.isError ?? false, false, textOf(result));
    assert.match(textOf(result), /42/);
  } finally {
    await client.close();
  }
  // Opaque tokens go nowhere else: the JWT-only airlock refuses it unread.
  assert.match((await initialize(token)).body, /not a JWT/);

  await idp.revoke(CLIENTS.user, token);
  await sleep(1500);  // past cache_s
  const r = await initialize(token, url2);
  assert.equal(r.status, 401, r.body);
  assert.match(r.challenge, /error="invalid_token"/);
  assert.match(r.body, /token is not active/);

  // An opaque token the provider minted for another resource: its aud is not url2.
  const other = await idp.token(CLIENTS.user, { aud: 'http://127.0.0.1:3/opaque-other' });
  const o = await initialize(other, url2);
  assert.equal(o.status, 401, o.body);
  assert.match(o.body, /audience does not include/);
  const garbage = await initialize('not-a-token-at-all', url2);
  assert.equal(garbage.status, 401, garbage.body);
  assert.match(garbage.body, /token is not active/);

  const rows = audit(['--user', 'oauth'], configFile2);
  const reasons = rows.filter((x) => x.kind === 'auth_refused').map((x) => x.detail?.reason ?? '').join('\n');
  assert.match(reasons, /token is not active/);
  assert.match(reasons, /audience does not include/);
  const port = new URL(idp.issuer).port;  // client credentials: no sub, so the client is the subject
  const call = audit(['--user', `oauth:e2e-user@127.0.0.1_${port}`], configFile2)
    .find((x) => x.kind === 'tool_call' && x.target === 'run_code');
  assert.ok(call, 'the opaque token\'s run is audited under its OAuth identity');
  assert.equal(call.detail.auth, 'oauth');
  assert.equal(call.detail.key_id, 'e2e-user');
  const all = JSON.stringify(audit([], configFile2)) + stderr2;
  assert.ok(!all.includes(token) && !all.includes(other), 'no token in the audit log or the server log');
});
