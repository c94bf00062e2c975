// The HTTP front door alone, A against B: two airlock binaries (e.g. before
// and after a change to src/mcp's HTTP server), each serving over HTTP,
// driven by raw JSON-RPC (node:http, one keep-alive connection, no SDK) in
// alternating rounds so that the machine's drift hits both alike. Each call
// comes after an idle gap, as an agent's calls do (a wake-up from idle is
// what the front door's threads cost). Prints p50/p90 per binary and
// method, and the ratio B/A; a stdio server of A's, spoken to the same way,
// gives the stdio baseline; and the same client against bench/http_floor.c
// (built here with cc: a responder that parses nothing and answers at once)
// gives the floor, what an HTTP call costs this client whatever the server
// (and `cat` the same for stdio: a line out and back through two pipes).
// --b may be the same binary as --a (the ratios to stdio are then the
// figure).
//
//   node bench/http_front.mjs --a OLD/airlock --b build/airlock [--rounds 60] [--gap-ms 300]
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const A = arg('a');
const B = arg('b', 'build/airlock');
const ROUNDS = Number(arg('rounds', 60));
const GAP = Number(arg('gap-ms', 300));
if (!A) {
  console.error('usage: node bench/http_front.mjs --a AIRLOCK_A --b AIRLOCK_B [--rounds N] [--gap-ms MS]');
  process.exit(2);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const INIT = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'http-front', version: '0' } };
const CALLS = {
  'tools/list': { method: 'tools/list', params: {} },
  'run_code print(1)': { method: 'tools/call', params: { name: 'run_code', arguments: { language: 'python', code: 'print(1)' } } },
};

function startHttp(bin, stateDir) {
  return new Promise((resolve, reject) => {
    const proc = spawn(bin, ['serve', '--http', '127.0.0.1:0', '--state-dir', stateDir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    proc.stderr.on('data', (d) => {
      err += d;
      const m = /http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err);
      if (m && Number(m[1]) > 0) resolve({ proc, url: m[0] });
    });
    proc.on('exit', (code) => reject(new Error(`${bin} exited ${code}: ${err.slice(-2000)}`)));
  });
}

// bench/http_floor.c on a free port: { url, proc }.
async function startFloor(dir) {
  const bin = path.join(dir, 'http_floor');
  const cc = spawnSync('cc', ['-O2', '-o', bin, path.join(REPO, 'bench', 'http_floor.c')], { encoding: 'utf8' });
  if (cc.status !== 0) throw new Error(`cc bench/http_floor.c: ${cc.error?.message ?? cc.stderr}`);
  const port = 20000 + Math.floor(Math.random() * 20000);
  const proc = spawn(bin, [String(port)], { stdio: 'ignore' });
  await sleep(200);
  return { proc, url: `http://127.0.0.1:${port}/mcp` };
}

async function httpClient(url) {
  const u = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let sid = null;
  const post = (body) => new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (sid) Object.assign(headers, { 'mcp-session-id': sid, 'mcp-protocol-version': INIT.protocolVersion });
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers }, (res) => {
      let data = '';
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ headers: res.headers, data }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
  sid = (await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: INIT })).headers['mcp-session-id'] ?? null;
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  let id = 1;
  return {
    async call({ method, params }) {
      const t0 = performance.now();
      const r = await post({ jsonrpc: '2.0', id: id++, method, params });
      const t = performance.now() - t0;
      if (!/"result"/.test(r.data) || /"isError":true/.test(r.data)) throw new Error(`http: ${r.data.slice(0, 300)}`);
      return t;
    },
    close() { agent.destroy(); },
  };
}

async function stdioClient(bin, stateDir) {
  const proc = spawn(bin, ['serve', '--state-dir', stateDir], { stdio: ['pipe', 'pipe', 'ignore'] });
  const lines = readline.createInterface({ input: proc.stdout });
  const waiting = new Map();
  lines.on('line', (line) => {
    const m = JSON.parse(line);
    waiting.get(m.id)?.(m);
    waiting.delete(m.id);
  });
  let id = 0;
  const send = (method, params) => new Promise((resolve) => {
    const my = id++;
    waiting.set(my, resolve);
    proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: my, method, params })}\n`);
  });
  await send('initialize', INIT);
  proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  return {
    async call({ method, params }) {
      const t0 = performance.now();
      const m = await send(method, params);
      const t = performance.now() - t0;
      if (!m.result || m.result.isError) throw new Error(`stdio: ${JSON.stringify(m).slice(0, 300)}`);
      return t;
    },
    close() { proc.stdin.end(); proc.kill(); },
  };
}

// `cat` as a stdio "server": the pipe floor, read as stdioClient reads.
function pipeFloor() {
  const proc = spawn('cat', [], { stdio: ['pipe', 'pipe', 'ignore'] });
  const lines = readline.createInterface({ input: proc.stdout });
  let waiting = null;
  lines.on('line', () => { waiting?.(); waiting = null; });
  return {
    async call({ method, params }) {
      const t0 = performance.now();
      await new Promise((resolve) => {
        waiting = resolve;
        proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })}\n`);
      });
      return performance.now() - t0;
    },
    close() { proc.stdin.end(); },
  };
}

const pct = (xs, p) => {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

const tmp = mkdtempSync(path.join(os.tmpdir(), 'airlock-http-front-'));
const servers = [];
try {
  const a = await startHttp(A, path.join(tmp, 'a'));
  servers.push(a.proc);
  const b = await startHttp(B, path.join(tmp, 'b'));
  servers.push(b.proc);
  const floor = await startFloor(tmp);
  servers.push(floor.proc);
  const clients = {
    'A http': await httpClient(a.url),
    'B http': await httpClient(b.url),
    'A stdio': await stdioClient(A, path.join(tmp, 's')),
    floor: await httpClient(floor.url),
    'pipe floor': pipeFloor(),
  };
  await sleep(2000);  // pools warm up
  const times = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [call, body] of Object.entries(CALLS)) {
      for (const [who, c] of Object.entries(clients)) {
        if (who.includes('floor') && call !== 'tools/list') continue;  // the floors answer anything alike
        await sleep(GAP);
        (times[`${call}|${who}`] ??= []).push(await c.call(body));
      }
    }
  }
  for (const c of Object.values(clients)) c.close();
  const floorP50 = pct(times['tools/list|floor'], 50);
  const pipeP50 = pct(times['tools/list|pipe floor'], 50);
  // What HTTP costs this client beyond what stdio does, whatever the server.
  const clientExtra = floorP50 - pipeP50;
  console.log(`${ROUNDS} calls each, ${GAP} ms idle before every call; A = ${A}, B = ${B}`);
  console.log(`floors, p50: HTTP to bench/http_floor.c ${floorP50.toFixed(2)} ms, stdio through cat ${pipeP50.toFixed(2)} ms: `
    + `HTTP costs this client ${clientExtra.toFixed(2)} ms more than stdio whatever the server; `
    + 'the last column takes that off the HTTP figure');
  console.log("| call | A http p50 / p90 | B http p50 / p90 | B/A p50 | A stdio p50 | A http / stdio | B http / stdio | (B http − the client's HTTP extra) / stdio |");
  console.log('|---|---|---|---|---|---|---|---|');
  for (const call of Object.keys(CALLS)) {
    const [ah, bh, as] = ['A http', 'B http', 'A stdio'].map((w) => times[`${call}|${w}`]);
    const f = (x) => x.toFixed(2);
    console.log(`| ${call} | ${f(pct(ah, 50))} / ${f(pct(ah, 90))} ms | ${f(pct(bh, 50))} / ${f(pct(bh, 90))} ms | `
      + `${(pct(bh, 50) / pct(ah, 50)).toFixed(2)}× | ${f(pct(as, 50))} ms | ${(pct(ah, 50) / pct(as, 50)).toFixed(2)}× | `
      + `${(pct(bh, 50) / pct(as, 50)).toFixed(2)}× | ${((pct(bh, 50) - clientExtra) / pct(as, 50)).toFixed(2)}× |`);
  }
} finally {
  for (const p of servers) p.kill('SIGTERM');
  await sleep(500);
  rmSync(tmp, { recursive: true, force: true });
}
