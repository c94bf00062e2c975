// Tools inside a session (issue 35): open_session {mode: "codemode"} gives a
// Python session whose cells are `execute` programs with `tools`. Driven by
// the official MCP SDK client (v1) over Streamable HTTP with API keys, so
// the per-cell governance (roles, write grants) and the audit log are the
// real ones. Connector: tests/fixtures/mcp-servers/test-server.mjs.
//
// What it shows: a cell loads tool data into a variable and later cells
// keep working on it; every cell's calls are governed, limited and audited
// on their own; the bridge is a fresh socket per cell that is dead once
// the cell ends (a descriptor a cell kept, and a thread left calling tools,
// get nothing between cells); the session containment cases hold in a
// code-mode session; bad uses get clear errors.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';

import { AIRLOCK_BIN, REPO, connectHttp, startHttpServer, textOf } from './helpers.mjs';

const TEST_SERVER = path.join(REPO, 'tests', 'fixtures', 'mcp-servers', 'test-server.mjs');
const SECRET = `sessionsecret${Date.now()}`;

let tmp;
let configFile;
let server;
const keys = {};
const clients = [];

function cli(args) {
  return execFileSync(AIRLOCK_BIN, args, { encoding: 'utf8' });
}

function describeResult(r) {
  return JSON.stringify(r?.structuredContent ?? r, null, 1).slice(0, 3000);
}

async function connectAs(user) {
  const c = await connectHttp(`http://127.0.0.1:${server.port}/mcp`,
    { headers: { Authorization: `Bearer ${keys[user]}` } });
  clients.push(c);
  return c.client;
}

function call(client, name, args) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
}

async function open(client, extra = {}) {
  const r = await call(client, 'open_session', { language: 'python', mode: 'codemode', ...extra });
  assert.notEqual(r.isError, true, describeResult(r));
  return r.structuredContent;
}

function cell(client, session, code, extra = {}) {
  return call(client, 'execute', { language: 'python', code, session_id: session.session_id, ...extra });
}

async function cellOk(client, session, code, extra = {}) {
  const r = await cell(client, session, code, extra);
  assert.notEqual(r.isError, true, describeResult(r));
  assert.equal(r.structuredContent.ok, true, describeResult(r));
  assert.equal(r.structuredContent.session_id, session.session_id);
  return r.structuredContent;
}

before(async () => {
  if (!existsSync(TEST_SERVER)) throw new Error(`${TEST_SERVER} missing: run npm ci in tests/fixtures/mcp-servers`);
  tmp = mkdtempSync(path.join(tmpdir(), 'airlock-e2e-cmsession-'));
  configFile = path.join(tmp, 'airlock.json');
  writeFileSync(configFile, JSON.stringify({
    server: { state_dir: path.join(tmp, 'state'), http: { keys_file: path.join(tmp, 'keys.json') } },
    mcpServers: {
      test: { command: process.execPath, args: [TEST_SERVER], env: { AIRLOCK_TEST_SECRET: SECRET }, trusted: true },
    },
    roles: {
      reader: { connectors: ['test'], tools: ['test.*'], inline: true },
      noprograms: { connectors: ['test'], tools: ['test.*'], inline: false },
    },
  }, null, 2));
  for (const [user, role] of [['rita', 'reader'], ['otto', 'reader'], ['nina', 'noprograms']]) {
    const out = JSON.parse(cli(['keys', 'create', '--file', path.join(tmp, 'keys.json'), '--config', configFile,
      '--as', 'setup', '--user', user, '--role', role, '--json']));
    keys[user] = out.secret;
  }
  server = await startHttpServer({ args: ['--config', configFile] });
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await server?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('code-mode sessions', () => {
  // A failed check leaves its session open: close every one (4 per caller).
  afterEach(async () => {
    const client = await connectAs('rita');
    const listed = await call(client, 'list_sessions', {});
    for (const s of listed.structuredContent.sessions) await call(client, 'close_session', { session_id: s.session_id });
  });

  it('tools/list offers mode "codemode" on open_session and session_id on execute', async () => {
    const client = await connectAs('rita');
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.deepEqual(byName.open_session.inputSchema.properties.mode.enum, ['interpreter', 'codemode']);
    assert.equal(byName.execute.inputSchema.properties.session_id.type, 'string');
  });

  it('a cell loads tool data into a variable; later cells keep working on it', async () => {
    const client = await connectAs('rita');
    const s = await open(client);
    assert.equal(s.mode, 'codemode');
    assert.equal(s.language, 'python');
    assert.equal(s.isolation, 'native');

    const first = await cellOk(client, s, `
rows = [tools.call("test.echo", {"text": "row %d" % i}) for i in range(3)]
len(rows)`);
    assert.equal(first.result, 3);
    assert.equal(first.calls.total, 3);
    assert.deepEqual(first.calls.log.map((c) => [c.op, c.name, c.decision]),
      [0, 1, 2].map(() => ['call', 'test.echo', 'allowed']));

    // No tool call: the data is still there.
    const second = await cellOk(client, s, 'rows');
    assert.deepEqual(second.result, ['row 0', 'row 1', 'row 2']);
    assert.equal(second.calls.total, 0);

    // Async twins work in a cell; functions defined earlier persist.
    await cellOk(client, s, 'def shout(x):\n    return x.upper()');
    const third = await cellOk(client, s, `
import asyncio
more = await asyncio.gather(*(tools.acall("test.echo", {"text": shout(r)}) for r in rows))
rows + more`);
    assert.deepEqual(third.result, ['row 0', 'row 1', 'row 2', 'ROW 0', 'ROW 1', 'ROW 2']);
    assert.equal(third.calls.total, 3);

    // A value without a JSON form is null (its repr is in stdout).
    const fourth = await cellOk(client, s, '{1, 2}');
    assert.equal(fourth.result, null);
    assert.equal(fourth.stdout, '{1, 2}\n');
    await call(client, 'close_session', { session_id: s.session_id });
  });

  it('javascript: what a cell keeps in globals is there in the next (the embedded engine)', async () => {
    const client = await connectAs('rita');
    const r = await call(client, 'open_session', { language: 'javascript', mode: 'codemode' });
    assert.notEqual(r.isError, true, describeResult(r));
    const s = r.structuredContent;
    assert.equal(s.isolation, 'wasm');
    assert.match(textOf(r), /Pass it to execute \{language: "javascript", code, session_id\}/);
    const jsCell = async (code) => {
      const out = await call(client, 'execute', { language: 'javascript', code, session_id: s.session_id });
      assert.notEqual(out.isError, true, describeResult(out));
      return out.structuredContent;
    };
    const first = await jsCell(
      'globalThis.rows = await Promise.all([0, 1, 2].map((i) => tools.call("test.echo", {text: "row " + i})));\nrows.length');
    assert.equal(first.result, 3);
    assert.equal(first.calls.total, 3);
    const second = await jsCell('rows.map((r) => r.toUpperCase())');
    assert.deepEqual(second.result, ['ROW 0', 'ROW 1', 'ROW 2']);
    assert.equal(second.calls.total, 0);
    const third = await jsCell('tools.call("test.echo", {text: rows[2]})');  // a promise value is awaited
    assert.equal(third.result, 'row 2');
    const denied = await call(client, 'execute', { language: 'javascript', session_id: s.session_id,
      code: 'await tools.call("test.write_note", {key: "k", text: "t"})' });
    assert.equal(denied.isError, true);
    assert.equal(denied.structuredContent.calls.denied, 1);
    const after = await jsCell('rows.length');
    assert.equal(after.result, 3, 'a failed cell keeps the session');
    await call(client, 'close_session', { session_id: s.session_id });
  });

  it('governance and limits apply per cell; a failing cell does not lose the session', async () => {
    const client = await connectAs('rita');
    const s = await open(client);
    await cellOk(client, s, 'kept = tools.call("test.echo", {"text": "kept"})');

    // A write tool is denied (the role has no write grant) and never runs.
    const denied = await cell(client, s, 'tools.call("test.write_note", {"key": "k", "text": "t"})');
    assert.equal(denied.isError, true, describeResult(denied));
    const { error } = denied.structuredContent;
    assert.ok(error.code === 'E_WRITE_NOT_ALLOWED' || (error.code === 'E_PROGRAM_ERROR' && error.name === 'ToolError'),
      describeResult(denied));
    assert.equal(denied.structuredContent.calls.denied, 1);
    assert.match(denied.structuredContent.stderr, /ToolError/);

    // A cell's own lower limit: the second call is over it.
    const limited = await cellOk(client, s, `
out = []
for i in range(2):
    try:
        out.append(tools.call("test.echo", {"text": "n%d" % i}))
    except ToolError as e:
        out.append(e.code)
out`, { limits: { max_calls: 1 } });
    assert.deepEqual(limited.result, ['n0', 'E_LIMIT_CALLS']);
    assert.equal(limited.limits.max_calls, 1);

    // The next cell has the default limits again, and the old state.
    const next = await cellOk(client, s, '[kept] + [tools.call("test.echo", {"text": "n%d" % i}) for i in range(2)]');
    assert.deepEqual(next.result, ['kept', 'n0', 'n1']);

    // Connectors the cell names are all it sees.
    const none = await cellOk(client, s, `
try:
    tools.call("test.echo", {"text": "x"})
    r = "called"
except ToolError as e:
    r = e.code
r`, { connectors: [] });
    assert.notEqual(none.result, 'called');

    // Every cell is in the audit log as its own run, kind "session".
    const rows = JSON.parse(cli(['audit', '--config', configFile, '--json', '--user', 'rita']))
      .filter((row) => row.type === 'run' && row.kind === 'session' && row.limits?.session_id === s.session_id);
    assert.ok(rows.length >= 5, `audited cells: ${JSON.stringify(rows).slice(0, 2000)}`);
    assert.ok(rows.some((row) => row.status === 'DENIED' || row.calls_denied === 1), JSON.stringify(rows).slice(0, 2000));
    await call(client, 'close_session', { session_id: s.session_id });
  });

  it('the bridge is per cell: a descriptor a cell kept is dead in the next cell', async () => {
    const client = await connectAs('rita');
    const s = await open(client);
    // The cell's bridge is a socket besides the control channel (fd 3):
    // keep a copy of it.
    const kept = await cellOk(client, s, `
import os, stat
mine = [fd for fd in map(int, os.listdir("/proc/self/fd")) if fd > 3 and
        os.path.exists("/proc/self/fd/%d" % fd) and stat.S_ISSOCK(os.fstat(fd).st_mode)]
copies = [os.dup(fd) for fd in mine]
len(copies)`);
    assert.ok(kept.result >= 1, describeResult({ structuredContent: kept }));

    await new Promise((r) => setTimeout(r, 500));  // idle: the session is frozen, no bridge exists
    const after = await cellOk(client, s, `
import json
states = []
for fd in copies:
    frame = json.dumps({"id": 99, "op": "call", "name": "test.echo", "args": {"text": "smuggled"}}).encode()
    try:
        os.write(fd, len(frame).to_bytes(4, "big") + frame)
        got = os.read(fd, 4)
        states.append("eof" if not got else "answered")
    except OSError as e:
        states.append(type(e).__name__)
states`);
    assert.equal(after.result.length, kept.result);
    for (const st of after.result) assert.notEqual(st, 'answered', describeResult({ structuredContent: after }));
    assert.equal(after.calls.total, 0, 'nothing smuggled reached the gateway');
    await call(client, 'close_session', { session_id: s.session_id });
  });

  it('containment holds in a code-mode session: no network, no host files, no secrets, own processes only', async () => {
    const client = await connectAs('rita');
    const s = await open(client);
    const r = await cellOk(client, s, `
import os, socket
out = {}
try:
    socket.create_connection(("127.0.0.1", ${server.port}), timeout=2)
    out["inet"] = "connected"
except OSError as e:
    out["inet"] = type(e).__name__
try:
    open("${configFile}").read()
    out["config"] = "read"
except OSError as e:
    out["config"] = type(e).__name__
out["env"] = sorted(k for k in os.environ if "SECRET" in k or "AIRLOCK" in k)
out["secret_in_env"] = any("${SECRET}" in v for v in os.environ.values())
out["uid"] = os.getuid()
out["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
try:
    open("/usr/airlock-probe", "w")
    out["rootfs"] = "writable"
except OSError as e:
    out["rootfs"] = type(e).__name__
out`);
    const o = r.result;
    assert.notEqual(o.inet, 'connected');
    assert.notEqual(o.config, 'read');
    assert.deepEqual(o.env, []);
    assert.equal(o.secret_in_env, false);
    assert.notEqual(o.uid, 0);
    assert.ok(o.pids.every((p) => p < 100), `pids: ${o.pids}`);
    assert.notEqual(o.rootfs, 'writable');
    await call(client, 'close_session', { session_id: s.session_id });
  });

  it('sessions are the owner\'s; the role is checked per cell', async () => {
    const rita = await connectAs('rita');
    const otto = await connectAs('otto');
    const s = await open(rita);
    const r = await cell(otto, s, '1');
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.error.code, 'E_SESSION_NOT_FOUND', describeResult(r));

    // A role without programs is not offered execute (nor sessions).
    const nina = await connectAs('nina');
    const names = (await nina.listTools()).tools.map((t) => t.name);
    assert.ok(!names.includes('execute'), `nina's tools: ${names}`);
    const nr = await cell(nina, s, '1').catch((e) => e);
    assert.ok(nr instanceof Error || nr.isError === true, String(nr));
    await call(rita, 'close_session', { session_id: s.session_id });
  });

  it('bad uses get clear errors', async () => {
    const client = await connectAs('rita');
    const rb = await call(client, 'open_session', { language: 'ruby', mode: 'codemode' });
    assert.equal(rb.isError, true);
    assert.match(textOf(rb), /code-mode sessions run javascript or python/);
    const bad = await call(client, 'open_session', { language: 'python', mode: 'notebook' }).catch((e) => e);
    assert.ok(bad instanceof Error || bad.isError === true, String(bad));

    const s = await open(client);
    const viaRunCode = await call(client, 'run_code', { language: 'python', code: '1', session_id: s.session_id });
    assert.equal(viaRunCode.isError, true);
    assert.match(textOf(viaRunCode), /code-mode session: run its cells with execute/);

    const plain = await call(client, 'open_session', { language: 'python' });
    assert.notEqual(plain.isError, true, describeResult(plain));
    assert.equal(plain.structuredContent.mode, 'interpreter');
    const viaExecute = await cell(client, plain.structuredContent, '1');
    assert.equal(viaExecute.isError, true);
    assert.equal(viaExecute.structuredContent.error.code, 'E_INVALID_REQUEST');
    assert.match(textOf(viaExecute), /not a code-mode session/);

    const wrongLanguage = await call(client, 'execute', { language: 'javascript', code: '1', session_id: s.session_id });
    assert.equal(wrongLanguage.isError, true);

    // A cell that times out loses the session, and says so.
    const slow = await cell(client, s, 'import time\ntime.sleep(30)', { limits: { wall_ms: 1000 } });
    assert.equal(slow.isError, true);
    assert.equal(slow.structuredContent.error.code, 'E_LIMIT_WALLCLOCK', describeResult(slow));
    assert.match(slow.structuredContent.session_lost, /time limit/);
    const gone = await cell(client, s, '1');
    assert.equal(gone.structuredContent.error.code, 'E_SESSION_LOST', describeResult(gone));
    for (const id of [s.session_id, plain.structuredContent.session_id]) {
      await call(client, 'close_session', { session_id: id });
    }
  });
});
