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

import { AIRLOCK_BIN, HELLO, LANGUAGES, PNG_MAGIC, assertBinary, startHttpServer, textOf } from './helpers.mjs';

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
