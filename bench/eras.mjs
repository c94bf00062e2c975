#!/usr/bin/env node
// The two MCP eras side by side (issue 30's figures): python `print(1)`
// through `run_code` with the official SDK v2 client pinned to the modern
// era (2026-07-28: no handshake, `_meta` on every request) and pinned to the
// legacy era (2025-11-25: initialize + Mcp-Session-Id), over stdio and
// Streamable HTTP, interleaved round by round against the same servers; the
// v1 SDK client (legacy) as the reference most users have today. Then the
// cost of a handshake: a modern `server/discover` against a legacy
// `initialize` + `notifications/initialized` as raw HTTP POSTs (and the
// SDK's whole connect), with `tools/list` as the baseline of one request.
//
//   node bench/eras.mjs [--runs N] [--gap-ms MS]     (defaults 40, 60)
//
// Needs build/airlock (or $AIRLOCK_BIN) and the npm packages scripts/setup.sh
// installs in tests/e2e. Prints medians and p90 with ratios; asserts nothing.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(REPO, 'tests', 'e2e', 'package.json'));
const V1 = {
  Client: require('@modelcontextprotocol/sdk/client/index.js').Client,
  Stdio: require('@modelcontextprotocol/sdk/client/stdio.js').StdioClientTransport,
  Http: require('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport,
};
const V2 = require('@modelcontextprotocol/client');
const V2Stdio = require('@modelcontextprotocol/client/stdio').StdioClientTransport;

const AIRLOCK = process.env.AIRLOCK_BIN || path.join(REPO, 'build', 'airlock');
const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';

function arg(name, dflt) {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}
const RUNS = arg('--runs', 40);
// A pause before each timed call, as an agent's calls have: back to back,
// a call finds the pool still refilling after the call before it (another
// cell's, on a shared 2-core machine) and the cells measure each other.
const GAP_MS = arg('--gap-ms', 60);
const pause = () => new Promise((r) => setTimeout(r, GAP_MS));

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const ms = (x) => x.toFixed(2);

function startHttp() {
  return new Promise((resolve, reject) => {
    const proc = spawn(AIRLOCK, ['serve', '--http', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no URL from airlock serve --http:\n${err}`)), 20000);
    proc.stderr.on('data', (d) => {
      err += d;
      const m = /http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err);
      if (m && Number(m[1]) > 0) {
        clearTimeout(timer);
        resolve({ url: m[0], proc });
      }
    });
    proc.on('exit', (c) => reject(new Error(`airlock serve --http exited ${c}:\n${err}`)));
  });
}

function v2Client(version) {
  return new V2.Client({ name: 'airlock-bench-eras', version: '0' },
    { capabilities: {}, versionNegotiation: { mode: version === MODERN ? { pin: version } : 'legacy' } });
}

async function connect(kind, transport, url) {
  if (kind === 'v1 legacy') {
    const c = new V1.Client({ name: 'airlock-bench-eras', version: '0' });
    await c.connect(transport === 'stdio' ? new V1.Stdio({ command: AIRLOCK, args: ['serve'] }) : new V1.Http(new URL(url)));
    return c;
  }
  const c = v2Client(kind === 'v2 modern' ? MODERN : LEGACY);
  await c.connect(transport === 'stdio' ? new V2Stdio({ command: AIRLOCK, args: ['serve'] })
    : new V2.StreamableHTTPClientTransport(new URL(url)));
  return c;
}

async function rawPost(url, body, headers) {
  const t0 = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const dt = performance.now() - t0;
  if (res.status >= 300) throw new Error(`${body.method}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return { dt, res, text };
}

async function main() {
  if (!existsSync(AIRLOCK)) throw new Error(`${AIRLOCK} missing: build first (scripts/setup.sh)`);
  console.log(`# MCP eras: run_code python print(1), ${RUNS} rounds, interleaved, ${GAP_MS} ms before each call`);
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model}, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
  // Each cell gets a server of its own (stdio spawns one per client; HTTP
  // starts one per client here) so that no cell finds a pool the cell
  // before it has just emptied.
  const kinds = ['v2 modern', 'v2 legacy', 'v1 legacy'];
  const cells = [];
  const servers = [];
  try {
    for (const transport of ['stdio', 'http']) {
      for (const kind of kinds) {
        let url;
        if (transport === 'http') {
          servers.push(await startHttp());
          url = servers.at(-1).url;
        }
        cells.push({ transport, kind, client: await connect(kind, transport, url), t: [] });
      }
    }
    const call = (c) => c.callTool({ name: 'run_code', arguments: { language: 'python', code: 'print(1)' } });
    for (const c of cells) for (let i = 0; i < 3; i++) await call(c.client);  // warm the pool and the clients
    for (let r = 0; r < RUNS; r++) {
      for (const c of cells) {
        await pause();
        const t0 = performance.now();
        const out = await call(c.client);
        c.t.push(performance.now() - t0);
        if (out.structuredContent?.stdout !== '1\n') throw new Error(`${c.kind} ${c.transport}: ${JSON.stringify(out).slice(0, 300)}`);
      }
    }
    console.log('| transport | client | p50 ms | p90 ms | p50 ratio to v2 legacy |');
    console.log('|---|---|---|---|---|');
    for (const transport of ['stdio', 'http']) {
      const base = quantile(cells.find((c) => c.transport === transport && c.kind === 'v2 legacy').t, 0.5);
      for (const c of cells.filter((x) => x.transport === transport)) {
        const p50 = quantile(c.t, 0.5);
        console.log(`| ${transport} | ${c.kind} | ${ms(p50)} | ${ms(quantile(c.t, 0.9))} | ${(p50 / base).toFixed(2)} |`);
      }
    }
  } finally {
    for (const c of cells) await c.client.close().catch(() => {});
  }
  const http = servers[0];
  for (const s of servers.slice(1)) s.proc.kill('SIGTERM');

  // The handshake: raw requests against the same HTTP server.
  const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '0' } };
  const modernHeaders = (method) => ({ 'mcp-protocol-version': MODERN, 'mcp-method': method });
  const t = { discover: [], list: [], init: [], connectModern: [], connectLegacy: [], runModern: [], runLegacy: [] };
  // Raw run_code calls (no SDK) in both eras against the same server.
  const legacyInit = await rawPost(http.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {
    protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'bench', version: '0' } } }, {});
  const legacySid = legacyInit.res.headers.get('mcp-session-id');
  const legacyHeaders = { 'mcp-session-id': legacySid, 'mcp-protocol-version': LEGACY };
  await rawPost(http.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, legacyHeaders);
  const runArgs = { name: 'run_code', arguments: { language: 'python', code: 'print(1)' } };
  for (let r = 0; r < RUNS; r++) {
    await pause();
    t.runModern.push((await rawPost(http.url, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { ...runArgs, _meta: meta } },
      { ...modernHeaders('tools/call'), 'mcp-name': 'run_code' })).dt);
    await pause();
    t.runLegacy.push((await rawPost(http.url, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: runArgs }, legacyHeaders)).dt);
  }
  for (let r = 0; r < RUNS; r++) {
    t.discover.push((await rawPost(http.url, { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } },
      modernHeaders('server/discover'))).dt);
    t.list.push((await rawPost(http.url, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: meta } },
      modernHeaders('tools/list'))).dt);
    const init = await rawPost(http.url, { jsonrpc: '2.0', id: 3, method: 'initialize', params: {
      protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'bench', version: '0' } } }, {});
    const sid = init.res.headers.get('mcp-session-id');
    const note = await rawPost(http.url, { jsonrpc: '2.0', method: 'notifications/initialized' },
      { 'mcp-session-id': sid, 'mcp-protocol-version': LEGACY });
    t.init.push(init.dt + note.dt);
    await fetch(http.url, { method: 'DELETE', headers: { 'mcp-session-id': sid, 'mcp-protocol-version': LEGACY } });
    for (const [key, version] of [['connectModern', MODERN], ['connectLegacy', LEGACY]]) {
      const c = v2Client(version);
      const t0 = performance.now();
      await c.connect(new V2.StreamableHTTPClientTransport(new URL(http.url)));
      t[key].push(performance.now() - t0);
      await c.close();
    }
  }
  const base = quantile(t.list, 0.5);
  console.log('\n| over HTTP | p50 ms | p90 ms | ratio to one tools/list |');
  console.log('|---|---|---|---|');
  for (const [label, xs] of [['modern tools/list (one request, baseline)', t.list],
    ['modern server/discover', t.discover], ['legacy initialize + notifications/initialized', t.init],
    ['SDK v2 connect, modern (discover)', t.connectModern], ['SDK v2 connect, legacy (initialize)', t.connectLegacy],
    ['raw run_code print(1), modern', t.runModern], ['raw run_code print(1), legacy session', t.runLegacy]]) {
    console.log(`| ${label} | ${ms(quantile(xs, 0.5))} | ${ms(quantile(xs, 0.9))} | ${(quantile(xs, 0.5) / base).toFixed(2)} |`);
  }
  http.proc.kill('SIGTERM');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
