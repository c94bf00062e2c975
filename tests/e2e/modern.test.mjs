// The modern era (MCP 2026-07-28: no initialize, `_meta` on every request,
// server/discover, resultType, MCP-Protocol-Version / Mcp-Method / Mcp-Name
// headers) driven by the official SDK v2 client (@modelcontextprotocol/client
// 2.4.0, pinned to 2026-07-28 with `versionNegotiation: { mode: { pin } }`,
// so a server that does not speak the modern era fails loudly) over stdio and
// Streamable HTTP, plus raw-fetch bad-input cases of the modern HTTP front.
// The legacy era is tested by the other files with the v1 SDK.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import * as z from 'zod';

import {
  AIRLOCK_BIN, HELLO, LANGUAGES, PNG_MAGIC, REPO, assertBinary, pidsWithMarker, sleep, startHttpServer, textOf, uniqueMarker, waitFor,
} from './helpers.mjs';

const MODERN = '2026-07-28';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPS = 'io.modelcontextprotocol/clientCapabilities';
const META_CLIENT = 'io.modelcontextprotocol/clientInfo';

function newModernClient() {
  return new Client({ name: 'airlock-e2e-modern', version: '0.0.0' },
    { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } });
}

async function connectModernStdio() {
  assertBinary();
  const client = newModernClient();
  const transport = new StdioClientTransport({ command: AIRLOCK_BIN, args: ['serve'], stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (d) => { err = (err + d).slice(-16384); });
  try {
    await client.connect(transport);
  } catch (e) {
    await client.close().catch(() => {});
    throw new Error(`modern stdio connect (pin ${MODERN}) failed: ${e.message}\n--- airlock stderr ---\n${err}`);
  }
  return { client, close: () => client.close() };
}

async function connectModernHttp(url, headers = {}) {
  const client = newModernClient();
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  } catch (e) {
    await client.close().catch(() => {});
    throw new Error(`modern HTTP connect (pin ${MODERN}) to ${url} failed: ${e.message}`);
  }
  return { client, close: () => client.close() };
}

const show = (r) => JSON.stringify(r?.structuredContent ?? r, null, 1).slice(0, 2000);
const call = (client, name, args) => client.callTool({ name, arguments: args }, { timeout: 60000 });

function defineModernTests(ctx) {
  it('connects in the modern era: no initialize, server/discover answered', () => {
    const { client } = ctx();
    assert.equal(client.getProtocolEra(), 'modern');
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
    const d = client.getDiscoverResult();
    assert.ok(d, 'server/discover result');
    assert.ok(client.getServerVersion()?.name, 'serverInfo.name');
    assert.ok(client.getServerCapabilities()?.tools, 'tools capability');
  });

  it('tools/list lists run_code and the session tools', async () => {
    const { tools } = await ctx().client.listTools();
    const names = tools.map((t) => t.name);
    for (const n of ['run_code', 'list_languages', 'open_session', 'run_code', 'close_session']) assert.ok(names.includes(n), `${n} in ${names}`);
  });

  for (const language of LANGUAGES) {
    it(`run_code hello world: ${language}`, async () => {
      const r = await call(ctx().client, 'run_code', { language, code: HELLO[language] });
      assert.equal(r.structuredContent?.status, 'ok', show(r));
      assert.equal(r.structuredContent.stdout, `hello from ${language}\n`);
      assert.notEqual(r.isError, true);
    });
  }

  it('run_code: matplotlib PNG as image content and an output file', async () => {
    const code = ['import matplotlib', 'matplotlib.use("Agg")', 'import matplotlib.pyplot as plt',
      'plt.plot([1, 2, 3], [4, 1, 9])', 'plt.savefig("plot.png")', 'open("out.txt", "w").write("data")'].join('\n');
    const r = await call(ctx().client, 'run_code', { language: 'python', code, output_files: ['*.png', 'out.txt'], timeout_ms: 30000 });
    assert.equal(r.structuredContent?.status, 'ok', show(r));
    const img = r.content.find((c) => c.type === 'image');
    assert.ok(img, `image content in ${JSON.stringify(r.content.map((c) => c.type))}`);
    assert.equal(img.mimeType, 'image/png');
    assert.deepEqual(Buffer.from(img.data, 'base64').subarray(0, 8), PNG_MAGIC);
    const names = r.structuredContent.files.map((f) => f.name);
    assert.ok(names.includes('plot.png') && names.includes('out.txt'), `files: ${names}`);
  });

  it('sessions: open_session, two run_code cells share state, close_session', async () => {
    const { client } = ctx();
    const o = await call(client, 'open_session', { language: 'python' });
    assert.notEqual(o.isError, true, show(o));
    const id = o.structuredContent?.session_id;
    assert.ok(id, show(o));
    try {
      const a = await call(client, 'run_code', { session_id: id, code: 'x = 41' });
      assert.equal(a.structuredContent?.status, 'ok', show(a));
      const b = await call(client, 'run_code', { session_id: id, code: 'print(x + 1)' });
      assert.equal(b.structuredContent?.status, 'ok', show(b));
      assert.match(b.structuredContent.stdout, /42/);
    } finally {
      const c = await call(client, 'close_session', { session_id: id });
      assert.notEqual(c.isError, true, show(c));
    }
    const after = await call(client, 'run_code', { session_id: id, code: 'print(1)' }).catch((error) => ({ error }));
    assert.ok(after.error || after.isError, `run_code on a closed session must fail: ${show(after)}`);
  });

  it('errors: unknown language → error naming the known languages', async () => {
    const r = await call(ctx().client, 'run_code', { language: 'cobol', code: 'x' }).catch((error) => ({ error }));
    const text = r.error ? r.error.message : (assert.equal(r.isError, true, show(r)), textOf(r) + JSON.stringify(r.structuredContent ?? {}));
    assert.match(text, /python/);
  });

  it('errors: bad arguments (code: number) → invalid params naming the field', async () => {
    const r = await call(ctx().client, 'run_code', { language: 'python', code: 42 }).catch((error) => ({ error }));
    if (r.error) {
      assert.equal(r.error.code, -32602, r.error.message);
      assert.match(r.error.message, /code/);
    } else {
      assert.equal(r.isError, true, show(r));
      assert.match(textOf(r), /code/);
    }
  });
}

describe('modern era over stdio (SDK v2 client, pinned 2026-07-28)', () => {
  let conn;
  before(async () => { conn = await connectModernStdio(); });
  after(async () => { await conn?.close(); });
  defineModernTests(() => conn);
});

// Over HTTP with an API key (an anonymous modern HTTP caller has no identity
// to own code sessions; docs/mcp.md "Identity").
describe('modern era over Streamable HTTP with an API key (SDK v2 client, pinned 2026-07-28)', () => {
  let tmp;
  let server;
  let conn;
  let anon;
  before(async () => {
    assertBinary();
    tmp = mkdtempSync(path.join(tmpdir(), 'airlock-modern-'));
    const configFile = path.join(tmp, 'airlock.json');
    const keysFile = path.join(tmp, 'keys.json');
    writeFileSync(configFile, JSON.stringify({ server: { state_dir: path.join(tmp, 'state'), http: { keys_file: keysFile } } }));
    const r = spawnSync(AIRLOCK_BIN, ['keys', 'create', '--file', keysFile, '--config', configFile, '--as', 'setup',
      '--user', 'alice', '--role', 'admin', '--json'], { encoding: 'utf8', timeout: 60000 });
    assert.equal(r.status, 0, `airlock keys create: ${r.stdout}\n${r.stderr}`);
    const { secret } = JSON.parse(r.stdout);
    server = await startHttpServer({ args: ['--config', configFile] });
    conn = await connectModernHttp(server.url, { Authorization: `Bearer ${secret}` });
  });
  after(async () => {
    await conn?.close();
    await anon?.close();
    await server?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });
  defineModernTests(() => conn);
});

// The Tasks extension (io.modelcontextprotocol/tasks, docs/mcp.md "Tasks"):
// SDK v2 clients that declare it in their capabilities (sent in every
// request's _meta) and two API keys (alice, bob). tasks/get and tasks/cancel
// go through client.request; the task-creating tools/call is a raw POST with
// the same headers and _meta, because SDK 2.4.0 refuses resultType "task"
// on tools/call (UNSUPPORTED_RESULT_TYPE: it has no client side of the
// extension yet).
describe('tasks', () => {
  const TASKS = 'io.modelcontextprotocol/tasks';
  const Any = z.object({}).passthrough();
  let tmp;
  let server;
  const conns = {};
  const newTaskClient = () => new Client({ name: 'airlock-e2e-tasks', version: '0.0.0' },
    { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: { pin: MODERN } } });
  const request = (user, method, params) => conns[user].request({ method, params }, Any, { timeout: 60000 });
  const secrets = {};
  let nextId = 1;
  async function runTask(user, args, tool = 'run_code') {
    const body = {
      jsonrpc: '2.0', id: nextId++, method: 'tools/call',
      params: {
        name: tool, arguments: args,
        _meta: { [META_VERSION]: MODERN, [META_CAPS]: { extensions: { [TASKS]: {} } }, [META_CLIENT]: { name: 'airlock-e2e-tasks', version: '0' } },
      },
    };
    const res = await fetch(server.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${secrets[user]}`,
        'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': tool,
      },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200);
    const j = await res.json();
    assert.ok(j.result, JSON.stringify(j));
    return j.result;
  }
  async function poll(user, taskId, timeoutMs = 60000) {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const t = await request(user, 'tasks/get', { taskId });
      if (t.status !== 'working' || Date.now() > end) return t;
      await sleep(Math.min(t.pollIntervalMs ?? 200, 200));
    }
  }

  before(async () => {
    assertBinary();
    tmp = mkdtempSync(path.join(tmpdir(), 'airlock-tasks-'));
    const configFile = path.join(tmp, 'airlock.json');
    const keysFile = path.join(tmp, 'keys.json');
    writeFileSync(configFile, JSON.stringify({
      server: { state_dir: path.join(tmp, 'state'), http: { keys_file: keysFile } },
      tasks: { mode: 'long', min_timeout_ms: 20000, poll_interval_ms: 200 },
      // One connector, so that code mode (execute) is offered.
      mcpServers: {
        test: { command: process.execPath, args: [path.join(REPO, 'tests', 'fixtures', 'mcp-servers', 'test-server.mjs')], trusted: true },
      },
    }));
    for (const user of ['alice', 'bob']) {
      const r = spawnSync(AIRLOCK_BIN, ['keys', 'create', '--file', keysFile, '--config', configFile, '--as', 'setup',
        '--user', user, '--role', 'admin', '--json'], { encoding: 'utf8', timeout: 60000 });
      assert.equal(r.status, 0, `airlock keys create: ${r.stdout}\n${r.stderr}`);
      secrets[user] = JSON.parse(r.stdout).secret;
    }
    server = await startHttpServer({ args: ['--config', configFile] });
    for (const user of ['alice', 'bob']) {
      const client = newTaskClient();
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url),
        { requestInit: { headers: { Authorization: `Bearer ${secrets[user]}` } } }));
      conns[user] = client;
    }
  });
  after(async () => {
    for (const c of Object.values(conns)) await c.close().catch(() => {});
    await server?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('server/discover advertises the extension', () => {
    assert.deepEqual(conns.alice.getServerCapabilities()?.extensions?.[TASKS], {});
  });

  it('a long run_code becomes a task, polled to the blocking result', async () => {
    const created = await runTask('alice', { language: 'python', code: 'import time\ntime.sleep(1)\nprint("slept")', timeout_ms: 30000 });
    assert.equal(created.resultType, 'task', show(created));
    assert.equal(created.status, 'working');
    assert.match(created.taskId, /^t_[0-9a-f]{32}$/);
    assert.equal(created.ttlMs, 3600000);
    assert.equal(created.pollIntervalMs, 200);
    const done = await poll('alice', created.taskId);
    assert.equal(done.status, 'completed', show(done));
    assert.equal(done.taskId, created.taskId);  // (the SDK strips resultType, its discriminator)
    assert.equal(done.result.structuredContent.status, 'ok', show(done));
    assert.equal(done.result.structuredContent.stdout, 'slept\n');
  });

  it('a task may ask timeout_ms above limits.max_timeout_ms (up to tasks.max_timeout_ms)', async () => {
    const created = await runTask('alice', { language: 'python', code: 'print("long allowed")', timeout_ms: 90000 });
    assert.equal(created.resultType, 'task', show(created));
    const done = await poll('alice', created.taskId);
    assert.equal(done.status, 'completed', show(done));
    assert.equal(done.result.structuredContent.status, 'ok', show(done));
    assert.equal(done.result.structuredContent.stdout, 'long allowed\n');
  });

  it('a short run_code stays a blocking call', async () => {
    const r = await runTask('alice', { language: 'python', code: 'print(6*7)' });
    assert.equal(r.resultType ?? 'complete', 'complete', show(r));
    assert.equal(r.structuredContent?.stdout, '42\n', show(r));
  });

  it('tasks/cancel ends a long task cancelled and its run is gone', async () => {
    const marker = uniqueMarker('task-cancel');
    const created = await runTask('alice', { language: 'python', code: `# ${marker}\nimport time\ntime.sleep(50)`, timeout_ms: 55000 });
    assert.equal(created.resultType, 'task', show(created));
    assert.ok(await waitFor(() => pidsWithMarker(marker).length > 0, 15000), 'the run started');
    const ack = await request('alice', 'tasks/cancel', { taskId: created.taskId });
    assert.equal(typeof ack, 'object', show(ack));  // an empty acknowledgement
    const done = await poll('alice', created.taskId, 20000);
    assert.equal(done.status, 'cancelled', show(done));
    assert.ok(await waitFor(() => pidsWithMarker(marker).length === 0, 10000), 'the run is gone');
  });

  it('execute with a wall clock above codeMode.limits.wall_ms runs as a task', async () => {
    const code = "const r = await tools.call('test.echo', {text: 'via task'}); return r;";
    const created = await runTask('alice', { language: 'javascript', code, limits: { wall_ms: 30000 } }, 'execute');
    assert.equal(created.resultType, 'task', show(created));
    const done = await poll('alice', created.taskId);
    assert.equal(done.status, 'completed', show(done));
    assert.equal(done.result.structuredContent.ok, true, show(done));
    assert.equal(done.result.structuredContent.limits.wall_ms, 30000);
    assert.match(JSON.stringify(done.result.structuredContent.result), /via task/);
  });

  it("another caller's task id is answered like an unknown one", async () => {
    const created = await runTask('alice', { language: 'python', code: 'print("mine")', timeout_ms: 30000 });
    assert.equal(created.resultType, 'task', show(created));
    const theirs = await request('bob', 'tasks/get', { taskId: created.taskId }).catch((e) => e);
    const unknown = await request('bob', 'tasks/get', { taskId: `t_${'0'.repeat(32)}` }).catch((e) => e);
    assert.equal(theirs.code, -32602, String(theirs));
    assert.equal(theirs.code, unknown.code);
    assert.equal(theirs.message, unknown.message);
    const cancel = await request('bob', 'tasks/cancel', { taskId: created.taskId }).catch((e) => e);
    assert.equal(cancel.code, -32602, String(cancel));
    assert.equal((await poll('alice', created.taskId)).status, 'completed');
  });
});

describe('modern era over anonymous Streamable HTTP', () => {
  let server;
  let conn;
  before(async () => {
    server = await startHttpServer();
    conn = await connectModernHttp(server.url);
  });
  after(async () => {
    await conn?.close();
    await server?.stop();
  });

  it('run_code works without a key', async () => {
    const r = await call(conn.client, 'run_code', { language: 'python', code: 'print(6*7)' });
    assert.equal(r.structuredContent?.stdout, '42\n', show(r));
  });

  it('open_session is refused with E_SESSION_NEEDS_IDENTITY (no identity to own it)', async () => {
    const r = await call(conn.client, 'open_session', { language: 'python' });
    assert.equal(r.isError, true, show(r));
    assert.match(textOf(r), /E_SESSION_NEEDS_IDENTITY/);
  });
});

// Raw POSTs: what the modern HTTP front must refuse (docs: spec 2026-07-28
// basic/transports/streamable-http.mdx "Server Validation", versioning.mdx).
describe('modern era over HTTP: raw bad input', () => {
  let server;
  before(async () => { server = await startHttpServer(); });
  after(async () => { await server?.stop(); });

  const meta = (version = MODERN) => ({ [META_VERSION]: version, [META_CAPS]: {}, [META_CLIENT]: { name: 'raw', version: '0' } });
  async function post(body, headers = {}) {
    const res = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    let json;
    const sse = /^data: (.*)$/m.exec(text);
    try { json = JSON.parse(sse ? sse[1] : text); } catch { json = undefined; }
    return { status: res.status, headers: res.headers, json, text };
  }
  const modernHeaders = (method, name, version = MODERN) => ({
    'mcp-protocol-version': version, 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}),
  });
  const listTools = (m = meta()) => ({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: m } });

  it('a well-formed modern tools/list succeeds with resultType complete', async () => {
    const r = await post(listTools(), modernHeaders('tools/list'));
    assert.equal(r.status, 200, r.text);
    assert.ok(r.json?.result?.tools?.length > 0, r.text);
    assert.equal(r.json.result.resultType, 'complete', r.text);
  });

  it('a well-formed modern tools/call carries Mcp-Name and succeeds', async () => {
    const body = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'run_code', arguments: { language: 'bash', code: 'echo $((6*7))' }, _meta: meta() } };
    const r = await post(body, modernHeaders('tools/call', 'run_code'));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json?.result?.structuredContent?.stdout, '42\n', r.text);
    assert.equal(r.json.result.resultType, 'complete', r.text);
  });

  it('modern headers but no _meta in the body → 400 with a JSON-RPC error', async () => {
    const r = await post({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }, modernHeaders('tools/list'));
    assert.equal(r.status, 400, r.text);
    assert.ok(r.json?.error, r.text);
  });

  it('_meta protocolVersion differs from MCP-Protocol-Version → 400, HeaderMismatch -32020', async () => {
    const r = await post(listTools(meta(MODERN)), modernHeaders('tools/list', undefined, '2025-11-25'));
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json?.error?.code, -32020, r.text);
  });

  it('Mcp-Method differs from the body method → 400, HeaderMismatch -32020', async () => {
    const r = await post(listTools(), modernHeaders('resources/list'));
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json?.error?.code, -32020, r.text);
  });

  it('Mcp-Name differs from the tool name → 400, HeaderMismatch -32020', async () => {
    const body = { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'list_languages', arguments: {}, _meta: meta() } };
    const r = await post(body, modernHeaders('tools/call', 'run_code'));
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json?.error?.code, -32020, r.text);
  });

  it('an unknown protocol version → 400, UnsupportedProtocolVersion -32022 with data.supported', async () => {
    const r = await post(listTools(meta('2099-01-01')), modernHeaders('tools/list', undefined, '2099-01-01'));
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json?.error?.code, -32022, r.text);
    const supported = r.json.error.data?.supported;
    assert.ok(Array.isArray(supported), r.text);
    assert.ok(supported.includes(MODERN) && supported.includes('2025-11-25'), r.text);
  });

  // The spec (streamable-http.mdx, backward compatibility) says a server that
  // speaks only 2026-07-28 SHOULD ignore the header; airlock is dual-era and
  // refuses the mix with 400 and a message naming the header (docs/http.md).
  // Either way, a modern response never carries a session id.
  it('a modern request with a legacy Mcp-Session-Id: refused (400, names the header) or ignored; never echoed', async () => {
    const init = await post({ jsonrpc: '2.0', id: 5, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
    assert.equal(init.status, 200, init.text);
    const sid = init.headers.get('mcp-session-id');
    assert.ok(sid, 'legacy initialize mints a session id');
    const r = await post(listTools(), { ...modernHeaders('tools/list'), 'mcp-session-id': sid });
    if (r.status === 200) {
      assert.ok(r.json?.result?.tools, r.text);
    } else {
      assert.equal(r.status, 400, r.text);
      assert.ok(r.json?.error, r.text);
      assert.match(r.json.error.message, /Mcp-Session-Id/i, r.text);
    }
    assert.equal(r.headers.get('mcp-session-id'), null, 'no session id echoed on a modern response');
  });
});
