// airlock as an OAuth 2.1 resource server (docs/security.md) against a real
// authorization server, oidc-provider (oauth_idp.mjs): the MCP SDK client
// discovers it through airlock's Protected Resource Metadata and connects
// with the client credentials grant; roles follow scopes; the bad-token
// matrix is refused with 401/403 and a clear reason; a key rotation at the
// provider is picked up without restarting airlock.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createPrivateKey, createHmac, generateKeyPairSync, sign as cryptoSign } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { AIRLOCK_BIN, assertBinary, freePort, newClient, runCode, stopProcess, textOf, sleep } from './helpers.mjs';
import { startIdp, CLIENTS } from './oauth_idp.mjs';

let idp;
let airlock;
let url;
let stderr = '';
let configFile;
const audit = (args = []) =>
  JSON.parse(execFileSync(AIRLOCK_BIN, ['audit', '--config', configFile, '--json', ...args], { encoding: 'utf8' }));
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

async function initialize(token) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'oauth-e2e', version: '1' } } }) });
  const body = await r.text();
  let message = body;
  try { message = JSON.parse(body).error?.message ?? body; } catch { /* not JSON */ }
  return { status: r.status, challenge: r.headers.get('www-authenticate') ?? '', body: message };
}

before(async () => {
  assertBinary();
  const port = await freePort();
  url = `http://127.0.0.1:${port}/mcp`;
  idp = await startIdp({ resource: url });
  const config = path.join(tmp, 'airlock.json');
  configFile = config;
  fs.writeFileSync(config, JSON.stringify({
    server: { state_dir: path.join(tmp, 'state'), http: { oauth: {
      issuer: idp.issuer, resource: url, scopes_supported: ['mcp:use'],
      role_rules: [{ scope: 'mcp:use', role: 'reader' }], jwks_refresh_min_s: 1,
    } } },
  }));
  airlock = spawn(AIRLOCK_BIN, ['serve', '--http', `127.0.0.1:${port}`, '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  airlock.stderr.on('data', (d) => { stderr += d; });
  airlock.stdout.resume();
  for (let i = 0; i < 200 && !stderr.includes(url); i++) {
    if (airlock.exitCode !== null) break;
    await sleep(100);
  }
  assert.ok(stderr.includes(url), `airlock did not start:\n${stderr}`);
});

after(async () => {
  if (airlock) await stopProcess(airlock);
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
