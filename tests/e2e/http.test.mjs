// airlock serve --http (Streamable HTTP at /mcp), driven by the official MCP
// TypeScript SDK client, plus raw fetch checks of the HTTP layer.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
  connectHttp, pidsWithMarker, runCode, startHttpServer, textOf, uniqueMarker, waitFor,
} from './helpers.mjs';
import { defineSharedTests } from './shared_suite.mjs';

const INIT = {
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw-fetch', version: '0' } },
};
const ACCEPT = 'application/json, text/event-stream';

// Reads a POST response that is either application/json or an SSE stream;
// returns the JSON-RPC messages in it.
async function messagesOf(res) {
  const type = res.headers.get('content-type') ?? '';
  const body = await res.text();
  if (type.includes('text/event-stream')) {
    return body.split(/\r?\n\r?\n/).map((ev) => ev.split(/\r?\n/).filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart()).join('\n')).filter((d) => d.trim()).map((d) => JSON.parse(d));
  }
  if (!body.trim()) return [];
  const parsed = JSON.parse(body);
  return Array.isArray(parsed) ? parsed : [parsed];
}

// A raw session: initialize + initialized, returning its id and version.
async function rawSession(url, extraHeaders = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT, ...extraHeaders },
    body: JSON.stringify(INIT),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const sid = res.headers.get('mcp-session-id');
  const [msg] = await messagesOf(res);
  const version = msg.result.protocolVersion;
  const headers = {
    'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': sid, 'mcp-protocol-version': version, ...extraHeaders,
  };
  const n = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  assert.equal(n.status, 202);
  return { sid, version, headers };
}

describe('http: SDK client', () => {
  let server;
  let conn;
  before(async () => {
    server = await startHttpServer();
    conn = await connectHttp(server.url);
  });
  after(async () => {
    await conn?.close();
    await server?.stop();
  });

  it('server printed its URL; session id and protocol version negotiated', () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.ok(conn.transport.sessionId, 'Mcp-Session-Id received');
    assert.match(conn.transport.sessionId, /^[\x21-\x7e]+$/, 'session id is visible ASCII');
    assert.equal(conn.transport.protocolVersion, '2025-11-25');
  });

  defineSharedTests(() => conn);
});

describe('http: raw protocol and security', () => {
  let server;
  before(async () => { server = await startHttpServer(); });
  after(async () => { await server?.stop(); });

  it('initialize sets Mcp-Session-Id; requests without it are rejected', async () => {
    const { sid, headers } = await rawSession(server.url);
    assert.ok(sid && sid.length >= 16, `session id ${sid}`);
    const { 'mcp-session-id': _, ...noSid } = headers;
    const res = await fetch(server.url, { method: 'POST', headers: noSid, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) });
    assert.equal(res.status, 400);
    const unknown = await fetch(server.url, {
      method: 'POST', headers: { ...headers, 'mcp-session-id': 'deadbeef' }, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }),
    });
    assert.equal(unknown.status, 404);
  });

  it('a bad Origin gets 403 (DNS rebinding protection)', async () => {
    const res = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, origin: 'http://evil.example' },
      body: JSON.stringify(INIT),
    });
    assert.equal(res.status, 403);
    assert.equal(res.headers.get('mcp-session-id'), null, 'no session created');
    const ok = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, origin: `http://127.0.0.1:${server.port}` },
      body: JSON.stringify(INIT),
    });
    assert.equal(ok.status, 200, 'a localhost Origin is accepted');
  });

  it('a bad Host gets rejected with 4xx (DNS rebinding protection)', async () => {
    // fetch() cannot override Host; use node:http.
    const http = await import('node:http');
    const status = await new Promise((resolve, reject) => {
      const req = http.request(server.url, {
        method: 'POST', headers: { host: `evil.example:${server.port}`, 'content-type': 'application/json', accept: ACCEPT },
      }, (res) => { res.resume(); resolve(res.statusCode); });
      req.on('error', reject);
      req.end(JSON.stringify(INIT));
    });
    assert.ok(status >= 400 && status < 500, `status ${status}`);
  });

  it('malformed JSON → -32700, and the session keeps working', async () => {
    const { headers } = await rawSession(server.url);
    const res = await fetch(server.url, { method: 'POST', headers, body: '{"jsonrpc": "2.0", "id": 5, "method": ' });
    assert.ok([200, 400].includes(res.status), `status ${res.status}`);
    const [msg] = await messagesOf(res);
    assert.equal(msg?.error?.code, -32700, JSON.stringify(msg));
    const ping = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'ping' }) });
    assert.equal(ping.status, 200);
    const [pong] = await messagesOf(ping);
    assert.deepEqual(pong.result, {});
  });

  it('unknown method → -32601', async () => {
    const { headers } = await rawSession(server.url);
    const res = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'no/such' }) });
    const [msg] = await messagesOf(res);
    assert.equal(msg?.error?.code, -32601, JSON.stringify(msg));
  });

  it('unsupported MCP-Protocol-Version header → 400', async () => {
    const { headers } = await rawSession(server.url);
    const res = await fetch(server.url, {
      method: 'POST', headers: { ...headers, 'mcp-protocol-version': '1999-01-01' }, body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'ping' }),
    });
    assert.equal(res.status, 400);
  });

  it('a body over the size limit → 413, and the server keeps serving', async () => {
    const { headers } = await rawSession(server.url);
    const big = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'run_code', arguments: { language: 'python', code: `#${'x'.repeat(6 << 20)}` } } });
    let status;
    try {
      status = (await fetch(server.url, { method: 'POST', headers, body: big })).status;
    } catch (e) {
      // The server may close the connection before reading the whole body.
      status = `connection error: ${e.cause?.code ?? e.message}`;
    }
    assert.equal(status, 413);
    const ping = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'ping' }) });
    assert.equal(ping.status, 200);
  });

  it('wrong Accept → 406; wrong Content-Type → 415', async () => {
    const { headers } = await rawSession(server.url);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 11, method: 'ping' });
    const a = await fetch(server.url, { method: 'POST', headers: { ...headers, accept: 'text/html' }, body });
    assert.equal(a.status, 406);
    const c = await fetch(server.url, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body });
    assert.equal(c.status, 415);
  });

  it('GET opens the session\'s SSE stream', async () => {
    const { headers } = await rawSession(server.url);
    const ac = new AbortController();
    const res = await fetch(server.url, {
      method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': headers['mcp-session-id'], 'mcp-protocol-version': headers['mcp-protocol-version'] }, signal: ac.signal,
    });
    try {
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
    } finally {
      ac.abort();
    }
  });

  it('DELETE ends the session (transport.terminateSession())', async () => {
    const conn = await connectHttp(server.url);
    const sid = conn.transport.sessionId;
    assert.ok(sid);
    await conn.client.ping();
    await conn.transport.terminateSession();
    assert.equal(conn.transport.sessionId, undefined);
    const res = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(res.status, 404, 'an ended session is unknown');
    await conn.close();
  });

  it('many concurrent sessions', async () => {
    const conns = await Promise.all([0, 1, 2, 3, 4, 5].map(() => connectHttp(server.url)));
    try {
      const ids = new Set(conns.map((c) => c.transport.sessionId));
      assert.equal(ids.size, conns.length, 'distinct session ids');
      const results = await Promise.all(conns.map((c, i) => runCode(c.client, { language: 'bash', code: `echo session ${i}` })));
      results.forEach((r, i) => assert.equal(r.structuredContent.stdout, `session ${i}\n`, JSON.stringify(r.structuredContent)));
    } finally {
      await Promise.all(conns.map((c) => c.close()));
    }
  });

  it('a client that disconnects mid-run gets its run cancelled', async () => {
    const { headers } = await rawSession(server.url);
    const marker = uniqueMarker('disconnect');
    const ac = new AbortController();
    const pending = fetch(server.url, {
      method: 'POST', headers, signal: ac.signal,
      body: JSON.stringify({ jsonrpc: '2.0', id: 20, method: 'tools/call', params: { name: 'run_code', arguments: { language: 'python', code: `# ${marker}\nwhile True:\n    pass`, args: [marker], timeout_ms: 30000 } } }),
    }).then((r) => r.text());
    pending.catch(() => {});
    assert.ok(await waitFor(() => pidsWithMarker(marker).length > 0, 15000), 'run started');
    ac.abort();
    const gone = await waitFor(() => pidsWithMarker(marker).length === 0, 8000);
    assert.ok(gone, `run still alive 8 s after the client disconnected: ${pidsWithMarker(marker)}`);
  });

  it('DELETE of a session cancels its running call', async () => {
    const conn = await connectHttp(server.url);
    const marker = uniqueMarker('delete');
    const call = runCode(conn.client, { language: 'python', code: `# ${marker}\nwhile True:\n    pass`, args: [marker], timeout_ms: 30000 });
    call.catch(() => {});
    assert.ok(await waitFor(() => pidsWithMarker(marker).length > 0, 15000), 'run started');
    await conn.transport.terminateSession();
    const gone = await waitFor(() => pidsWithMarker(marker).length === 0, 5000);
    assert.ok(gone, `run still alive 5 s after DELETE: ${pidsWithMarker(marker)}`);
    await conn.close();
  });
});

describe('http: --token-file bearer token', () => {
  let server;
  let dir;
  const token = `tok-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'airlock-e2e-token-'));
    const file = path.join(dir, 'token');
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    server = await startHttpServer({ args: ['--token-file', file] });
  });
  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('no token → 401 with WWW-Authenticate', async () => {
    const res = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT }, body: JSON.stringify(INIT) });
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/i);
  });

  it('wrong token → 401', async () => {
    const res = await fetch(server.url, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, authorization: `Bearer ${token}x` }, body: JSON.stringify(INIT),
    });
    assert.equal(res.status, 401);
  });

  it('the right token works through the SDK client', async () => {
    const conn = await connectHttp(server.url, { headers: { Authorization: `Bearer ${token}` } });
    try {
      const r = await runCode(conn.client, { language: 'python', code: 'print(6*7)' });
      assert.equal(r.structuredContent.stdout, '42\n');
      assert.ok(textOf(r).includes('42'));
    } finally {
      await conn.close();
    }
  });
});
