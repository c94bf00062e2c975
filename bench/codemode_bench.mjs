#!/usr/bin/env node
// Overhead of code mode's tool bridge: what one `tools.call` from inside an
// `execute` program costs, against the same downstream tool called directly
// with the official MCP SDK client. All contenders run in this one process,
// interleaved round by round, so machine noise hits them alike.
//
//   node bench/codemode_bench.mjs [--calls N] [--rounds R] [--no-audit]   (defaults 100, 5)
//
// The server writes its audit log (one tool_call event, then N call rows and
// the run row in one transaction) to a temp state dir; --no-audit turns the
// log off, so two runs show what auditing costs.
//
// The binary is $AIRLOCK_BIN, else <repo>/build/airlock. The SDK comes from
// tests/e2e/node_modules, the downstream server is
// tests/fixtures/mcp-servers/test-server.mjs (tool `echo`).
//
// Rows:
//   direct      SDK client → test-server.mjs over stdio: per-call latency of
//               tools/call echo {text:"x"} (the baseline).
//   relayed     the same SDK client and server with one pass-through process
//               between them (bench/relay.c, built here with cc: one poll()
//               loop copying bytes both ways, parsing nothing): what one more
//               process hop costs on this machine with no work done in it,
//               the floor for a bridged call (which adds the program →
//               airlock hop to the direct path).
//   js / py     inside one `execute` per round, N sequential
//               tools.call("test.echo", {text:"x"}) each timed by the program
//               (program → fd 3 → runner → server → connector → downstream
//               and back). JS has only Date.now() (1 ms resolution, no
//               `performance` in the jail), so its median is quantised; its
//               mean is not biased by that.
//   py session  the python program as a cell of one code-mode session
//               (open_session mode "codemode"; execute with session_id):
//               the same calls, through a bridge made for that cell.
//   call log    the duration_ms airlock logs per call (bridge session →
//               connector → back; floored to whole ms, so its mean is low by
//               ~0.5 ms and its median is often 0).
//   execute     client-side wall time of a whole execute with 0 calls
//               (ZERO_PER_ROUND per round) and with N calls (the js / py run
//               above); (t_N - t_0) / N cross-checks the per-call figure.
// Prints medians and p90 over all samples of all rounds, and ratios to the
// direct baseline. Not a test: it asserts nothing about the figures.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(REPO, 'tests', 'e2e', 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

const AIRLOCK_BIN = process.env.AIRLOCK_BIN || path.join(REPO, 'build', 'airlock');
const TEST_SERVER = path.join(REPO, 'tests', 'fixtures', 'mcp-servers', 'test-server.mjs');

function flag(name, fallback) {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} wants a positive integer`);
  return v;
}
const N = flag('--calls', 100);
const R = flag('--rounds', 5);
const AUDIT = !process.argv.includes('--no-audit');
const WARMUP = 20;
const ZERO_PER_ROUND = 3;  // executes with 0 calls per round and language

// ---- statistics ------------------------------------------------------------
const sorted = (xs) => [...xs].sort((a, b) => a - b);
const quantile = (xs, q) => {
  const s = sorted(xs);
  return s.length ? s[Math.min(s.length - 1, Math.round(q * (s.length - 1)))] : NaN;
};
const median = (xs) => quantile(xs, 0.5);
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

// ---- processes and cleanup -------------------------------------------------
const tmp = mkdtempSync(path.join(os.tmpdir(), 'airlock-codemode-bench-'));
const clients = [];  // {client, transport}
let cleaned = false;
function killChildren() {
  for (const { transport } of clients) {
    const pid = transport.pid;
    if (pid) try { process.kill(pid, 'SIGTERM'); } catch { /* already gone */ }
  }
}
async function cleanup() {
  if (cleaned) return;
  cleaned = true;
  for (const { client } of clients) await client.close().catch(() => {});
  killChildren();
  rmSync(tmp, { recursive: true, force: true });
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => { killChildren(); rmSync(tmp, { recursive: true, force: true }); process.exit(130); });
}

async function connect(command, args) {
  const transport = new StdioClientTransport({ command, args, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => { if (stderr.length < 64 * 1024) stderr += d; });
  const client = new Client({ name: 'codemode-bench', version: '0.0.0' }, { capabilities: {} });
  clients.push({ client, transport });
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`${command} ${args.join(' ')}: ${e.message}\n${stderr}`);
  }
  return client;
}

// ---- the contenders --------------------------------------------------------
async function directCalls(client, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    times.push(performance.now() - t0);
    if (r.content?.[0]?.text !== 'x') throw new Error(`direct echo: ${JSON.stringify(r)}`);
  }
  return times;
}

const PROGRAMS = {
  javascript: (n) => `
const times = [];
for (let i = 0; i < ${n}; i++) {
  const t0 = Date.now();
  const r = await tools.call("test.echo", {text: "x"});
  times.push(Date.now() - t0);
  if (r !== "x") throw new Error("echo returned " + JSON.stringify(r));
}
return times;`,
  python: (n) => `
import time
times = []
for _ in range(${n}):
    t0 = time.perf_counter()
    r = tools.call("test.echo", {"text": "x"})
    times.append((time.perf_counter() - t0) * 1000.0)
    if r != "x":
        raise RuntimeError("echo returned %r" % (r,))
result = times`,
};

// One execute; returns {wall (client side, ms), times (in-program), logged}.
async function execute(client, language, n) {
  const t0 = performance.now();
  const r = await client.callTool({ name: 'execute', arguments: { language, code: PROGRAMS[language](n) } });
  const wall = performance.now() - t0;
  const sc = r.structuredContent;
  if (!sc?.ok) throw new Error(`execute ${language}: ${JSON.stringify(sc ?? r).slice(0, 2000)}`);
  if (!Array.isArray(sc.result) || sc.result.length !== n) throw new Error(`execute ${language}: result ${JSON.stringify(sc.result)}`);
  return { wall, times: sc.result, logged: sc.calls.log.map((e) => e.duration_ms) };
}

// One cell of code-mode session `id`: N calls (the value is `times`), or 0.
async function cell(client, id, n) {
  const code = n ? `${PROGRAMS.python(n)}\ntimes` : '0';
  const t0 = performance.now();
  const r = await client.callTool({ name: 'execute', arguments: { language: 'python', code, session_id: id } });
  const wall = performance.now() - t0;
  const sc = r.structuredContent;
  if (!sc?.ok) throw new Error(`session cell: ${JSON.stringify(sc ?? r).slice(0, 2000)}`);
  if (n && (!Array.isArray(sc.result) || sc.result.length !== n)) throw new Error(`session cell: result ${JSON.stringify(sc.result)}`);
  return { wall, times: n ? sc.result : [] };
}

// ---- main ------------------------------------------------------------------
if (!existsSync(AIRLOCK_BIN)) throw new Error(`airlock binary not found at ${AIRLOCK_BIN} (build it, or set AIRLOCK_BIN)`);
const config = path.join(tmp, 'config.json');
writeFileSync(config, JSON.stringify({
  mcpServers: { test: { command: process.execPath, args: [TEST_SERVER], trusted: true } },
  codeMode: { limits: { max_calls: Math.max(500, N + 10), wall_ms: Math.max(10000, N * 200) } },
  server: { state_dir: path.join(tmp, 'state') },
  audit: { enabled: AUDIT },
}, null, 2));
console.log(`audit log: ${AUDIT ? 'on (SQLite, synchronous=FULL)' : 'off'}`);

const load0 = os.loadavg();
const started = performance.now();
try {
  const direct = await connect(process.execPath, [TEST_SERVER]);
  const relay = path.join(tmp, 'relay');
  const cc = spawnSync('cc', ['-O2', '-o', relay, path.join(REPO, 'bench', 'relay.c')], { encoding: 'utf8' });
  if (cc.status !== 0) throw new Error(`cc bench/relay.c: ${cc.error?.message ?? cc.stderr}`);
  const relayed = await connect(relay, [process.execPath, TEST_SERVER]);
  const airlock = await connect(AIRLOCK_BIN, ['serve', '--config', config]);

  // Warm-up: the first bridge call starts the connector's session, the first
  // run of each language warms the runner and the page cache.
  await directCalls(direct, WARMUP);
  await directCalls(relayed, WARMUP);
  for (const lang of ['javascript', 'python']) {
    await execute(airlock, lang, WARMUP);
    await execute(airlock, lang, 0);
  }
  const opened = await airlock.callTool({ name: 'open_session', arguments: { language: 'python', mode: 'codemode' } });
  const sessionId = opened.structuredContent?.session_id;
  if (!sessionId) throw new Error(`open_session: ${JSON.stringify(opened).slice(0, 2000)}`);
  await cell(airlock, sessionId, WARMUP);

  const s = {
    direct: [], relayed: [], js: [], py: [], jsLog: [], pyLog: [],
    js0: [], jsN: [], py0: [], pyN: [], directRoundMedians: [], jsRoundMeans: [], pyRoundMeans: [],
    pys: [], pys0: [], pysN: [],
  };
  const steps = [
    async () => { const t = await directCalls(direct, N); s.direct.push(...t); s.directRoundMedians.push(median(t)); },
    async () => { s.relayed.push(...await directCalls(relayed, N)); },
    async () => {
      const r = await execute(airlock, 'javascript', N);
      s.js.push(...r.times); s.jsLog.push(...r.logged); s.jsN.push(r.wall); s.jsRoundMeans.push(mean(r.times));
    },
    async () => {
      const r = await execute(airlock, 'python', N);
      s.py.push(...r.times); s.pyLog.push(...r.logged); s.pyN.push(r.wall); s.pyRoundMeans.push(mean(r.times));
    },
    async () => { for (let i = 0; i < ZERO_PER_ROUND; i++) s.js0.push((await execute(airlock, 'javascript', 0)).wall); },
    async () => { for (let i = 0; i < ZERO_PER_ROUND; i++) s.py0.push((await execute(airlock, 'python', 0)).wall); },
    async () => { const r = await cell(airlock, sessionId, N); s.pys.push(...r.times); s.pysN.push(r.wall); },
    async () => { for (let i = 0; i < ZERO_PER_ROUND; i++) s.pys0.push((await cell(airlock, sessionId, 0)).wall); },
  ];
  for (let round = 0; round < R; round++) {
    // Rotate the order so no contender always runs right after another.
    for (let k = 0; k < steps.length; k++) await steps[(k + round) % steps.length]();
  }
  const load1 = os.loadavg();

  const base = median(s.direct);
  const baseMean = mean(s.direct);
  const rows = [
    ['direct: SDK client → test-server (stdio)', s.direct],
    ['relayed: SDK client → byte relay (C) → test-server', s.relayed],
    ['js: tools.call in execute (Date.now, 1 ms)', s.js],
    ['py: tools.call in execute (perf_counter)', s.py],
    ['py session: tools.call in a code-mode session cell', s.pys],
    ['airlock call log duration_ms (floored to 1 ms), js runs', s.jsLog],
    ['airlock call log duration_ms (floored to 1 ms), py runs', s.pyLog],
  ];
  const f = (x, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
  const out = [];
  out.push(`codemode_bench: ${N} calls × ${R} rounds (+ warm-up), per-call figures over all ${N * R} samples`);
  out.push('');
  out.push('| per call | median ms | p90 ms | mean ms | × direct (median) | × direct (mean) |');
  out.push('|---|---|---|---|---|---|');
  for (const [name, xs] of rows) {
    out.push(`| ${name} | ${f(median(xs))} | ${f(quantile(xs, 0.9))} | ${f(mean(xs))} | ${f(median(xs) / base, 2)}× | ${f(mean(xs) / baseMean, 2)}× |`);
  }
  out.push('');
  out.push(`| whole execute (client wall; ${R * ZERO_PER_ROUND} samples at 0 calls, ${R} at ${N}) | median ms | p90 ms | (t_N - t_0) / N ms | × direct (median) |`);
  out.push('|---|---|---|---|---|');
  for (const [lang, t0s, tNs] of [['javascript', s.js0, s.jsN], ['python', s.py0, s.pyN],
    ['python session cell', s.pys0, s.pysN]]) {
    const slope = (median(tNs) - median(t0s)) / N;
    out.push(`| ${lang}, 0 calls | ${f(median(t0s), 1)} | ${f(quantile(t0s, 0.9), 1)} | | |`);
    out.push(`| ${lang}, ${N} calls | ${f(median(tNs), 1)} | ${f(quantile(tNs, 0.9), 1)} | ${f(slope)} | ${f(slope / base, 2)}× |`);
  }
  out.push('');
  const range = (xs) => `${f(Math.min(...xs))}–${f(Math.max(...xs))}`;
  out.push(`per-round spread: direct median ${range(s.directRoundMedians)} ms, js mean ${range(s.jsRoundMeans)} ms, py mean ${range(s.pyRoundMeans)} ms`);
  const kernel = spawnSync('uname', ['-r']).stdout?.toString().trim() || os.release();
  out.push(`machine: nproc ${os.availableParallelism?.() ?? os.cpus().length}, kernel ${kernel}, node ${process.version}, ` +
           `load average ${load0.map((x) => x.toFixed(2)).join(' ')} (start) → ${load1.map((x) => x.toFixed(2)).join(' ')} (end), ` +
           `bench ${((performance.now() - started) / 1000).toFixed(1)} s`);
  out.push(`airlock: ${AIRLOCK_BIN}`);
  console.log(out.join('\n'));
} finally {
  await cleanup();
}
