#!/usr/bin/env node
// Sessions benchmark: what one `run_code` call into an open session
// (docs/sessions.md) costs through airlock's MCP server, next to a one-shot
// warm run and to the bare floors measured in the same process: a fresh
// `python3 -c 'print(1)'` and a round trip to a persistent python loop that
// exec()s one line per request. Not a test: it asserts nothing about the
// figures (it prints the issue's targets with met / not met).
//
//   node bench/sessions.mjs [--runs N] [--tput-runs M] [--oneshot-tput-runs K]
//                           [--no-http] [--config FILE] [--json OUT] [--max-seconds S]
//
//   --runs N              latency rounds (default 200; 3 warm-up calls per
//                         contender before them are not counted)
//   --tput-runs M         sequential session calls per worker at C=4 (default 500)
//   --oneshot-tput-runs K one-shot runs (and bare spawns) per worker at C=4
//                         (default 100, or M/5 when only --tput-runs is given)
//   --no-http             stdio only (default: also Streamable HTTP)
//   --config FILE         a base config for both servers; sessions.max_per_caller
//                         is raised to at least 16 and sessions.max_total to at
//                         least 16 (or set to 16 when 0 = auto) on a copy
//   --json OUT            also write every sample and the summary to OUT
//   --max-seconds S       give up (kill the servers, exit 1) after S s (default 600)
//
// The binary is $AIRLOCK_BIN, else <repo>/build/airlock. The MCP SDK client
// comes from tests/e2e/node_modules (`scripts/setup.sh` installs it).
//
// Latency: one python session per transport, warmed with 3 calls; then N
// rounds, each running every contender once in an order rotated per round
// (so machine noise hits them alike): session `print(1)` and one-shot
// `print(1)` over stdio (and HTTP), the bare REPL round trip, the bare spawn.
// Calls are sequential (one in flight). Then N more session calls per
// transport back to back, with nothing between them ("back to back"). Client-side time is performance.now()
// around callTool; `wall_ms` is what the server reports for the run. p99 of N
// samples is the largest but floor(N/100).
//
// Throughput at C=4: four workers, each with its own session (stdio: one MCP
// client, four calls in flight; HTTP: four MCP clients), each doing M
// sequential calls; calls/s = all calls / wall time. The same with one-shot
// runs (K per worker), 4 bare REPLs (M each) and 4 bare spawns (K each).
// CPU per call: utime+stime (+ reaped children's) of `airlock serve` and every
// descendant (runner, jails, interpreters), and of the whole machine
// (/proc/stat, the client included).
//
// Exit: 0 when the benchmark ran (failed calls are listed and left out of the
// figures), 2 when this airlock has no sessions (no open_session in
// tools/list) or on a usage error, 1 on anything else.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(REPO, 'tests', 'e2e', 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const AIRLOCK_BIN = process.env.AIRLOCK_BIN || path.join(REPO, 'build', 'airlock');

// ---- flags -----------------------------------------------------------------
function usage(msg) {
  if (msg) console.error(`sessions bench: ${msg}`);
  console.error('usage: node bench/sessions.mjs [--runs N] [--tput-runs M] [--oneshot-tput-runs K] ' +
                '[--no-http] [--config FILE] [--json OUT] [--max-seconds S]');
  process.exit(2);
}
const opts = { runs: 200, tputRuns: 500, oneshotTputRuns: null, http: true, config: null, json: null, maxSeconds: 600 };
{
  const a = process.argv.slice(2);
  const int = (i, name) => {
    const v = Number(a[i]);
    if (!Number.isInteger(v) || v < 1) usage(`${name} wants a positive integer`);
    return v;
  };
  for (let i = 0; i < a.length; i++) {
    switch (a[i]) {
      case '--runs': opts.runs = int(++i, '--runs'); break;
      case '--tput-runs': opts.tputRuns = int(++i, '--tput-runs'); break;
      case '--oneshot-tput-runs': opts.oneshotTputRuns = int(++i, '--oneshot-tput-runs'); break;
      case '--max-seconds': opts.maxSeconds = int(++i, '--max-seconds'); break;
      case '--no-http': opts.http = false; break;
      case '--config': if (!a[i + 1]) usage('--config wants a path'); opts.config = path.resolve(a[++i]); break;
      case '--json': if (!a[i + 1]) usage('--json wants a path'); opts.json = path.resolve(a[++i]); break;
      case '-h': case '--help': usage(); break;
      default: usage(`unknown argument ${a[i]}`);
    }
  }
  if (opts.oneshotTputRuns == null) opts.oneshotTputRuns = Math.max(1, Math.round(opts.tputRuns / 5));
}
if (!existsSync(AIRLOCK_BIN)) usage(`airlock binary not found at ${AIRLOCK_BIN} (build it, or set AIRLOCK_BIN)`);
if (opts.config && !existsSync(opts.config)) usage(`config ${opts.config} not found`);

const C = 4;  // concurrency of the throughput section
const TARGET_P50_MS = 2;
const TARGET_CALLS_PER_S = 400;

// ---- statistics ------------------------------------------------------------
const quantile = (xs, q) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
};
const p50 = (xs) => quantile(xs, 0.5);
const p90 = (xs) => quantile(xs, 0.9);
const p99 = (xs) => quantile(xs, 0.99);
const fmt = (x) => (Number.isFinite(x) ? (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)) : '—');

// ---- temp dir, config ------------------------------------------------------
const tmp = mkdtempSync(path.join(os.tmpdir(), 'airlock-sessions-bench-'));
let config = {};
if (opts.config) {
  try { config = JSON.parse(readFileSync(opts.config, 'utf8')); } catch (e) { usage(`--config ${opts.config}: ${e.message}`); }
}
config.sessions = { ...(config.sessions ?? {}) };
config.sessions.max_per_caller = Math.max(config.sessions.max_per_caller ?? 0, 16);
config.sessions.max_total = Math.max(config.sessions.max_total ?? 0, 16);
const configPath = path.join(tmp, 'config.json');
writeFileSync(configPath, JSON.stringify(config, null, 2));

// Absolute paths: a version manager's shim first on PATH would add its own
// start-up to the baseline; airlock runs the system interpreter.
const PY = ['/usr/bin/python3', '/bin/python3', '/usr/local/bin/python3'].find((p) => existsSync(p));
// Baselines run in a clean environment, as jailed programs do.
const CLEAN_ENV = { PATH: '/usr/bin:/bin', HOME: tmp, LANG: 'C.UTF-8' };

// ---- processes and cleanup -------------------------------------------------
const servers = [];   // {name, proc | pid}
const clients = [];   // MCP clients to close
const repls = [];     // bare REPL children
const opened = [];    // {client, id, where}: sessions to close
let cleaned = false;
const sleep = (t) => new Promise((r) => setTimeout(r, t));
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };

function killAllNow() {
  for (const r of repls) { try { r.proc.kill('SIGKILL'); } catch { /* gone */ } }
  for (const s of servers) { try { process.kill(s.pid, 'SIGTERM'); } catch { /* gone */ } }
  rmSync(tmp, { recursive: true, force: true });
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => { killAllNow(); process.exit(130); });
}
const watchdog = setTimeout(() => {
  console.error(`sessions bench: still running after --max-seconds ${opts.maxSeconds}; stopping the servers`);
  killAllNow();
  process.exit(1);
}, opts.maxSeconds * 1000);
watchdog.unref();

// Closes every session it opened (reports what failed), the clients, the
// REPLs, then stops the servers: SIGTERM, up to 5 s, then SIGKILL.
async function cleanup(report) {
  if (cleaned) return;
  cleaned = true;
  const closeErrors = [];
  for (const s of opened) {
    try {
      const r = await s.client.callTool({ name: 'close_session', arguments: { session_id: s.id } }, undefined, { timeout: 20000 });
      if (r.isError || r.structuredContent?.closed !== true) {
        closeErrors.push(`close_session ${s.where} ${s.id}: ${JSON.stringify(r.structuredContent ?? r).slice(0, 300)}`);
      }
    } catch (e) {
      closeErrors.push(`close_session ${s.where} ${s.id}: ${e.message}`);
    }
  }
  // What each server still lists after the closes (should be none).
  const left = [];
  for (const s of servers) {
    if (!s.client || !opened.length) continue;
    try {
      const r = await s.client.callTool({ name: 'list_sessions', arguments: {} }, undefined, { timeout: 20000 });
      left.push(`${s.name}: ${(r.structuredContent?.sessions ?? []).length}`);
    } catch (e) { left.push(`${s.name}: list_sessions failed (${e.message})`); }
  }
  for (const r of repls) { try { r.proc.stdin.end(); r.proc.kill('SIGTERM'); } catch { /* gone */ } }
  for (const c of clients) await c.close().catch(() => {});
  const stops = [];
  for (const s of servers) {
    if (alive(s.pid)) { try { process.kill(s.pid, 'SIGTERM'); } catch { /* gone */ } }
    const t0 = performance.now();
    while (alive(s.pid) && performance.now() - t0 < 5000) await sleep(50);
    if (alive(s.pid)) {
      try { process.kill(s.pid, 'SIGKILL'); } catch { /* gone */ }
      stops.push(`${s.name} (pid ${s.pid}) needed SIGKILL`);
    }
  }
  rmSync(tmp, { recursive: true, force: true });
  if (report) {
    report.push(`cleanup: ${opened.length} session(s) closed${closeErrors.length ? `, ${closeErrors.length} close error(s)` : ''}; ` +
                `sessions listed after closing: ${left.join(', ') || 'n/a'}; servers stopped` +
                `${stops.length ? ` (${stops.join('; ')})` : ''}`);
    for (const e of closeErrors) report.push(`- ${e}`);
  }
}

// ---- /proc -----------------------------------------------------------------
function procTable() {
  const children = new Map();
  const stat = new Map();
  for (const ent of readdirSync('/proc')) {
    if (!/^\d+$/.test(ent)) continue;
    try {
      const s = readFileSync(`/proc/${ent}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      // f[0] = state (field 3); ppid field 4; utime 14, stime 15, cutime 16, cstime 17
      const ppid = Number(f[1]);
      stat.set(Number(ent), { ppid, ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) });
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(ent));
    } catch { /* exited */ }
  }
  return { children, stat };
}
// CPU ms of `root` and its descendants: own time plus reaped children's.
function treeCpuMs(root) {
  const { children, stat } = procTable();
  let ticks = 0;
  let procs = 0;
  let jails = 0;
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop();
    const s = stat.get(pid);
    if (s) { ticks += s.ticks; procs++; }
    try { if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'airlock-init') jails++; } catch { /* gone */ }
    todo.push(...(children.get(pid) ?? []));
  }
  return { ms: ticks * 10, procs, jails };  // USER_HZ 100
}
// Busy CPU of the whole machine so far, ms (all but idle and iowait).
function machineBusyMs() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = f;
  return (user + nice + system + irq + softirq + (steal || 0)) * 10;
}
const clientCpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };

// ---- MCP -------------------------------------------------------------------
const newClient = () => new Client({ name: 'airlock-sessions-bench', version: '0.0.0' }, { capabilities: {} });
const serveArgs = (stateDir) => ['serve', '--state-dir', stateDir, '--config', configPath];

async function connectStdio() {
  const transport = new StdioClientTransport({
    command: AIRLOCK_BIN, args: serveArgs(path.join(tmp, 'state-stdio')), stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => { if (stderr.length < 64 * 1024) stderr += d; });
  const client = newClient();
  clients.push(client);
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`airlock serve (stdio) did not start: ${e.message}\n${stderr}`);
  }
  servers.push({ name: 'stdio', pid: transport.pid, client });
  return { client, pid: transport.pid, stderr: () => stderr };
}

// `airlock serve --http 127.0.0.1:0`; ready when it prints its URL on stderr.
function startHttp() {
  return new Promise((resolve, reject) => {
    const proc = spawn(AIRLOCK_BIN, [...serveArgs(path.join(tmp, 'state-http')), '--http', '127.0.0.1:0'],
                       { stdio: ['ignore', 'ignore', 'pipe'] });
    const entry = { name: 'http', pid: proc.pid, client: null };
    servers.push(entry);
    let buf = '';
    let done = false;
    const timer = setTimeout(() => { done = true; reject(new Error(`airlock serve --http printed no URL in 20 s\n${buf}`)); }, 20000);
    proc.stderr.on('data', (d) => {
      if (buf.length < 64 * 1024) buf += d;
      const m = /http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(buf);
      if (m && Number(m[1]) > 0 && !done) { done = true; clearTimeout(timer); resolve({ url: m[0], pid: proc.pid, entry }); }
    });
    proc.on('exit', (code, sig) => {
      if (!done) { done = true; clearTimeout(timer); reject(new Error(`airlock serve --http exited (${code ?? sig})\n${buf}`)); }
    });
  });
}
async function connectHttp(url) {
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  return client;
}

class NoSessions extends Error {}

async function openSession(client, where) {
  const r = await client.callTool({ name: 'open_session', arguments: { language: 'python' } }, undefined, { timeout: 60000 });
  const sc = r.structuredContent;
  if (r.isError || !sc?.session_id) {
    const code = sc?.error_code;
    const msg = `open_session (${where}) failed: ${JSON.stringify(sc ?? r).slice(0, 500)}`;
    if (code === 'E_SESSIONS_DISABLED') throw new NoSessions(msg);
    throw new Error(msg);
  }
  opened.push({ client, id: sc.session_id, where });
  return sc.session_id;
}

// One run_code call; {t, wall} or {error, fatal}. The output must be "1\n".
async function runCode(client, args, what) {
  const t0 = performance.now();
  let r;
  try {
    r = await client.callTool({ name: 'run_code', arguments: args }, undefined, { timeout: 60000 });
  } catch (e) {
    return { error: `${what}: ${e.message}` };
  }
  const t = performance.now() - t0;
  const sc = r.structuredContent;
  if (r.isError || !sc || sc.status !== 'ok' || sc.stdout !== '1\n') {
    const code = sc?.error_code;
    return {
      error: `${what}: ${JSON.stringify(sc ?? r).slice(0, 400)}`,
      fatal: code === 'E_SESSION_LOST' || code === 'E_SESSION_NOT_FOUND' || code === 'E_SESSIONS_DISABLED',
    };
  }
  return { t, wall: sc.wall_ms };
}
const sessionCall = (client, id, what) => runCode(client, { session_id: id, code: 'print(1)' }, what);
const oneShot = (client, what) => runCode(client, { language: 'python', code: 'print(1)' }, what);

// ---- the bare floors -------------------------------------------------------
// A persistent python3 that exec()s one line per request and answers with a
// marker line: the least a session call can cost (no jail, no MCP, no harness).
const REPL_SRC = [
  'import sys',
  'rl = sys.stdin.readline',
  'w = sys.stdout.write',
  'fl = sys.stdout.flush',
  'while True:',
  '    line = rl()',
  '    if not line: break',
  '    exec(line)',
  '    w("\\x01END\\n"); fl()',
].join('\n');
const MARK = '\x01END\n';
function startRepl() {
  const proc = spawn(PY, ['-I', '-u', '-c', REPL_SRC], { stdio: ['pipe', 'pipe', 'pipe'], env: CLEAN_ENV });
  const repl = { proc, buf: '', waiter: null, err: '' };
  proc.stdout.setEncoding('utf8');
  proc.stdout.on('data', (d) => {
    repl.buf += d;
    const i = repl.buf.indexOf(MARK);
    if (i >= 0 && repl.waiter) {
      const out = repl.buf.slice(0, i);
      repl.buf = repl.buf.slice(i + MARK.length);
      const w = repl.waiter;
      repl.waiter = null;
      w.resolve(out);
    }
  });
  proc.stderr.on('data', (d) => { if (repl.err.length < 4096) repl.err += d; });
  proc.on('exit', (code, sig) => {
    if (repl.waiter) { repl.waiter.reject(new Error(`bare REPL exited (${code ?? sig}): ${repl.err}`)); repl.waiter = null; }
  });
  repls.push(repl);
  return repl;
}
async function replCall(repl) {
  const t0 = performance.now();
  try {
    const out = await new Promise((resolve, reject) => {
      repl.waiter = { resolve, reject };
      repl.proc.stdin.write('print(1)\n');
    });
    const t = performance.now() - t0;
    if (out !== '1\n') return { error: `bare REPL: unexpected output ${JSON.stringify(out)}` };
    return { t };
  } catch (e) {
    return { error: e.message, fatal: true };
  }
}
function bareSpawnSync() {
  const t0 = performance.now();
  const r = spawnSync(PY, ['-c', 'print(1)'], { stdio: ['ignore', 'pipe', 'pipe'], env: CLEAN_ENV, timeout: 60000 });
  const t = performance.now() - t0;
  if (r.error || r.status !== 0) return { error: `bare spawn: ${r.error?.message ?? `exit ${r.status}`} ${String(r.stderr ?? '').slice(0, 200)}` };
  return { t };
}
function bareSpawnAsync() {
  return new Promise((resolve) => {
    const p = spawn(PY, ['-c', 'print(1)'], { stdio: ['ignore', 'pipe', 'ignore'], env: CLEAN_ENV });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.on('error', (e) => resolve({ error: `bare spawn: ${e.message}` }));
    p.on('close', (code) => resolve(code === 0 && out === '1\n' ? { t: 0 } : { error: `bare spawn: exit ${code}` }));
  });
}

// ---- main ------------------------------------------------------------------
const started = performance.now();
const load0 = os.loadavg();
const kernel = spawnSync('uname', ['-r']).stdout?.toString().trim() || os.release();
const nproc = os.availableParallelism?.() ?? os.cpus().length;
let binInfo = '';
try {
  const st = (await import('node:fs')).statSync(AIRLOCK_BIN);
  binInfo = ` (modified ${st.mtime.toISOString()})`;
} catch { /* checked above */ }
console.log([
  '# airlock sessions benchmark',
  '',
  `machine: nproc ${nproc}, ${os.cpus()[0]?.model ?? '?'}, kernel ${kernel}, node ${process.version}, ` +
    `load average ${load0.map((x) => x.toFixed(2)).join(' ')}, ${new Date().toISOString()}`,
  `airlock: ${AIRLOCK_BIN}${binInfo}; config ${JSON.stringify(config)}; ` +
    `${opts.runs} latency rounds (+3 warm-up calls each); C=${C}: ${opts.tputRuns} session calls and ` +
    `${opts.oneshotTputRuns} one-shot runs per worker; transports: stdio${opts.http ? ', http' : ''}`,
].join('\n'));

const errors = [];
const noteError = (e) => { if (errors.length < 200) errors.push(e); };
const out = { machine: { nproc, kernel, load0, date: new Date().toISOString() }, opts, config, latency: {}, throughput: {}, errors };
const S = {};   // key -> [client ms]
const WALL = {};  // key -> [server wall_ms]
const add = (key, r) => {
  if (r.error) { noteError(r.error); return; }
  (S[key] ??= []).push(r.t);
  if (r.wall != null) (WALL[key] ??= []).push(r.wall);
};
let exitCode = 0;
let warmupErrors = 0;
const report = [];

try {
  // ---- servers, sessions -------------------------------------------------
  const stdio = await connectStdio();
  const tools = (await stdio.client.listTools()).tools.map((t) => t.name);
  if (!tools.includes('open_session')) {
    throw new NoSessions(`tools/list has no open_session (tools: ${tools.join(', ')})`);
  }
  const transports = [{ name: 'stdio', client: stdio.client, pid: stdio.pid, workers: [] }];
  if (opts.http) {
    const http = await startHttp();
    const c0 = await connectHttp(http.url);
    http.entry.client = c0;
    const workers = [];
    for (let w = 0; w < C; w++) workers.push(await connectHttp(http.url));
    transports.push({ name: 'http', client: c0, pid: http.pid, workers });
  }
  for (const tr of transports) {
    if (!tr.workers.length) tr.workers = Array.from({ length: C }, () => tr.client);
    tr.session = await openSession(tr.client, `${tr.name} latency`);
    tr.workerSessions = [];
    for (let w = 0; w < C; w++) tr.workerSessions.push(await openSession(tr.workers[w], `${tr.name} worker ${w}`));
  }
  const repl = startRepl();
  const jailsAtStart = transports.map((tr) => `${tr.name} ${treeCpuMs(tr.pid).jails}`).join(', ');

  // ---- latency -----------------------------------------------------------
  const steps = [];
  for (const tr of transports) {
    steps.push({ key: `${tr.name}:session`, fn: () => sessionCall(tr.client, tr.session, `${tr.name} session call`) });
    steps.push({ key: `${tr.name}:oneshot`, fn: () => oneShot(tr.client, `${tr.name} one-shot`) });
  }
  steps.push({ key: 'bare:repl', fn: () => replCall(repl) });
  steps.push({ key: 'bare:spawn', fn: async () => bareSpawnSync() });
  // Warm-up: 3 calls of each (the session's first calls import what print needs,
  // the pool warms its python shape), not counted.
  for (let i = 0; i < 3; i++) {
    for (const s of steps) {
      const r = await s.fn();
      if (r.error) {
        if (r.fatal) throw new Error(`warm-up: ${r.error}`);
        noteError(`warm-up: ${r.error}`);
      }
    }
  }
  warmupErrors = errors.length;
  const tLat = performance.now();
  const fatalSeen = new Set();
  for (let round = 0; round < opts.runs; round++) {
    const off = round % steps.length;  // rotate the order per round
    for (let k = 0; k < steps.length; k++) {
      const s = steps[(k + off) % steps.length];
      if (fatalSeen.has(s.key)) continue;
      const r = await s.fn();
      if (r.fatal) { fatalSeen.add(s.key); noteError(`${s.key}: stopped after a fatal error`); }
      add(s.key, r);
    }
  }
  const latSeconds = (performance.now() - tLat) / 1000;
  // Back to back: the same session call N times with nothing between them
  // (in the rotation above, a one-shot run's jail teardown and the pool's
  // refill overlap the next call).
  for (const tr of transports) {
    for (let i = 0; i < opts.runs; i++) {
      add(`${tr.name}:session-b2b`, await sessionCall(tr.client, tr.session, `${tr.name} session call (back to back)`));
    }
  }

  // ---- throughput at C=4 --------------------------------------------------
  const T = {};
  // `work(w)` runs one call of worker w; every worker runs `perWorker` calls.
  const cell = async (perWorker, work, cpuPid) => {
    let ok = 0;
    let failed = 0;
    const cpu0 = cpuPid ? treeCpuMs(cpuPid).ms : null;
    const busy0 = machineBusyMs();
    const cl0 = clientCpuMs();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: C }, async (_, w) => {
      for (let i = 0; i < perWorker; i++) {
        const r = await work(w);
        if (r.error) {
          failed++;
          noteError(`C=${C}: ${r.error}`);
          if (r.fatal) { failed += perWorker - i - 1; break; }
        } else {
          ok++;
        }
      }
    }));
    const seconds = (performance.now() - t0) / 1000;
    const busy = machineBusyMs() - busy0;
    const clientMs = clientCpuMs() - cl0;
    return {
      calls: C * perWorker, ok, failed, seconds, perSecond: ok / seconds,
      serverCpuMsPerCall: cpuPid && ok ? (treeCpuMs(cpuPid).ms - cpu0) / ok : null,
      machineCpuMsPerCall: ok ? busy / ok : null,
      clientCpuMsPerCall: ok ? clientMs / ok : null,
    };
  };
  for (const tr of transports) {
    T[`${tr.name}:session`] = await cell(opts.tputRuns,
      (w) => sessionCall(tr.workers[w], tr.workerSessions[w], `${tr.name} session worker ${w}`), tr.pid);
    T[`${tr.name}:oneshot`] = await cell(opts.oneshotTputRuns,
      (w) => oneShot(tr.workers[w], `${tr.name} one-shot worker ${w}`), tr.pid);
  }
  {
    const rs = Array.from({ length: C }, () => startRepl());
    for (const r of rs) await replCall(r);  // started and answering
    T['bare:repl'] = await cell(opts.tputRuns, (w) => replCall(rs[w]), null);
  }
  T['bare:spawn'] = await cell(opts.oneshotTputRuns, () => bareSpawnAsync(), null);
  out.throughput = T;
  const load1 = os.loadavg();

  // ---- the tables ----------------------------------------------------------
  const lines = [];
  const sess50 = p50(S['stdio:session'] ?? []);
  const rows = [];
  for (const tr of transports) {
    rows.push([`session call (${tr.name}, back to back)`, `${tr.name}:session-b2b`]);
    rows.push([`session call (${tr.name})`, `${tr.name}:session`]);
    rows.push([`one-shot warm (${tr.name})`, `${tr.name}:oneshot`]);
  }
  rows.push([`bare \`python3 -c 'print(1)'\` spawn`, 'bare:spawn']);
  rows.push(['bare REPL round trip (persistent python3 -I -u, exec per line)', 'bare:repl']);
  lines.push('');
  lines.push(`## python print(1): latency over ${opts.runs} sequential calls each (ms), throughput at C=${C}`);
  lines.push('');
  lines.push('× = p50 over the stdio session call\'s p50. wall_ms = what the server reports for the run (its own clock, whole ms). ' +
             `calls/s: ${C} workers, each its own session (or REPL) and its calls one after another: ` +
             `${opts.tputRuns} calls per worker for sessions and REPLs, ${opts.oneshotTputRuns} for one-shot runs and spawns. ` +
             'CPU/call: airlock serve and all its descendants (utime+stime, reaped children included) during the C=4 cell; ' +
             'machine = /proc/stat busy time, the client included.');
  lines.push('');
  lines.push(`| contender | p50 ms | p90 ms | p99 ms | × session | wall_ms p50 | calls/s at C=${C} | server CPU ms/call | machine CPU ms/call |`);
  lines.push('|---|---|---|---|---|---|---|---|---|');
  for (const [label, key] of rows) {
    const xs = S[key] ?? [];
    const t = T[key];
    const x50 = p50(xs);
    const ratio = Number.isFinite(x50) && Number.isFinite(sess50) && sess50 > 0 ? `${(x50 / sess50).toFixed(2)}×` : '—';
    const walls = WALL[key] ?? [];
    const tput = t ? `${t.perSecond.toFixed(1)}${t.failed ? ` [${t.failed} failed]` : ''}` : '—';
    lines.push(`| ${label} | ${fmt(x50)} | ${fmt(p90(xs))} | ${fmt(p99(xs))} | ${ratio} | ${walls.length ? String(p50(walls)) : '—'} | ` +
               `${tput} | ${t?.serverCpuMsPerCall != null ? fmt(t.serverCpuMsPerCall) : '—'} | ` +
               `${t?.machineCpuMsPerCall != null ? fmt(t.machineCpuMsPerCall) : '—'} |`);
    out.latency[key] = { label, p50: x50, p90: p90(xs), p99: p99(xs), n: xs.length, samples: xs, wall_ms: walls };
  }
  lines.push('');
  for (const tr of transports) {
    const a = S[`${tr.name}:session`] ?? [];
    const b = S[`${tr.name}:oneshot`] ?? [];
    const r = (q) => (q(a) / q(b)).toFixed(2);
    lines.push(`session / one-shot (${tr.name}): p50 ${r(p50)}, p90 ${r(p90)}, p99 ${r(p99)}` +
               (T[`${tr.name}:oneshot`] ? `; calls/s at C=${C} ${(T[`${tr.name}:session`].perSecond / T[`${tr.name}:oneshot`].perSecond).toFixed(1)}×` : '') + '.');
  }
  lines.push('');
  lines.push('## against the issue\'s targets');
  lines.push('');
  lines.push('| target | measured | status |');
  lines.push('|---|---|---|');
  const met = (ok) => (ok ? 'met' : 'not met');
  const st = T['stdio:session'];
  const b2b50 = p50(S['stdio:session-b2b'] ?? []);
  lines.push(`| session call p50 ≤ ${TARGET_P50_MS} ms (stdio, back to back) | ${fmt(b2b50)} ms (p99 ${fmt(p99(S['stdio:session-b2b'] ?? []))} ms) | ${met(b2b50 <= TARGET_P50_MS)} |`);
  lines.push(`| session call p50 ≤ ${TARGET_P50_MS} ms (stdio, interleaved with one-shot runs) | ${fmt(sess50)} ms (p99 ${fmt(p99(S['stdio:session'] ?? []))} ms) | ${met(sess50 <= TARGET_P50_MS)} |`);
  lines.push(`| ≥ ${TARGET_CALLS_PER_S} session calls/s at C=${C} (stdio) | ${st.perSecond.toFixed(1)} calls/s | ${met(st.perSecond >= TARGET_CALLS_PER_S && !st.failed)} |`);
  if (T['http:session']) {
    const h50 = p50(S['http:session'] ?? []);
    lines.push(`| (same over HTTP) p50 ≤ ${TARGET_P50_MS} ms | ${fmt(h50)} ms | ${met(h50 <= TARGET_P50_MS)} |`);
    lines.push(`| (same over HTTP) ≥ ${TARGET_CALLS_PER_S} calls/s at C=${C} | ${T['http:session'].perSecond.toFixed(1)} calls/s | ` +
               `${met(T['http:session'].perSecond >= TARGET_CALLS_PER_S && !T['http:session'].failed)} |`);
  }
  lines.push('');
  const cpuLine = Object.entries(T).map(([k, t]) => `${k} ${t.clientCpuMsPerCall?.toFixed(2) ?? '—'}`).join(', ');
  lines.push(`client (this node process) CPU ms per call during the C=${C} cells: ${cpuLine}.`);
  const other = Object.entries(T).filter(([, t]) => t.serverCpuMsPerCall != null)
    .map(([k, t]) => `${k} ${(t.machineCpuMsPerCall - t.serverCpuMsPerCall - t.clientCpuMsPerCall).toFixed(2)}`).join(', ');
  lines.push(`machine − server − client, ms per call (other processes, e.g. a build running alongside, and kernel work ` +
             `charged to no process of the two; near 0 on an otherwise idle machine): ${other}.`);
  lines.push(`jails (airlock-init) under each server after opening the sessions: ${jailsAtStart} ` +
             `(the ${1 + C} sessions' jails plus any warm pool).`);
  lines.push(`load average ${load0.map((x) => x.toFixed(2)).join(' ')} (start) → ${load1.map((x) => x.toFixed(2)).join(' ')} (end); ` +
             `latency rounds ${latSeconds.toFixed(1)} s; C=${C} cells ` +
             Object.entries(T).map(([k, t]) => `${k} ${t.seconds.toFixed(1)} s`).join(', ') + '.');
  console.log(lines.join('\n'));
  out.load1 = load1;
} catch (e) {
  if (e instanceof NoSessions) {
    console.error(`sessions bench: this airlock has no sessions: ${e.message}`);
    exitCode = 2;
  } else {
    console.error(`sessions bench: ${e.stack ?? e.message}`);
    exitCode = 1;
  }
} finally {
  await cleanup(report);
}
if (errors.length) {
  report.push(`errors (${errors.length}${warmupErrors ? `, ${warmupErrors} in the warm-up` : ''}; failed calls are left out of the figures):`);
  for (const e of errors.slice(0, 30)) report.push(`- ${e.replace(/\n/g, ' ')}`);
  if (errors.length > 30) report.push(`- … ${errors.length - 30} more`);
}
report.push(`total ${((performance.now() - started) / 1000).toFixed(1)} s`);
console.log('\n' + report.join('\n'));
if (opts.json) writeFileSync(opts.json, JSON.stringify(out, null, 2));
process.exit(exitCode);
