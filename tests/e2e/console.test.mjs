// The operators' console (issue 18, docs/console.md) in a real browser:
// headless Chromium driven by playwright-core against `airlock serve --http`
// with per-person API keys, while the official MCP TypeScript SDK client plays
// the people who propose and run code, and the admin CLI (`airlock tools list`,
// `airlock audit`) checks what the console really changed.
//
// People (config below):
//   alice  admin    signs in to the console; reviews, revokes, cancels
//   dave   admin    approves through the CLI where a second admin is needed
//   bob    analyst  sees connector "test" (tools test.*), runs and proposes programs
//   erin   analyst  gets a second key in the browser, which is then revoked
//   mallory analyst a key whose name is a markup payload (the keys page must show it as text)
// Endpoint: team (/mcp, inline code mode). The console: http://127.0.0.1:PORT/console/
//
// One browser for the file, a fresh context (cookies) per test. Screenshots of
// every page go to build/console-screenshots/<page>.png.
//
// Chromium: $AIRLOCK_CHROMIUM, else /usr/bin/chromium.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { launchChromium } from './browser.mjs';

import { AIRLOCK_BIN, PNG_MAGIC, REPO, connectHttp, errorOrResult, startHttpServer, waitFor } from './helpers.mjs';

const TEST_SERVER = path.join(REPO, 'tests', 'fixtures', 'mcp-servers', 'test-server.mjs');
const SHOTS = path.join(REPO, 'build', 'console-screenshots');
const WAIT = 15000;  // every wait for the page is bounded by this

// Markup that would run script, or make an element, if the console ever
// parsed data as HTML. Each one sets window.__pwned.
const P = {
  img: '<img src=x onerror="window.__pwned=1">',
  script: '<script>window.__pwned=2</script>',
  svg: '"><svg onload=window.__pwned=3>',
  js: 'javascript:alert(1)',
};
const ALL = `${P.img} ${P.script} ${P.svg} ${P.js}`;

let tmp;
let configFile;
let server;  // {url, port, proc, stderr, stop}
let CONSOLE;  // http://127.0.0.1:PORT/console/
let MCP;  // http://127.0.0.1:PORT/mcp
let browser;
const keys = {};  // user -> {secret, id}
const clients = [];
const contexts = [];

// --- the CLI ------------------------------------------------------------------------------

function cli(args, { allowFail = false } = {}) {
  const r = spawnSync(AIRLOCK_BIN, args, { encoding: 'utf8', timeout: 60000 });
  if (!allowFail && r.status !== 0) {
    throw new Error(`airlock ${args.join(' ')} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
  }
  return r;
}

function createKey(user, role, name = '') {
  const r = cli(['keys', 'create', '--file', path.join(tmp, 'keys.json'), '--config', configFile, '--as', 'setup',
    '--user', user, '--role', role, '--name', name, '--json']);
  const j = JSON.parse(r.stdout);
  keys[user] = { secret: j.secret, id: j.id };
}

// `airlock audit --json` rows (oldest first).
function audit(args = []) {
  return JSON.parse(cli(['audit', '--config', configFile, '--json', '--limit', '100000', ...args]).stdout);
}
const auditEvents = (kind) => audit(['--type', 'event']).filter((e) => e.kind === kind);

// One code tool version as `airlock tools list --json` shows it.
function storedTool(id) {
  const t = JSON.parse(cli(['tools', 'list', '--json', '--config', configFile]).stdout).find((x) => x.id === id);
  assert.ok(t, `airlock tools list knows ${id}`);
  return t;
}

// --- MCP clients --------------------------------------------------------------------------

async function connectAs(user) {
  const c = await connectHttp(MCP, { headers: { Authorization: `Bearer ${keys[user].secret}` } });
  clients.push(c);
  return c;
}

async function toolNames(c) {
  return (await c.client.listTools()).tools.map((t) => t.name);
}

async function propose(c, args) {
  const r = await c.client.callTool({ name: 'propose_code_tool', arguments: args });
  assert.ok(!r.isError, JSON.stringify(r));
  assert.equal(r.structuredContent.status, 'proposed');
  return r.structuredContent;  // {id, name, version, hash, status}
}

// --- the console over plain HTTP ----------------------------------------------------------

const api = (p) => `${CONSOLE}api/${p}`;

async function consoleSignIn(user) {
  const res = await fetch(api('signin'), { method: 'POST', headers: { Authorization: `Bearer ${keys[user].secret}` } });
  assert.equal(res.status, 200, await res.clone().text());
  const body = await res.json();
  const cookie = res.headers.get('set-cookie').split(';')[0];
  assert.match(cookie, /^airlock_console=[0-9a-f]{32}$/);
  return { cookie, csrf: body.csrf };
}

// --- the browser --------------------------------------------------------------------------

// A fresh context (no cookies) and page; closed when the test ends. `log`
// collects console errors, uncaught exceptions, dialogs and every request URL.
async function openPage(t) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  contexts.push(context);
  t.after(() => context.close().catch(() => {}));
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT);
  const log = { console: [], errors: [], requests: [] };
  page.on('console', (m) => { if (m.type() === 'error') log.console.push(m.text()); });
  page.on('pageerror', (e) => log.errors.push(`pageerror: ${e.message}`));
  page.on('dialog', (d) => { log.errors.push(`dialog: ${d.message()}`); d.dismiss().catch(() => {}); });
  page.on('request', (r) => log.requests.push(r.url()));
  return { page, context, log };
}

const tid = (page, id) => page.getByTestId(id);
const loaded = (page, id) => page.waitForSelector(`[data-testid="${id}"][data-loaded="true"]`, { timeout: WAIT });
const text = async (page, id) => (await tid(page, id).textContent()) ?? '';
const errorShown = (page, re) => page.locator('[data-testid="error"]:not([hidden])', { hasText: re }).waitFor({ timeout: WAIT });
const noticeShown = (page, re) => page.locator('[data-testid="notice"]:not([hidden])', { hasText: re }).waitFor({ timeout: WAIT });

// Signs `user` in through the form at CONSOLE + hash; resolves once the app shows.
async function signIn(page, user, hash = '') {
  await page.goto(CONSOLE + hash);
  await tid(page, 'signin-form').waitFor({ state: 'visible' });
  await tid(page, 'signin-key').fill(keys[user].secret);
  await tid(page, 'signin-submit').click();
  await page.locator('#topbar:not([hidden])').waitFor();
  assert.equal(await text(page, 'whoami'), `signed in as ${user} (admin)`);
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

// No uncaught exception, dialog, or console error other than the browser's
// own note about an HTTP error answer (the 401 of the first whoami, the 403
// of a refused action): a CSP violation ("Refused to ...") would show here.
function assertCleanConsole(log) {
  assert.deepEqual(log.errors, []);
  const unexpected = log.console.filter((m) => !/^Failed to load resource: the server responded with a status of 40[13]/.test(m));
  assert.deepEqual(unexpected, []);
}

// The page shows data carrying P's payloads: nothing ran, no element was made
// from them, and `visible` (strings) are on screen as text.
async function assertInert(page, log, visible, where) {
  assert.equal(await page.evaluate(() => window.__pwned), undefined, `${where}: a payload ran`);
  const made = await page.evaluate(() => ({
    main: document.querySelectorAll('main img, main script, main svg, main iframe, main object, main embed').length,
    anywhere: document.querySelectorAll('img, svg, iframe, object, embed, frame').length,
    scripts: [...document.querySelectorAll('script')].map((s) => s.getAttribute('src')),
    jsLinks: document.querySelectorAll('a[href^="javascript:" i], [src^="javascript:" i]').length,
    handlers: [...document.querySelectorAll('main *')].flatMap((el) => el.getAttributeNames().filter((n) => n.startsWith('on'))),
  }));
  assert.deepEqual(made, { main: 0, anywhere: 0, scripts: ['assets/app.js'], jsLinks: 0, handlers: [] }, where);
  const shown = await page.locator('main').innerText();
  for (const s of visible) assert.ok(shown.includes(s), `${where}: ${JSON.stringify(s)} is not shown as text`);
  // An <img src=x> would have fetched .../x.
  assert.deepEqual(log.requests.filter((u) => /\/x$|^javascript:/.test(u)), [], where);
  assert.deepEqual(log.errors, [], where);
  assertCleanConsole(log);
}

// --- set-up -------------------------------------------------------------------------------

before(async () => {
  tmp = mkdtempSync(path.join(tmpdir(), 'airlock-console-'));
  configFile = path.join(tmp, 'airlock.json');
  writeFileSync(configFile, JSON.stringify({
    server: { state_dir: path.join(tmp, 'state'), http: { keys_file: path.join(tmp, 'keys.json') } },
    mcpServers: { test: { command: process.execPath, args: [TEST_SERVER], trusted: true } },
    roles: { analyst: { connectors: ['test'], tools: ['test.*'], inline: true, propose: true } },
    endpoints: { team: { path: '/mcp', code_mode: 'inline' } },
  }, null, 2));
  createKey('alice', 'admin');
  createKey('dave', 'admin');
  createKey('bob', 'analyst');
  createKey('erin', 'analyst');
  createKey('mallory', 'analyst', P.img);
  server = await startHttpServer({ args: ['--config', configFile] });
  CONSOLE = `http://127.0.0.1:${server.port}/console/`;
  MCP = `http://127.0.0.1:${server.port}/mcp`;
  mkdirSync(SHOTS, { recursive: true });
  browser = await launchChromium();
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close().catch(() => {});
  await server?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

// --- the tests ----------------------------------------------------------------------------

describe('console: sign-in', () => {
  it('shows the form, refuses a wrong key and a non-admin key visibly, signs an admin in', async (t) => {
    const { page, log } = await openPage(t);
    const deniedBefore = auditEvents('console_signin_denied').length;
    await page.goto(CONSOLE);
    await tid(page, 'signin-form').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#topbar').isHidden(), true);
    assert.equal(await page.locator('#main').isHidden(), true);
    assert.equal(await tid(page, 'error').isHidden(), true);

    // A key that does not exist.
    await tid(page, 'signin-key').fill(`alk_${'A'.repeat(43)}`);
    await tid(page, 'signin-submit').click();
    await errorShown(page, /sign in with an admin API key/);
    assert.equal(await tid(page, 'signin-key').inputValue(), '', 'the key is not kept in the form');
    assert.equal(await page.locator('#topbar').isHidden(), true);
    await shot(page, 'signin');

    // bob's key is valid, but his role is not an admin role.
    await tid(page, 'signin-key').fill(keys.bob.secret);
    await tid(page, 'signin-submit').click();
    await errorShown(page, /the console is for admin roles; role "analyst" is not one/);
    assert.equal(await page.locator('#topbar').isHidden(), true);
    assert.equal(await page.locator('#signin').isVisible(), true);

    // alice is an admin.
    await tid(page, 'signin-key').fill(keys.alice.secret);
    await tid(page, 'signin-submit').click();
    await loaded(page, 'page-proposals');
    assert.equal(await text(page, 'whoami'), 'signed in as alice (admin)');
    assert.match(await text(page, 'session-expiry'), /^session expires \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/);
    assert.equal(await page.locator('#signin').isHidden(), true);
    assert.equal(await tid(page, 'error').isHidden(), true);
    assert.match(page.url(), /#\/proposals$/);
    // The key went once; the page keeps only the cookie, which script cannot read.
    assert.equal(await page.evaluate(() => document.cookie + JSON.stringify(localStorage) + JSON.stringify(sessionStorage)), '{}{}');
    const cookies = await page.context().cookies();
    assert.equal(cookies.length, 1);
    assert.equal(cookies[0].name, 'airlock_console');
    assert.equal(cookies[0].httpOnly, true);
    assert.equal(cookies[0].sameSite, 'Strict');

    // A reload keeps the session (whoami).
    await page.reload();
    await loaded(page, 'page-proposals');
    assert.equal(await text(page, 'whoami'), 'signed in as alice (admin)');

    // A session that ends under the page (here: its cookie is gone) sends it back to the form.
    await page.context().clearCookies();
    await tid(page, 'nav-audit').click();
    await tid(page, 'signin-form').waitFor({ state: 'visible' });
    await errorShown(page, /not signed in, or the console session expired: sign in again/);
    assert.equal(await page.locator('#main').isHidden(), true);
    assert.equal(await page.locator('main [data-testid="page-audit"]').count(), 0, 'no page left behind the form');

    // Signed in again, then out with the button: the form, and a reload keeps it there.
    await tid(page, 'signin-key').fill(keys.alice.secret);
    await tid(page, 'signin-submit').click();
    await loaded(page, 'page-audit');
    await tid(page, 'signout').click();
    await tid(page, 'signin-form').waitFor({ state: 'visible' });
    await noticeShown(page, /^Signed out\.$/);
    assert.deepEqual(await page.context().cookies(), []);
    await page.reload();
    await tid(page, 'signin-form').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#topbar').isHidden(), true);

    // Both refusals and the sign-ins are on record.
    const denied = auditEvents('console_signin_denied').slice(deniedBefore);
    assert.deepEqual(denied.map((e) => [e.actor, e.detail.reason]),
      [['', 'no valid API key'], ['bob', 'not an admin role']]);
    assert.ok(auditEvents('console_signin').filter((e) => e.actor === 'alice' && e.target === keys.alice.id).length >= 2);
    assert.ok(auditEvents('console_signout').some((e) => e.actor === 'alice'));
    assertCleanConsole(log);
  });
});

describe('console: code tool review', () => {
  it('bob proposes, alice approves in the browser, bob calls the tool, the run is in the audit pages', async (t) => {
    const bob = await connectAs('bob');
    const code = 'const e = await tools.call("test.echo", {text: args.word});\nreturn {echoed: e, length: e.length};';
    const p = await propose(bob, {
      name: 'echo_word', description: 'Echoes a word through test.echo.', language: 'javascript', code,
      input_schema: { type: 'object', properties: { word: { type: 'string', description: 'the word to echo' } },
        required: ['word'], additionalProperties: false },
      connectors: ['test'], tools: ['test.echo'],
    });
    assert.ok(!(await toolNames(bob)).includes('echo_word'), 'not callable before approval');

    const { page, log } = await openPage(t);
    await signIn(page, 'alice');
    await loaded(page, 'page-proposals');
    const row = page.locator(`[data-testid="proposal-row"][data-id="${p.id}"]`);
    assert.equal(await row.count(), 1);
    assert.match(await row.innerText(), /echo_word\s+1\s+team\s+javascript\s+bob\s+\d{4}-.*Z\s+intact/);
    await shot(page, 'proposals');

    await row.click();
    await loaded(page, 'page-proposal');
    assert.ok(page.url().endsWith(`#/proposals/${p.id}`), page.url());
    assert.equal(await text(page, 'proposal-name'), 'echo_word');
    assert.equal(await text(page, 'proposal-state'), 'proposed');
    assert.equal(await text(page, 'proposal-code'), code);
    const schema = JSON.parse(await text(page, 'proposal-schema'));
    assert.deepEqual(schema.properties.word, { type: 'string', description: 'the word to echo' });
    assert.deepEqual(schema.required, ['word']);
    const access = await tid(page, 'proposal-connectors').innerText();
    assert.match(access, /connectors\s+test\b/);
    assert.match(access, /tools\s+test\.echo\b/);
    const diff = await tid(page, 'proposal-diff').innerText();
    assert.match(diff, /new tool \(nothing to supersede\)/);
    assert.match(diff, /=== code/);
    assert.match(diff, /^\+return \{echoed: e, length: e\.length\};$/m);
    assert.ok(await page.locator('[data-testid="proposal-diff"] .diff-add').count() >= 5);
    assert.equal(await tid(page, 'approve-allow-write').isChecked(), false, 'allow write is off by default');
    await shot(page, 'proposal');

    await tid(page, 'approve-submit').click();
    await page.locator('[data-testid="proposal-state"]', { hasText: /^approved$/ }).waitFor();
    await noticeShown(page, /Approved echo_word version 1: the state is now approved/);
    assert.equal(await tid(page, 'approve-submit').count(), 0, 'no decision form on an approved version');
    const details = await page.locator('main').innerText();
    assert.match(details, /approved by\s+alice at/);
    assert.match(details, /allow write\s+no/);
    const stored = storedTool(p.id);
    assert.equal(stored.state, 'approved');
    assert.equal(stored.approved_by, 'alice');
    assert.equal(stored.approval.allow_write, false);

    // bob sees it and calls it.
    assert.ok(await waitFor(async () => (await toolNames(bob)).includes('echo_word'), 10000), 'the approved tool is listed');
    const r = await bob.client.callTool({ name: 'echo_word', arguments: { word: 'hello-console' } }, undefined, { timeout: 60000 });
    assert.equal(r.structuredContent.ok, true, JSON.stringify(r.structuredContent));
    assert.deepEqual(r.structuredContent.result, { echoed: 'hello-console', length: 13 });
    const run = audit(['--user', 'bob', '--type', 'run']).filter((x) => x.kind === 'code_tool' && x.limits.code_tool === 'echo_word').at(-1);
    assert.ok(run, 'the call is audited as a code tool run');

    // The Audit page, filtered to bob's runs.
    await tid(page, 'nav-audit').click();
    await loaded(page, 'page-audit');
    await tid(page, 'audit-user').fill('bob');
    await tid(page, 'audit-type').selectOption('run');
    await tid(page, 'audit-apply').click();
    await loaded(page, 'page-audit');
    assert.match(page.url(), /#\/audit\?user=bob&type=run$/);
    const cells = await tid(page, 'audit-row').evaluateAll((rows) => rows.map((r) => [...r.cells].map((c) => c.innerText)));
    assert.ok(cells.length >= 1);
    for (const c of cells) {
      assert.equal(c[2], 'run', JSON.stringify(c));
      assert.equal(c[3], 'bob (analyst)', JSON.stringify(c));
    }
    const runRow = page.locator(`[data-testid="audit-row"][data-run-id="${run.run_id}"]`);
    assert.equal(await runRow.count(), 1);
    assert.match(await runRow.innerText(), /javascript\s+SUCCESS\s+r_[0-9a-f]+\s+code_tool .* calls 1 \(0 denied\)/);
    // The chain verifies.
    await tid(page, 'verify-chain').click();
    await page.locator('[data-testid="verify-result"]:not([hidden])').waitFor();
    assert.match(await tid(page, 'verify-result').innerText(), /^ok\s+rows checked [1-9]\d* · last id [1-9]\d* · head hash [0-9a-f]{16}…/);
    await shot(page, 'audit');

    await runRow.getByTestId('audit-run-link').click();
    await loaded(page, 'page-run');
    assert.ok(page.url().endsWith(`#/audit/run/${run.run_id}`), page.url());
    assert.equal(await text(page, 'run-id'), run.run_id);
    assert.equal(await text(page, 'run-status'), 'SUCCESS');
    assert.equal(await text(page, 'run-code'), code);
    assert.match(await page.locator('main').innerText(), /user\s+bob \(analyst\)/);
    const calls = tid(page, 'call-row');
    assert.equal(await calls.count(), 1);
    const call = await calls.first().evaluate((r) => [...r.cells].map((c) => c.innerText));
    assert.equal(call[0], '1');
    assert.equal(call[1], 'test.echo');
    assert.equal(call[3], 'allowed');
    assert.deepEqual(JSON.parse(call[8]), { text: 'hello-console' });
    await shot(page, 'run');
    assertCleanConsole(log);
  });

  it('alice rejects a proposal with a reason; it is rejected and never callable', async (t) => {
    const bob = await connectAs('bob');
    const p = await propose(bob, {
      name: 'shout_word', description: 'Upper-cases a word.', language: 'javascript',
      code: 'return args.word.toUpperCase()',
      input_schema: { type: 'object', properties: { word: { type: 'string' } } }, connectors: ['test'],
    });
    const { page, log } = await openPage(t);
    await signIn(page, 'alice', `#/proposals/${p.id}`);
    await loaded(page, 'page-proposal');
    assert.equal(await text(page, 'proposal-name'), 'shout_word');
    assert.equal(await text(page, 'proposal-state'), 'proposed');

    // Without a reason the page refuses to send it.
    await tid(page, 'reject-submit').click();
    await errorShown(page, /A reason is required to reject a proposal/);
    assert.equal(storedTool(p.id).state, 'proposed');

    const reason = 'returns upper case only; use echo_word';
    await tid(page, 'reject-reason').fill(reason);
    await tid(page, 'reject-submit').click();
    await page.locator('[data-testid="proposal-state"]', { hasText: /^rejected$/ }).waitFor();
    await noticeShown(page, /Rejected shout_word version 1: the state is now rejected/);
    assert.equal(await tid(page, 'reject-submit').count(), 0);
    assert.match(await page.locator('main').innerText(), new RegExp(`reason\\s+${reason}`));

    const stored = storedTool(p.id);
    assert.equal(stored.state, 'rejected');
    assert.equal(stored.decided_by, 'alice');
    assert.equal(stored.reason, reason);
    assert.ok(!(await toolNames(bob)).includes('shout_word'));
    const r = await errorOrResult(() => bob.client.callTool({ name: 'shout_word', arguments: { word: 'x' } }));
    assert.ok(r.error || r.result.isError, JSON.stringify(r));
    assert.doesNotMatch(JSON.stringify(r.result ?? {}), /"X"/);
    const ev = auditEvents('code_tool_reject').filter((e) => e.target === p.id);
    assert.deepEqual(ev.map((e) => [e.actor, e.detail.decision, e.detail.via]), [['alice', 'allowed', 'console']]);
    assertCleanConsole(log);
  });

  it('alice may not approve her own proposal: a visible error, still proposed, a denied audit event', async (t) => {
    const alice = await connectAs('alice');
    const p = await propose(alice, {
      name: 'alice_own', description: 'mine', language: 'javascript', code: 'return 1', connectors: ['test'],
    });
    const { page, log } = await openPage(t);
    await signIn(page, 'alice', `#/proposals/${p.id}`);
    await loaded(page, 'page-proposal');
    assert.equal(await text(page, 'proposal-state'), 'proposed');
    await tid(page, 'approve-submit').click();
    await errorShown(page, new RegExp(`alice proposed ${p.id} and may not approve it \\(someone else must\\)`));
    assert.equal(await text(page, 'proposal-state'), 'proposed');
    assert.equal(await tid(page, 'approve-submit').isEnabled(), true);
    await page.reload();
    await loaded(page, 'page-proposal');
    assert.equal(await text(page, 'proposal-state'), 'proposed');
    assert.equal(storedTool(p.id).state, 'proposed');
    const ev = auditEvents('code_tool_approve').filter((e) => e.target === p.id);
    assert.equal(ev.length, 1, JSON.stringify(ev));
    assert.equal(ev[0].actor, 'alice');
    assert.equal(ev[0].detail.decision, 'denied');
    assert.equal(ev[0].detail.via, 'console');
    assert.match(ev[0].detail.reason, /may not approve it/);
    assertCleanConsole(log);
  });

  it('revokes an approved code tool from the Code tools page', async (t) => {
    const bob = await connectAs('bob');
    const p = await propose(bob, {
      name: 'to_revoke', description: 'Soon gone.', language: 'javascript', code: 'return "still here"', connectors: ['test'],
    });
    cli(['tools', 'approve', p.id, '--as', 'dave', '--config', configFile]);
    assert.ok(await waitFor(async () => (await toolNames(bob)).includes('to_revoke'), 10000));
    const ok = await bob.client.callTool({ name: 'to_revoke', arguments: {} }, undefined, { timeout: 60000 });
    assert.equal(ok.structuredContent.result, 'still here', JSON.stringify(ok.structuredContent));

    const { page, log } = await openPage(t);
    await signIn(page, 'alice');
    await tid(page, 'nav-tools').click();
    await loaded(page, 'page-tools');
    const row = page.locator(`[data-testid="tool-row"][data-id="${p.id}"]`);
    assert.match(await row.innerText(), /to_revoke\s+1\s+team\s+approved\s+dave\s+\d{4}-.*Z\s+no\s+the caller/);
    await shot(page, 'tools');

    await row.getByTestId('revoke-open').click();
    await row.getByTestId('revoke-submit').click();
    await errorShown(page, /A reason is required to revoke a tool/);
    assert.equal(storedTool(p.id).state, 'approved');
    await row.getByTestId('revoke-reason').fill('no longer needed');
    await row.getByTestId('revoke-submit').click();
    await noticeShown(page, /Revoked to_revoke version 1: the state is now revoked/);
    await row.waitFor({ state: 'detached' });  // gone from the approved list

    await tid(page, 'tools-state').selectOption('revoked');
    await page.waitForFunction(() => location.hash === '#/tools?state=revoked');
    await loaded(page, 'page-tools');
    assert.match(await page.locator(`[data-testid="tool-row"][data-id="${p.id}"]`).innerText(), /to_revoke.*revoked/s);

    const stored = storedTool(p.id);
    assert.equal(stored.state, 'revoked');
    assert.equal(stored.reason, 'no longer needed');
    assert.ok(!(await toolNames(bob)).includes('to_revoke'));
    const r = await errorOrResult(() => bob.client.callTool({ name: 'to_revoke', arguments: {} }));
    assert.ok(r.error || r.result.isError, JSON.stringify(r));
    assert.doesNotMatch(JSON.stringify(r.result ?? {}), /still here/);
    assertCleanConsole(log);
  });
});

describe('console: API keys', () => {
  it('creates a key for erin (secret shown once, it works), revokes it, and erin is refused', async (t) => {
    const { page, log } = await openPage(t);
    await signIn(page, 'alice');
    await tid(page, 'nav-keys').click();
    await loaded(page, 'page-keys');
    const before = await tid(page, 'key-row').count();
    assert.equal(before, 5);  // alice, dave, bob, erin, mallory
    assert.equal(await tid(page, 'key-secret').count(), 0);

    await tid(page, 'key-create-user').fill('erin');
    await tid(page, 'key-create-role').selectOption('analyst');
    await tid(page, 'key-create-name').fill('laptop');
    await tid(page, 'key-create-submit').click();
    await tid(page, 'key-secret').waitFor();
    const secret = await text(page, 'key-secret');
    assert.match(secret, /^alk_[A-Za-z0-9_-]{40,}$/);
    const m = /New key (k_[0-9a-f]+) for erin \(analyst\)\. Copy its secret now/.exec(await page.locator('.secret-box').innerText());
    assert.ok(m, await page.locator('.secret-box').innerText());
    const id = m[1];
    const row = page.locator(`[data-testid="key-row"][data-id="${id}"]`);
    await row.waitFor();
    assert.match(await row.innerText(), new RegExp(`${id}\\s+erin\\s+analyst\\s+laptop\\s+\\d{4}-.*Z\\s+active`));
    assert.equal(await tid(page, 'key-row').count(), before + 1);
    assert.ok(!(await page.locator('main').innerText()).includes(keys.alice.secret));
    await shot(page, 'keys');

    // The secret works: erin connects with it.
    const erin = await connectHttp(MCP, { headers: { Authorization: `Bearer ${secret}` } });
    clients.push(erin);
    assert.ok((await toolNames(erin)).includes('execute'));
    // Dismissed, it is gone from the page.
    await tid(page, 'key-secret-dismiss').click();
    assert.equal(await tid(page, 'key-secret').count(), 0);
    assert.ok(!(await page.content()).includes(secret));

    await row.getByTestId('key-revoke').click();
    await row.getByTestId('key-revoke-confirm').click();
    await noticeShown(page, new RegExp(`Revoked key ${id} of erin \\(laptop\\)`));
    await page.locator(`[data-testid="key-row"][data-id="${id}"]`, { hasText: 'revoked' }).waitFor();
    assert.equal(await row.getByTestId('key-revoke').count(), 0);

    // Her next request on the open client, a new connection and a raw request: 401.
    const again = await errorOrResult(() => erin.client.listTools());
    assert.ok(again.error, 'the revoked key is refused on an open connection');
    assert.match(String(again.error.message), /401|Unauthorized/i);
    const fresh = await errorOrResult(() => connectHttp(MCP, { headers: { Authorization: `Bearer ${secret}` } }));
    assert.ok(fresh.error, 'a new connection with the revoked key is refused');
    if (fresh.result) clients.push(fresh.result);
    assert.match(String(fresh.error.message), /401|Unauthorized/i);
    const raw = await fetch(MCP, {
      method: 'POST',
      headers: { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(raw.status, 401);
    // Revocation is per key: erin's other key still works.
    const erinOld = await connectAs('erin');
    assert.ok((await toolNames(erinOld)).includes('execute'));

    const created = auditEvents('key_create').filter((e) => e.target === id);
    assert.deepEqual(created.map((e) => [e.actor, e.detail.user, e.detail.role, e.detail.via]), [['alice', 'erin', 'analyst', 'console']]);
    assert.deepEqual(auditEvents('key_revoke').filter((e) => e.target === id).map((e) => e.actor), ['alice']);
    assertCleanConsole(log);
  });
});

describe('console: live runs', () => {
  it('shows bob\'s long run, cancels it from the browser, the call ends cancelled and the row goes', async (t) => {
    const bob = await connectAs('bob');
    const started = Date.now();
    const pending = bob.client.callTool({ name: 'run_code', arguments: {
      language: 'python', code: 'import time\ntime.sleep(60)\nprint("slept the whole minute")', timeout_ms: 60000 } },
    undefined, { timeout: 90000 }).then((v) => ({ v, ms: Date.now() - started }), (e) => ({ e, ms: Date.now() - started }));

    const { page, log } = await openPage(t);
    await signIn(page, 'alice');
    await tid(page, 'nav-live').click();
    await loaded(page, 'page-live');
    const row = page.locator('[data-testid="live-row"]', { hasText: 'run_code' }).filter({ hasText: 'bob' });
    await row.waitFor();
    const runId = await row.getAttribute('data-run-id');
    assert.match(runId, /^r_[0-9a-f]+$/);
    const cells = await row.evaluate((r) => [...r.cells].map((c) => c.innerText));
    assert.deepEqual(cells.slice(0, 5), [runId, 'bob', 'analyst', 'team', 'run_code']);
    assert.equal(cells[7], 'no');
    assert.match(await tid(page, 'connector-health').innerText(), /test\s+up\s+stdio/);
    await shot(page, 'live');

    await row.getByTestId('live-cancel').click();
    await noticeShown(page, new RegExp(`Cancel requested for run ${runId}`));
    const res = await pending;
    assert.ok(res.v, `the call ended with a tool result, not ${res.e}`);
    assert.ok(res.ms < 30000, `the call ended after ${res.ms} ms`);
    const sc = res.v.structuredContent;
    assert.equal(res.v.isError, true, JSON.stringify(sc));
    assert.equal(sc.error_code, 'cancelled', JSON.stringify(sc));
    assert.doesNotMatch(sc.stdout, /slept the whole minute/);
    await page.locator(`[data-testid="live-row"][data-run-id="${runId}"]`).waitFor({ state: 'detached' });

    const run = audit(['--run', runId]).find((x) => x.type === 'run');
    assert.equal(run.status, 'CANCELLED', JSON.stringify(run));
    assert.deepEqual(auditEvents('console_cancel').filter((e) => e.target === runId).map((e) => [e.actor, e.detail.result]),
      [['alice', 'cancelled']]);
    assertCleanConsole(log);
  });
});

describe('console: runner health', () => {
  // The runner answers {"type": "health"} (runner_loop.cc), and RunnerClient::Health()
  // merges that answer (pool, sessions) into the Live page's runner panel.
  it('the Live page shows the runner\'s own health report, not a time-out', async (t) => {
    const s = await consoleSignIn('alice');
    const live = await (await fetch(api('live'), { headers: { Cookie: s.cookie } })).json();
    assert.equal(live.runner?.up, true, JSON.stringify(live.runner));
    assert.equal(live.runner.error ?? '', '', `GET /console/api/live: runner ${JSON.stringify(live.runner)}`);
    assert.ok('pool' in live.runner && 'sessions' in live.runner, JSON.stringify(live.runner));

    const { page, log } = await openPage(t);
    await signIn(page, 'alice', '#/live');
    await loaded(page, 'page-live');
    const runner = await tid(page, 'runner-health').innerText();
    assert.match(runner, /state\s+up/);
    assert.doesNotMatch(runner, /error/, runner);
    assert.match(await tid(page, 'sessions-state').innerText(), /runner sessions\s+0/);
    assertCleanConsole(log);
  });
});

describe('console: hostile content', () => {
  it('shows markup from proposals, runs, arguments, client names and key names as inert text', async (t) => {
    // A client whose self-reported name is markup too (the run page shows it).
    const transport = new StreamableHTTPClientTransport(new URL(MCP), { requestInit: { headers: { Authorization: `Bearer ${keys.bob.secret}` } } });
    const client = new Client({ name: P.script, version: P.js }, { capabilities: {} });
    await client.connect(transport);
    const bob = { client, close: () => client.close() };
    clients.push(bob);

    const toolCode = `// ${ALL}\nconst note = ${JSON.stringify(ALL)};\nreturn {echo: await tools.call("test.echo", {text: note}), link: ${JSON.stringify(P.js)}};`;
    const p = await propose(bob, {
      name: 'hostile_tool', description: `Summarises ${ALL}`, language: 'javascript', code: toolCode,
      input_schema: { type: 'object', properties: {
        [P.img]: { type: 'string', description: P.script },
        [P.svg]: { type: 'string', description: P.js },
      } },
      connectors: ['test'], tools: ['test.echo'],
    });
    // run_code: the payloads in its code and on its stdout.
    const pyCode = `# ${P.script} ${ALL}\nprint(${JSON.stringify(ALL)})`;
    const rc = await bob.client.callTool({ name: 'run_code', arguments: { language: 'python', code: pyCode } }, undefined, { timeout: 60000 });
    assert.equal(rc.structuredContent.status, 'ok', JSON.stringify(rc.structuredContent));
    assert.equal(rc.structuredContent.stdout, `${ALL}\n`);
    // execute: the payloads in a bridged call's arguments (values and a key) and in its output.
    const jsCode = `// ${ALL}\nconst r = await tools.call("test.echo", {text: ${JSON.stringify(ALL)}, ${JSON.stringify(P.svg)}: ${JSON.stringify(P.js)}});\nconsole.log(r);\nreturn r;`;
    const ex = await bob.client.callTool({ name: 'execute', arguments: { language: 'javascript', code: jsCode } }, undefined, { timeout: 60000 });
    assert.equal(ex.structuredContent.ok, true, JSON.stringify(ex.structuredContent));
    assert.equal(ex.structuredContent.result, ALL);
    const runs = audit(['--user', 'bob', '--type', 'run']);
    const pyRun = runs.filter((r) => r.kind === 'run_code' && r.code === pyCode).at(-1);
    const jsRun = runs.filter((r) => r.kind === 'inline' && r.code === jsCode).at(-1);
    assert.ok(pyRun && jsRun, 'both runs are audited');

    const { page, log } = await openPage(t);
    await signIn(page, 'alice');
    await loaded(page, 'page-proposals');
    assert.equal(await page.locator(`[data-testid="proposal-row"][data-id="${p.id}"]`).count(), 1);
    await assertInert(page, log, ['hostile_tool'], 'proposals');

    await page.locator(`[data-testid="proposal-row"][data-id="${p.id}"]`).click();
    await loaded(page, 'page-proposal');
    assert.equal(await text(page, 'proposal-code'), toolCode);
    const schemaText = await text(page, 'proposal-schema');
    assert.deepEqual(Object.keys(JSON.parse(schemaText).properties).sort(), [P.svg, P.img].sort());
    await assertInert(page, log, [`Summarises ${ALL}`, `// ${ALL}`, JSON.stringify(P.img), P.script, P.js], 'proposal detail');
    const diffText = await tid(page, 'proposal-diff').innerText();
    assert.ok(diffText.includes(`+// ${ALL}`), diffText);

    // The audit list of bob's rows: the run_code call's arguments (its code) in an event's summary.
    await tid(page, 'nav-audit').click();
    await loaded(page, 'page-audit');
    await tid(page, 'audit-user').fill('bob');
    await tid(page, 'audit-apply').click();
    await loaded(page, 'page-audit');
    assert.equal(await page.locator(`[data-testid="audit-row"][data-run-id="${pyRun.run_id}"]`).count(), 1);
    await assertInert(page, log, [P.script], 'audit list');

    // The run_code run: its code (and the client's name).
    await page.locator(`[data-testid="audit-row"][data-run-id="${pyRun.run_id}"] [data-testid="audit-run-link"]`).click();
    await loaded(page, 'page-run');
    assert.equal(await text(page, 'run-id'), pyRun.run_id);
    assert.equal(await text(page, 'run-code'), pyCode);
    const clientShown = await page.evaluate(() => [...document.querySelectorAll('main dt')].find((dt) => dt.textContent === 'client')?.nextElementSibling?.textContent);
    assert.equal(clientShown, `${P.script}/${P.js}`);
    await assertInert(page, log, [ALL, `${P.script}/${P.js}`], 'run_code run');

    // The execute run: its code and the bridged call's arguments.
    await page.goto(`${CONSOLE}#/audit/run/${jsRun.run_id}`);
    await loaded(page, 'page-run');
    assert.equal(await text(page, 'run-id'), jsRun.run_id);
    assert.equal(await text(page, 'run-code'), jsCode);
    assert.equal(await tid(page, 'call-row').count(), 1);
    const args = JSON.parse(await tid(page, 'call-row').locator('pre').innerText());
    assert.deepEqual(args, { text: ALL, [P.svg]: P.js });
    await assertInert(page, log, [`// ${ALL}`, JSON.stringify(ALL), P.script, P.js], 'execute run');

    // The keys page: a key named with markup.
    await tid(page, 'nav-keys').click();
    await loaded(page, 'page-keys');
    assert.match(await page.locator(`[data-testid="key-row"][data-id="${keys.mallory.id}"]`).innerText(), new RegExp(`mallory\\s+analyst\\s+${P.img.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    await assertInert(page, log, [P.img], 'keys');
  });
});

describe('console: refusals over HTTP', () => {
  it('401 without a key or session, 403 for non-admins, missing/wrong CSRF, cross-site, self-approval; all audited', async () => {
    const signinDenied = auditEvents('console_signin_denied').length;
    const JSONH = { 'Content-Type': 'application/json' };

    // No key, no session.
    let r = await fetch(api('signin'), { method: 'POST' });
    assert.equal(r.status, 401);
    assert.match((await r.json()).error, /sign in with an admin API key/);
    assert.match(r.headers.get('www-authenticate'), /^Bearer/);
    for (const p of ['whoami', 'tools', 'audit', 'keys', 'live']) {
      r = await fetch(api(p));
      assert.equal(r.status, 401, p);
    }
    // A non-admin key.
    r = await fetch(api('signin'), { method: 'POST', headers: { Authorization: `Bearer ${keys.bob.secret}` } });
    assert.equal(r.status, 403);
    assert.match((await r.json()).error, /role "analyst" is not one/);
    assert.equal(r.headers.get('set-cookie'), null);
    // A cross-site sign-in, even with an admin key.
    r = await fetch(api('signin'), { method: 'POST', headers: { Authorization: `Bearer ${keys.alice.secret}`, Origin: 'http://evil.example' } });
    assert.equal(r.status, 403);
    assert.equal(r.headers.get('set-cookie'), null);

    // State changes by a signed-in admin, refused before anything changes.
    const bob = await connectAs('bob');
    const target = await propose(bob, {
      name: 'csrf_target', description: 'x', language: 'javascript', code: 'return 1', connectors: ['test'],
    });
    const s = await consoleSignIn('alice');
    const reject = (headers) => fetch(api(`tools/${target.id}/reject`), {
      method: 'POST', headers: { Cookie: s.cookie, ...JSONH, ...headers }, body: JSON.stringify({ reason: 'no' }),
    });
    const origin = `http://127.0.0.1:${server.port}`;
    const refusals = [
      ['no CSRF token', {}],
      ['a wrong CSRF token', { 'X-CSRF-Token': '0'.repeat(32) }],
      ['a truncated CSRF token', { 'X-CSRF-Token': s.csrf.slice(0, -1) }],
      ['a cross-site Origin', { 'X-CSRF-Token': s.csrf, Origin: 'http://evil.example' }],
      ['Sec-Fetch-Site: cross-site', { 'X-CSRF-Token': s.csrf, Origin: origin, 'Sec-Fetch-Site': 'cross-site' }],
    ];
    for (const [what, headers] of refusals) {
      r = await reject(headers);
      assert.equal(r.status, 403, what);
      assert.ok((await r.json()).error, what);
    }
    assert.equal(storedTool(target.id).state, 'proposed', 'nothing changed');
    const denied = auditEvents('console_denied').filter((e) => e.target === `/console/api/tools/${target.id}/reject`);
    assert.equal(denied.length, refusals.length, JSON.stringify(denied));
    assert.ok(denied.every((e) => e.actor === 'alice'));
    assert.equal(denied.filter((e) => e.detail.reason === 'cross-site request').length, 2, JSON.stringify(denied));
    // The same request, same-origin with the right token, goes through: the refusals were the checks under test.
    r = await reject({ 'X-CSRF-Token': s.csrf, Origin: origin, 'Sec-Fetch-Site': 'same-origin' });
    assert.equal(r.status, 200, await r.clone().text());
    assert.equal((await r.json()).tool.state, 'rejected');
    assert.equal(storedTool(target.id).state, 'rejected');

    // Self-approval through the API.
    const alice = await connectAs('alice');
    const own = await propose(alice, { name: 'alice_api_own', description: 'x', language: 'javascript', code: 'return 2', connectors: ['test'] });
    r = await fetch(api(`tools/${own.id}/approve`), {
      method: 'POST', headers: { Cookie: s.cookie, 'X-CSRF-Token': s.csrf, ...JSONH }, body: '{}',
    });
    assert.equal(r.status, 403);
    assert.match((await r.json()).error, /may not approve it/);
    assert.equal(storedTool(own.id).state, 'proposed');
    const selfDenied = auditEvents('code_tool_approve').filter((e) => e.target === own.id);
    assert.deepEqual(selfDenied.map((e) => [e.actor, e.detail.decision, e.detail.via]), [['alice', 'denied', 'console']]);

    // Signed out, the old cookie is worth nothing; neither is a made-up one.
    r = await fetch(api('whoami'), { headers: { Cookie: s.cookie } });
    assert.equal(r.status, 200);
    r = await fetch(api('signout'), { method: 'POST', headers: { Cookie: s.cookie, 'X-CSRF-Token': s.csrf } });
    assert.equal(r.status, 204);
    assert.match(r.headers.get('set-cookie'), /^airlock_console=;.*Max-Age=0/);
    for (const cookie of [s.cookie, `airlock_console=${'f'.repeat(32)}`, 'airlock_console=x']) {
      r = await fetch(api('whoami'), { headers: { Cookie: cookie } });
      assert.equal(r.status, 401, cookie);
      r = await fetch(api(`tools/${own.id}/reject`), { method: 'POST', headers: { Cookie: cookie, 'X-CSRF-Token': s.csrf, ...JSONH }, body: '{"reason":"x"}' });
      assert.equal(r.status, 401, cookie);
    }
    assert.equal(storedTool(own.id).state, 'proposed');
    assert.ok(auditEvents('console_signout').some((e) => e.actor === 'alice'));

    // A session ends with its key: a temporary admin signs in, the key is revoked, the next request is 401.
    createKey('temp_admin', 'admin');
    const tmpS = await consoleSignIn('temp_admin');
    assert.equal((await fetch(api('whoami'), { headers: { Cookie: tmpS.cookie } })).status, 200);
    cli(['keys', 'revoke', keys.temp_admin.id, '--file', path.join(tmp, 'keys.json'), '--config', configFile, '--as', 'alice']);
    assert.equal((await fetch(api('whoami'), { headers: { Cookie: tmpS.cookie } })).status, 401);
    assert.ok(auditEvents('console_session_ended').some((e) => e.actor === 'temp_admin' && e.target === keys.temp_admin.id));

    const newDenied = auditEvents('console_signin_denied').slice(signinDenied);
    assert.deepEqual(newDenied.map((e) => [e.actor, e.detail.reason]),
      [['', 'no valid API key'], ['bob', 'not an admin role'], ['', 'cross-site request']]);
  });
});

describe('console: screenshots', () => {
  it('saved a full-page PNG of every page', () => {
    const names = ['signin', 'proposals', 'proposal', 'tools', 'audit', 'run', 'keys', 'live'];
    const sizes = new Set();
    for (const n of names) {
      const f = path.join(SHOTS, `${n}.png`);
      assert.ok(existsSync(f), f);
      assert.ok(readFileSync(f).subarray(0, 8).equals(PNG_MAGIC), f);
      assert.ok(statSync(f).mtimeMs > Date.now() - 10 * 60 * 1000, `${f} is from this run`);
      sizes.add(statSync(f).size);
    }
    assert.equal(sizes.size, names.length, 'eight different pictures');
  });
});
