// Governance and audit end to end (issue 5; research codemode.md §6.3 G-D1..G-D9,
// §6.5 AU1..AU4): `airlock serve --http` with per-person API keys and roles,
// driven by the official MCP TypeScript SDK client, plus the admin CLI
// (`airlock keys`, `airlock tools`, `airlock audit`).
//
// People and roles (config below):
//   alice  admin    (everything; approves code tools)
//   bob    analyst  (sees connector "test" only, tools test.*; may run and propose programs; no writes)
//   carol  writer   (sees "test" and "plain"; may write through "test")
// Endpoints: team (/mcp, inline code mode), shelf (/shelf, stored code tools
// only), gw (/gw, gateway mode: connector tools exposed directly).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { AIRLOCK_BIN, REPO, connectHttp, errorOrResult, startHttpServer, waitFor } from './helpers.mjs';

const TEST_SERVER = path.join(REPO, 'tests', 'fixtures', 'mcp-servers', 'test-server.mjs');
const ENV_SECRET = `envsecret${randomBytes(16).toString('hex')}`;

let tmp;
let configFile;
let server;  // {url, port, proc, stderr, stop}
const keys = {};  // user -> {secret, id}
const clients = [];

function cli(args, { allowFail = false } = {}) {
  const r = spawnSync(AIRLOCK_BIN, args, { encoding: 'utf8', timeout: 60000 });
  if (!allowFail && r.status !== 0) {
    throw new Error(`airlock ${args.join(' ')} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
  }
  return r;
}

function createKey(user, role) {
  const r = cli(['keys', 'create', '--file', path.join(tmp, 'keys.json'), '--config', configFile, '--as', 'setup',
    '--user', user, '--role', role, '--json']);
  const j = JSON.parse(r.stdout);
  keys[user] = { secret: j.secret, id: j.id };
}

function endpointUrl(p) { return `http://127.0.0.1:${server.port}${p}`; }

async function connectAs(user, p = '/mcp') {
  const c = await connectHttp(endpointUrl(p), { headers: { Authorization: `Bearer ${keys[user].secret}` } });
  clients.push(c);
  return c;
}

async function toolNames(c) {
  return (await c.client.listTools()).tools.map((t) => t.name).sort();
}

async function execute(c, code, extra = {}) {
  const r = await c.client.callTool({ name: 'execute', arguments: { language: 'javascript', code, ...extra } },
    undefined, { timeout: 60000 });
  return r.structuredContent;
}

// The error a program sees for one tools.call, as {code, message}.
async function callError(c, name, args = {}, extra = {}) {
  const sc = await execute(c, `try { await tools.call(${JSON.stringify(name)}, ${JSON.stringify(args)}); return null; }
    catch (e) { return {code: e.code, message: e.message}; }`, extra);
  assert.equal(sc.ok, true, JSON.stringify(sc));
  return sc.result;
}

function audit(args = []) {
  return JSON.parse(cli(['audit', '--config', configFile, '--json', ...args]).stdout);
}

function sql(db, statement) {
  execFileSync('python3', ['-c', 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()',
    db, statement]);
}

before(async () => {
  tmp = mkdtempSync(path.join(tmpdir(), 'airlock-gov-'));
  configFile = path.join(tmp, 'airlock.json');
  const config = {
    server: { state_dir: path.join(tmp, 'state'), http: { keys_file: path.join(tmp, 'keys.json') } },
    mcpServers: {
      test: { command: process.execPath, args: [TEST_SERVER], env: { AIRLOCK_TEST_SECRET: ENV_SECRET }, trusted: true },
      // Untrusted: its readOnlyHint claims are not believed (G-D5).
      plain: { command: process.execPath, args: [TEST_SERVER], stderr: 'discard' },
    },
    roles: {
      analyst: { connectors: ['test'], tools: ['test.*'], inline: true, propose: true },
      writer: { connectors: ['test', 'plain'], write: ['test'], inline: true, propose: false },
    },
    endpoints: {
      team: { path: '/mcp', code_mode: 'inline' },
      shelf: { path: '/shelf', code_mode: 'tools', run_code: false },
      gw: { path: '/gw', code_mode: 'off', gateway: true, run_code: false },
    },
    codeMode: { proposals_per_hour: 6 },
  };
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  createKey('alice', 'admin');
  createKey('bob', 'analyst');
  createKey('carol', 'writer');
  createKey('erin', 'analyst');
  server = await startHttpServer({ args: ['--config', configFile] });
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await server?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('identity and tool lists', () => {
  it('refuses requests without a valid key (401) and shows them nothing', async () => {
    for (const auth of [undefined, 'Bearer nope', `Bearer ${keys.bob.secret}x`]) {
      const res = await fetch(endpointUrl('/mcp'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
          ...(auth ? { Authorization: auth } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(res.status, 401);
      assert.doesNotMatch(await res.text(), /execute|run_code/);
    }
  });

  it('shows each caller only what their role allows', async () => {
    const bob = await connectAs('bob');
    const carol = await connectAs('carol');
    assert.deepEqual(await toolNames(bob),
      ['close_session', 'describe_tool', 'execute', 'fork_session', 'list_languages', 'list_sessions',
        'open_session', 'pause_session', 'propose_code_tool', 'resume_session', 'run_code', 'search_tools']);
    // carol may not propose.
    assert.ok(!(await toolNames(carol)).includes('propose_code_tool'));
    // search_tools finds only what the role sees.
    const found = await bob.client.callTool({ name: 'search_tools', arguments: { query: 'echo', limit: 50 } });
    const names = found.structuredContent.tools.map((t) => t.name);
    assert.ok(names.includes('test.echo'), JSON.stringify(names));
    assert.ok(!names.some((n) => n.startsWith('plain.')), JSON.stringify(names));
  });

  it('gateway mode lists connector tools per role: reads, and writes only with a grant', async () => {
    const bob = await connectAs('bob', '/gw');
    const carol = await connectAs('carol', '/gw');
    const alice = await connectAs('alice', '/gw');
    const b = await toolNames(bob);
    const c = await toolNames(carol);
    const a = await toolNames(alice);
    assert.ok(b.includes('test.echo') && !b.includes('test.write_note') && !b.some((n) => n.startsWith('plain.')), b.join());
    assert.ok(c.includes('test.write_note'), c.join());
    // plain is untrusted: all its tools are write, and carol may not write there (G-D5).
    assert.ok(!c.some((n) => n.startsWith('plain.')), c.join());
    assert.ok(a.includes('plain.echo') && a.includes('test.write_note'), a.join());
    assert.ok(!b.includes('execute') && !b.includes('run_code'));
    const echo = await bob.client.callTool({ name: 'test.echo', arguments: { text: 'hi' } });
    assert.equal(echo.content[0].text, 'hi');
    // Unknown and forbidden tools: the same error (G-D2 at the MCP level).
    const forbidden = await errorOrResult(() => bob.client.callTool({ name: 'test.write_note', arguments: { key: 'k', text: 't' } }));
    const unknown = await errorOrResult(() => bob.client.callTool({ name: 'test.no_such_tool', arguments: {} }));
    assert.ok(forbidden.error && unknown.error);
    assert.equal(forbidden.error.code, unknown.error.code);
    assert.equal(forbidden.error.message.replace('test.write_note', 'X'), unknown.error.message.replace('test.no_such_tool', 'X'));
    const wrote = await carol.client.callTool({ name: 'test.write_note', arguments: { key: 'gw', text: 'by carol' } });
    assert.ok(!wrote.isError, JSON.stringify(wrote));
  });

  it('gateway mode caps a result at codeMode.limits.max_result_bytes and survives deep nesting', async () => {
    const bob = await connectAs('bob', '/gw');
    const fits = await bob.client.callTool({ name: 'test.huge', arguments: { bytes: 1000 } });
    assert.equal(fits.content[0].text.length, 1000);
    // 2 MiB is over the default 1 MiB: withheld, with a clear tool error.
    const over = await bob.client.callTool({ name: 'test.huge', arguments: { bytes: 2 << 20 } });
    assert.equal(over.isError, true, JSON.stringify(over).slice(0, 300));
    assert.equal(over.structuredContent.error.code, 'E_LIMIT_RESULT', JSON.stringify(over.structuredContent));
    // 300 000 levels of JSON text: returned as text, the server stays up.
    const deep = await bob.client.callTool({ name: 'test.deep', arguments: { depth: 300000 } });
    assert.ok(!deep.isError, JSON.stringify(deep).slice(0, 300));
    assert.equal(deep.content[0].text.length, 600000);
    const echo = await bob.client.callTool({ name: 'test.echo', arguments: { text: 'still here' } });
    assert.equal(echo.content[0].text, 'still here');
  });
});

describe('denials inside programs (G-D1..G-D7)', () => {
  it('G-D1: a tool of an undeclared connector does not exist for the run', async () => {
    const carol = await connectAs('carol');
    const e = await callError(carol, 'plain.echo', { text: 'x' }, { connectors: ['test'] });
    assert.equal(e.code, 'E_TOOL_NOT_DECLARED');
  });

  it('G-D2: a tool the role cannot see fails exactly like an unknown tool', async () => {
    const bob = await connectAs('bob');
    const forbidden = await callError(bob, 'plain.echo', { text: 'x' });
    const unknown = await callError(bob, 'plain.no_such_tool', { text: 'x' });
    assert.equal(forbidden.code, unknown.code);
    assert.equal(forbidden.message.replace('plain.echo', 'X'), unknown.message.replace('plain.no_such_tool', 'X'));
    // Naming a connector the role cannot see is refused like a nonexistent one.
    const r = await bob.client.callTool({ name: 'execute', arguments: { language: 'javascript', code: 'return 1', connectors: ['plain'] } });
    const r2 = await bob.client.callTool({ name: 'execute', arguments: { language: 'javascript', code: 'return 1', connectors: ['nope'] } });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.error.message.replace('"plain"', 'X'), r2.structuredContent.error.message.replace('"nope"', 'X'));
  });

  it('G-D3: inline programs never write, even for a role with a write grant', async () => {
    const carol = await connectAs('carol');
    const e = await callError(carol, 'test.write_note', { key: 'k', text: 'inline' });
    assert.equal(e.code, 'E_WRITE_NOT_ALLOWED');
  });

  it('G-D4: names spoofed by case, Unicode or spaces match nothing', async () => {
    const bob = await connectAs('bob');
    for (const name of ['TEST.echo', 'test.Echo', 'test.echo ', ' test.echo', 'test.\uFF45cho', 'test\u2024echo']) {
      const e = await callError(bob, name, { text: 'x' });
      assert.equal(e.code, 'E_TOOL_NOT_DECLARED', name);
    }
  });

  it('G-D5: an untrusted server claiming readOnlyHint is still treated as write', async () => {
    const alice = await connectAs('alice');
    const d = await alice.client.callTool({ name: 'describe_tool', arguments: { name: 'plain.echo' } });
    assert.equal(d.structuredContent.read_only, false);
    const e = await callError(alice, 'plain.echo', { text: 'x' });
    assert.equal(e.code, 'E_WRITE_NOT_ALLOWED');
  });

  it('G-D6: programs cannot reach airlock itself or unapproved code tools', async () => {
    const bob = await connectAs('bob');
    const p = await bob.client.callTool({ name: 'propose_code_tool', arguments: {
      name: 'unapproved_tool', description: 'never approved', language: 'javascript', code: 'return 1', connectors: ['test'] } });
    assert.ok(!p.isError, JSON.stringify(p));
    // The hint names the whole approve command, --as included (the CLI refuses it without).
    const id = p.structuredContent.id;
    assert.ok(p.structuredContent.message.includes(`airlock tools approve ${id} --as ADMIN_USER --config CONFIG_FILE`),
      p.structuredContent.message);
    for (const name of ['execute', 'airlock.execute', 'propose_code_tool', 'unapproved_tool', 'test.unapproved_tool', 'run_code']) {
      const e = await callError(bob, name, {});
      assert.ok(['E_TOOL_NOT_DECLARED', 'E_INVALID_ARGS'].includes(e.code), `${name}: ${JSON.stringify(e)}`);
    }
    const direct = await errorOrResult(() => bob.client.callTool({ name: 'unapproved_tool', arguments: {} }));
    assert.ok(direct.error, 'an unapproved code tool is not callable');
  });

  it('G-D7: calls queued when the run ends are never dispatched', async () => {
    const bob = await connectAs('bob');
    const before = (await execute(bob, 'return await tools.call("test.stats", {})')).result.started_slow;
    const sc = await execute(bob, `for (let i = 0; i < 6; i++) tools.call("test.slow", {ms: 1500}).catch(() => {});
      return "left";`, { limits: { max_concurrent: 1 } });
    assert.equal(sc.ok, true, JSON.stringify(sc));
    await new Promise((r) => setTimeout(r, 2500));
    const afterRun = (await execute(bob, 'return await tools.call("test.stats", {})')).result.started_slow;
    assert.ok(afterRun - before <= 1, `started ${afterRun - before} slow calls after the run ended`);
  });
});

describe('code tools: proposal, approval, rights (G-D8, G-D9)', () => {
  let proposal;

  it('G-D8: nobody approves their own proposal, and non-admins approve nothing', async () => {
    const bob = await connectAs('bob');
    const r = await bob.client.callTool({ name: 'propose_code_tool', arguments: {
      name: 'note_taker', description: 'Echoes a word and writes it down.', language: 'javascript',
      code: 'const e = await tools.call("test.echo", {text: args.word}); const w = await tools.call("test.write_note", {key: args.word, text: e}); return {echo: e, wrote: w};',
      input_schema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'], additionalProperties: false },
      connectors: ['test'], tools: ['test.echo', 'test.write_note'] } });
    assert.ok(!r.isError, JSON.stringify(r));
    proposal = r.structuredContent;
    assert.equal(proposal.status, 'proposed');
    // bob is not an admin.
    const byBob = cli(['tools', 'approve', proposal.id, '--as', 'bob', '--config', configFile], { allowFail: true });
    assert.equal(byBob.status, 3, byBob.stderr);
    // alice proposes her own tool and may not approve it.
    const alice = await connectAs('alice');
    const own = await alice.client.callTool({ name: 'propose_code_tool', arguments: {
      name: 'alice_own', description: 'mine', language: 'python', code: 'args', connectors: ['test'] } });
    assert.ok(!own.isError, JSON.stringify(own));
    const self = cli(['tools', 'approve', own.structuredContent.id, '--as', 'alice', '--config', configFile], { allowFail: true });
    assert.equal(self.status, 3, self.stderr);
    // Both denials are in the audit log.
    const denied = audit(['--user', 'bob']).concat(audit(['--user', 'alice']))
      .filter((row) => row.kind === 'code_tool_approve' || row.event?.kind === 'code_tool_approve' || JSON.stringify(row).includes('code_tool_approve'));
    assert.ok(denied.length >= 2, JSON.stringify(denied));
    assert.ok(JSON.stringify(denied).includes('denied'));
  });

  it('an admin approves; clients get tools/list_changed and the tool appears', async () => {
    const bob = await connectAs('bob');
    let changed = 0;
    bob.client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
    assert.ok(!(await toolNames(bob)).includes('note_taker'));
    const diff = cli(['tools', 'diff', proposal.id, '--config', configFile]);
    assert.match(diff.stdout, /test\.write_note/);
    cli(['tools', 'approve', proposal.id, '--as', 'alice', '--allow-write', '--config', configFile]);
    await waitFor(() => changed > 0, 10000);
    const list = (await bob.client.listTools()).tools;
    const tool = list.find((t) => t.name === 'note_taker');
    assert.ok(tool, 'approved tool listed');
    assert.equal(tool.annotations.readOnlyHint, false, 'it may write, so it is not read-only');
    // The stored-tools endpoint offers it too, without execute.
    const shelf = await connectAs('bob', '/shelf');
    const shelfNames = await toolNames(shelf);
    assert.ok(shelfNames.includes('note_taker') && !shelfNames.includes('execute') && !shelfNames.includes('propose_code_tool'),
      shelfNames.join());
  });

  it('runs with the invoker\'s rights: allow-write writes only for a role that may write', async () => {
    const bob = await connectAs('bob');
    const r = await bob.client.callTool({ name: 'note_taker', arguments: { word: 'bobword' } }, undefined, { timeout: 60000 });
    assert.equal(r.structuredContent.error?.code, 'E_WRITE_NOT_ALLOWED', JSON.stringify(r.structuredContent));
    const carol = await connectAs('carol');
    const ok = await carol.client.callTool({ name: 'note_taker', arguments: { word: 'carolword' } }, undefined, { timeout: 60000 });
    assert.equal(ok.structuredContent.ok, true, JSON.stringify(ok.structuredContent));
    assert.equal(ok.structuredContent.result.echo, 'carolword');
    // Arguments are validated against the input schema before anything runs.
    const bad = await carol.client.callTool({ name: 'note_taker', arguments: { word: 7 } });
    assert.equal(bad.isError, true);
    assert.equal(bad.structuredContent.error.code, 'E_INVALID_ARGS');
  });

  it('G-D9: an approved tool edited after approval is not callable until re-approved', async () => {
    const db = path.join(tmp, 'state', 'codetools.db');
    const carol = await connectAs('carol');
    assert.ok((await toolNames(carol)).includes('note_taker'));
    sql(db, `UPDATE code_tools SET code = 'return "evil"' WHERE id = '${proposal.id}'`);
    assert.ok(!(await toolNames(carol)).includes('note_taker'), 'a tampered tool is not listed');
    const r = await errorOrResult(() => carol.client.callTool({ name: 'note_taker', arguments: { word: 'x' } }));
    assert.ok(r.error || r.result.isError, JSON.stringify(r));
    assert.doesNotMatch(JSON.stringify(r), /evil/);
    // A changed program is a new proposal that needs its own approval.
    const bob = await connectAs('bob');
    const again = await bob.client.callTool({ name: 'propose_code_tool', arguments: {
      name: 'note_taker', description: 'v2', language: 'javascript', code: 'return args.word.toUpperCase()',
      input_schema: { type: 'object', properties: { word: { type: 'string' } } }, connectors: ['test'] } });
    assert.ok(!again.isError);
    assert.ok(!(await toolNames(carol)).includes('note_taker'), 'not callable before approval');
    cli(['tools', 'approve', again.structuredContent.id, '--as', 'alice', '--config', configFile]);
    const r2 = await carol.client.callTool({ name: 'note_taker', arguments: { word: 'up' } }, undefined, { timeout: 60000 });
    assert.equal(r2.structuredContent.result, 'UP', JSON.stringify(r2.structuredContent));
    // The run is audited as that code tool version.
    const runs = audit(['--user', 'carol']).filter((row) => row.type === 'run' && row.kind === 'code_tool');
    assert.equal(runs[runs.length - 1].tool_version_hash, again.structuredContent.hash);
  });

  it('a definer tool runs with the role the admin chose, not the caller\'s', async () => {
    const bob = await connectAs('bob');
    const p = await bob.client.callTool({ name: 'propose_code_tool', arguments: {
      name: 'team_note', description: 'Writes a team note.', language: 'python',
      code: 'tools.call("test.write_note", {"key": "team", "text": args["text"]})',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      connectors: ['test'], tools: ['test.write_note'] } });
    assert.ok(!p.isError, JSON.stringify(p));
    cli(['tools', 'approve', p.structuredContent.id, '--as', 'alice', '--allow-write', '--definer', 'writer', '--config', configFile]);
    await waitFor(async () => (await toolNames(bob)).includes('team_note'), 10000);
    // bob cannot write himself, but this tool writes as "writer".
    const r = await bob.client.callTool({ name: 'team_note', arguments: { text: 'hello' } }, undefined, { timeout: 60000 });
    assert.equal(r.structuredContent.ok, true, JSON.stringify(r.structuredContent));
    assert.ok(r.structuredContent.result.count >= 1, JSON.stringify(r.structuredContent));
    // Revocation removes it at once.
    cli(['tools', 'revoke', p.structuredContent.id, '--as', 'alice', '--config', configFile]);
    assert.ok(!(await toolNames(bob)).includes('team_note'));
  });
});

describe('audit (AU1..AU4) and keys', () => {
  it('AU1-AU3: one run row with who/what/limits/outcome, every call including denials, secrets redacted', async () => {
    const bob = await connectAs('bob');
    // The secret reaches the program from a tool result (never from its code,
    // which is stored verbatim) and leaves it as an argument named api_key.
    const sc = await execute(bob, `const c = await tools.call("test.env", {name: "AIRLOCK_TEST_SECRET"});
      const b = await tools.call("plain.echo", {text: "x"}).catch(e => e.code);
      const a = await tools.call("test.echo", {text: "visible", api_key: c.value});
      return [a, b, c.set];`);
    assert.equal(sc.ok, true, JSON.stringify(sc));
    const all = audit(['--user', 'bob']);
    const text = JSON.stringify(all);
    assert.ok(!text.includes(ENV_SECRET), 'secrets passed as arguments are redacted; connector env never appears');
    assert.ok(!text.includes(keys.bob.secret), 'API keys never appear');
    const runs = all.filter((r) => r.type === 'run' || r.run_id && r.code !== undefined && r.status !== undefined);
    const run = runs[runs.length - 1];
    assert.ok(run, text.slice(0, 2000));
    assert.equal(run.user, 'bob');
    assert.equal(run.role, 'analyst');
    assert.equal(run.kind, 'inline');
    assert.equal(run.language, 'javascript');
    assert.equal(run.status, 'SUCCESS');
    assert.deepEqual(run.connectors, ['test']);
    assert.equal(run.limits.max_calls, 500);
    assert.match(run.code_sha256, /^[0-9a-f]{64}$/);
    assert.equal(run.calls_total, 3);
    assert.equal(run.calls_denied, 1);
    const calls = audit(['--run', run.run_id]).filter((r) => r.seq !== undefined);
    assert.deepEqual(calls.map((c) => c.seq), [1, 2, 3]);
    assert.equal(calls[1].decision, 'denied');
    assert.equal(calls[2].decision, 'allowed');
    assert.match(JSON.stringify(calls[2].args_redacted), /\[redacted\]/);
  });

  it('audit verify passes, then catches a modified row and a deleted row', () => {
    assert.equal(cli(['audit', 'verify', '--config', configFile]).status, 0);
    const db = path.join(tmp, 'state', 'audit.db');
    const copy = path.join(tmp, 'audit-copy.db');
    copyFileSync(db, copy);
    sql(db, "UPDATE audit_runs SET status = 'SUCCESS', user = 'mallory' WHERE id = (SELECT MAX(id) FROM audit_runs)");
    const modified = cli(['audit', 'verify', '--config', configFile], { allowFail: true });
    assert.equal(modified.status, 4);
    assert.match(modified.stdout + modified.stderr, /modified/);
    sql(copy, 'DELETE FROM audit_events WHERE id = (SELECT MIN(id) FROM audit_events) + 1');
    const deleted = cli(['audit', 'verify', '--db', copy], { allowFail: true });
    assert.equal(deleted.status, 4);
    assert.match(deleted.stdout + deleted.stderr, /deleted/);
  });

  it('key revocation takes effect on the very next request', async () => {
    createKey('dave', 'analyst');
    const dave = await connectAs('dave');
    assert.ok((await toolNames(dave)).includes('execute'));
    cli(['keys', 'revoke', keys.dave.id, '--file', path.join(tmp, 'keys.json'), '--config', configFile, '--as', 'alice']);
    const r = await errorOrResult(() => dave.client.listTools());
    assert.ok(r.error, 'a revoked key is refused');
    assert.match(String(r.error.message), /401|Unauthorized/i);
  });

  it('AU4: with the audit log unavailable and fail_closed, airlock refuses to serve', () => {
    const bad = path.join(tmp, 'bad.json');
    writeFileSync(bad, JSON.stringify({ audit: { path: '/proc/airlock-no-such-dir/audit.db' }, server: { state_dir: path.join(tmp, 'state2') } }));
    const r = spawnSync(AIRLOCK_BIN, ['serve', '--config', bad], { input: '', encoding: 'utf8', timeout: 30000 });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /audit/);
  });
});

describe('proposal rate limit', () => {
  it('refuses proposals past codeMode.proposals_per_hour per user, audited as denied', async () => {
    const erin = await connectAs('erin');
    const propose = (i) => erin.client.callTool({ name: 'propose_code_tool', arguments: {
      name: `erin_tool_${i}`, description: 'rate limit test', language: 'javascript', code: 'return 1',
      connectors: ['test'] } });
    for (let i = 0; i < 6; i++) {
      const r = await propose(i);
      assert.ok(!r.isError, JSON.stringify(r.structuredContent));
    }
    const refused = await propose(6);
    assert.equal(refused.isError, true);
    assert.equal(refused.structuredContent.error.code, 'E_RATE_LIMITED', JSON.stringify(refused.structuredContent));
    assert.match(refused.structuredContent.error.message, /at most 6 proposals per hour/);
    // Another user is not affected.
    const bob = await connectAs('bob');
    const other = await bob.client.callTool({ name: 'propose_code_tool', arguments: {
      name: 'bob_after_erin', description: 'not limited by erin', language: 'javascript', code: 'return 1',
      connectors: ['test'] } });
    assert.ok(!other.isError, JSON.stringify(other.structuredContent));
    const denied = audit(['--type', 'event', '--user', 'erin']).filter((r) => r.kind === 'code_tool_propose' &&
      r.detail?.decision === 'denied');
    assert.equal(denied.length, 1, JSON.stringify(denied));
  });
});
