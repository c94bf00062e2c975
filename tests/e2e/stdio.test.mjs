// airlock serve over stdio (newline-delimited JSON), driven by the official
// MCP TypeScript SDK client, plus raw-line checks of bad input.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';

import { AIRLOCK_BIN, assertBinary, connectStdio, stopProcess } from './helpers.mjs';
import { defineSharedTests } from './shared_suite.mjs';

describe('stdio: SDK client', () => {
  let conn;
  before(async () => { conn = await connectStdio(); });
  after(async () => { await conn?.close(); });

  defineSharedTests(() => conn);
});

// What agents can import: list_languages {packages: true} runs each
// language's probe in the jail (the real interpreters) and lists what it found.
describe('stdio: list_languages with packages', () => {
  let conn;
  before(async () => { conn = await connectStdio(); });
  after(async () => { await conn?.close(); });

  const list = async (args) => (await conn.client.callTool({ name: 'list_languages', arguments: args }, undefined,
    { timeout: 120000 })).structuredContent;
  const names = (tier) => (tier?.packages ?? []).map((p) => p.name.toLowerCase());

  it('python: the distributions the jail can import, with versions, in each tier', async () => {
    const doc = await list({ language: 'python', packages: true });
    assert.equal(doc.languages.length, 1);
    const py = doc.languages[0];
    assert.equal(py.name, 'python');
    const native = py.packages.native;
    assert.ok(Array.isArray(native.packages), JSON.stringify(native));
    assert.ok(names(native).includes('numpy'), JSON.stringify(native).slice(0, 500));
    for (const p of native.packages) assert.ok(p.version && p.kind === 'package', JSON.stringify(p));
    if (py.tiers.includes('wasm')) assert.ok(py.packages.wasm.packages || py.packages.wasm.note, JSON.stringify(py.packages.wasm));
  });

  it('node built-ins, ruby gems and php extensions; bash has none', async () => {
    const doc = await list({ packages: true });
    const by = Object.fromEntries(doc.languages.map((l) => [l.name, l]));
    assert.ok(names(by.javascript.packages.native).includes('fs'));
    assert.ok(names(by.typescript.packages.native).includes('path'));
    assert.ok(names(by.ruby.packages.native).includes('json'), JSON.stringify(by.ruby.packages.native).slice(0, 300));
    assert.ok(names(by.php.packages.native).includes('json'), JSON.stringify(by.php.packages.native).slice(0, 300));
    assert.equal(by.bash.packages.native.packages, null);
    assert.match(by.bash.packages.native.note, /no package list/);
  });

  it('without packages: no probing and no packages key; a bad argument is refused', async () => {
    const doc = await list({});
    assert.ok(doc.languages.every((l) => !('packages' in l)));
    const bad = await conn.client.callTool({ name: 'list_languages', arguments: { packages: 'yes' } });
    assert.equal(bad.isError, true, JSON.stringify(bad));
    const unknown = await conn.client.callTool({ name: 'list_languages', arguments: { language: 'cobol' } });
    assert.equal(unknown.isError, true, JSON.stringify(unknown));
  });
});

// A raw newline-delimited JSON-RPC peer for inputs the SDK cannot produce.
class RawStdio {
  constructor() {
    assertBinary();
    this.proc = spawn(AIRLOCK_BIN, ['serve'], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.buf = '';
    this.lines = [];
    this.waiters = [];
    this.stdoutNoise = [];
    this.stderr = '';
    this.proc.stderr.on('data', (d) => { this.stderr += d.toString(); });
    this.proc.stdout.on('data', (d) => {
      this.buf += d.toString();
      let nl;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        if (!line.trim()) continue;
        let msg;
        try {
          msg = JSON.parse(line);
        } catch {
          this.stdoutNoise.push(line);
          continue;
        }
        this.lines.push(msg);
        this.waiters.splice(0).forEach((w) => w());
      }
    });
  }

  write(text) { this.proc.stdin.write(text); }
  send(obj) { this.write(`${JSON.stringify(obj)}\n`); }

  // Next message matching `pred` (removed from the queue).
  async next(pred, timeoutMs = 10000) {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const i = this.lines.findIndex(pred);
      if (i >= 0) return this.lines.splice(i, 1)[0];
      const left = end - Date.now();
      if (left <= 0) throw new Error(`no matching message within ${timeoutMs} ms; have ${JSON.stringify(this.lines)}; stderr: ${this.stderr.slice(-2000)}`);
      await new Promise((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => { clearTimeout(t); r(); });
      });
    }
  }

  async initialize() {
    this.send({
      jsonrpc: '2.0', id: 'init', method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
    const r = await this.next((m) => m.id === 'init');
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return r;
  }

  close() { this.proc.stdin.end(); return stopProcess(this.proc); }
}

describe('stdio: raw protocol', () => {
  let raw;
  before(async () => { raw = new RawStdio(); });
  after(async () => { await raw?.close(); });

  it('initialize negotiates 2025-06-18 when the client asks for it', async () => {
    const r = await raw.initialize();
    assert.equal(r.result?.protocolVersion, '2025-06-18', JSON.stringify(r));
  });

  it('malformed JSON → -32700 parse error, and the connection keeps working', async () => {
    raw.write('{"jsonrpc": "2.0", "id": 7, "method": \n');
    const err = await raw.next((m) => m.error && m.error.code === -32700);
    assert.equal(err.id, null);
    raw.send({ jsonrpc: '2.0', id: 8, method: 'ping' });
    const pong = await raw.next((m) => m.id === 8);
    assert.deepEqual(pong.result, {});
  });

  it('unknown method → -32601', async () => {
    raw.send({ jsonrpc: '2.0', id: 9, method: 'no/such/method' });
    const r = await raw.next((m) => m.id === 9);
    assert.equal(r.error?.code, -32601, JSON.stringify(r));
  });

  it('invalid params shape → -32602 (or a tool error) naming the field', async () => {
    raw.send({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'run_code', arguments: { language: 'python', code: 42 } } });
    const r = await raw.next((m) => m.id === 10);
    if (r.error) {
      assert.equal(r.error.code, -32602, JSON.stringify(r));
      assert.match(r.error.message, /code/);
    } else {
      assert.equal(r.result.isError, true, JSON.stringify(r));
      assert.match(JSON.stringify(r.result.content), /code/);
    }
  });

  it('a message over the size limit → a clear error, and the connection keeps working', async () => {
    const big = 'x'.repeat(6 << 20);
    raw.send({ jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'run_code', arguments: { language: 'python', code: `# ${big}` } } });
    const r = await raw.next((m) => m.error && (m.id === 11 || m.id === null), 20000);
    assert.ok(r.error.message.length > 0, JSON.stringify(r));
    raw.send({ jsonrpc: '2.0', id: 12, method: 'ping' });
    const pong = await raw.next((m) => m.id === 12, 20000);
    assert.deepEqual(pong.result, {});
  });

  it('lone surrogates (not encodable as UTF-8) in code get a well-formed answer', async () => {
    raw.write('{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"python","code":"print(\'a\\ud800b\')"}}}\n');
    // A result or error for id 13, or a -32700 parse error (id null) from a
    // parser that rejects unpaired surrogates: all are well-formed answers.
    const r = await raw.next((m) => m.id === 13 || (m.id === null && m.error?.code === -32700), 20000);
    assert.ok(r.result || r.error, JSON.stringify(r));
    raw.send({ jsonrpc: '2.0', id: 14, method: 'ping' });
    assert.deepEqual((await raw.next((m) => m.id === 14)).result, {});
  });

  it('stdout carried only JSON-RPC messages (logs go to stderr)', () => {
    assert.deepEqual(raw.stdoutNoise, []);
  });
});

describe('stdio: protocol version negotiation', () => {
  for (const [asked, acceptable] of [
    ['2025-11-25', ['2025-11-25']],
    ['2025-06-18', ['2025-06-18']],
    // An older client gets a version the server supports (or its own).
    ['2024-11-05', ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']],
  ]) {
    it(`client asks for ${asked}`, async () => {
      const raw = new RawStdio();
      try {
        raw.send({
          jsonrpc: '2.0', id: 1, method: 'initialize',
          params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
        });
        const r = await raw.next((m) => m.id === 1);
        assert.ok(acceptable.includes(r.result?.protocolVersion), JSON.stringify(r));
        assert.ok(r.result.capabilities?.tools, 'tools capability');
        assert.ok(r.result.serverInfo?.name, 'serverInfo');
      } finally {
        await raw.close();
      }
    });
  }
});
