#!/usr/bin/env node
// The performance suite: one command that prints, as markdown, what a
// hello-world costs through airlock's MCP server (stdio and Streamable HTTP)
// and through `airlock run`, against the bare interpreters and bubblewrap
// measured in the same run, plus throughput under concurrency, the server's
// resident memory, the memory each idle pooled jail holds, code mode's
// fixed and per-call cost, and a closing "Targets" table: every figure of the
// performance issue with its ratio to a baseline and whether the goal is met.
// Not a test: it asserts nothing about the figures (it exits 0 on a miss).
//
//   bench/suite.sh [--runs N] [--only LANGS] [--no-http] [--json OUT]
//                  [--tput-runs N] [--config FILE] [--warm-gap-ms MS]
//                  [--compile-runs K] [--no-codemode]
//
//   --runs N        rounds of the latency section (default 30; one warm-up
//                   round before them is not counted)
//   --only LANGS    comma list of languages (python,typescript,cpp,...);
//                   `python:wasm` or `c:native` keeps only that tier of that
//                   language. cpp's WASM tier is measured only when named
//                   (`--only cpp:wasm`): each of its runs compiles ~1 s.
//   --no-http       skip the Streamable HTTP server (stdio only)
//   --json OUT      also write every sample, the summary and the targets to OUT
//   --tput-runs N   runs per throughput cell (default 32)
//   --config FILE   forwarded to both `airlock serve`s and to `airlock run`
//                   (e.g. a later warm-pool configuration). Without it the
//                   servers get a temp config that warms (pool.warm) every
//                   shape of the warm column: DEFAULT_WARM below.
//   --warm-gap-ms   idle time before each "warm" sample (default 300)
//   --compile-runs K  the C and C++ "first compile" rows, the bare g++
//                   baseline and the `airlock run` column of C++ and of the
//                   WASM-tier Python and Ruby (SPARSE_CLI) are sampled in K of
//                   the N rounds, spread evenly (default 10; each costs ~1 s)
//   --no-codemode   skip the code-mode section (and its targets)
//   --warm/--no-warm  force the warm column on or off. By default it is
//                   measured when a pool shows: a "pool"/"warm" key in
//                   list_languages or the server capabilities, a "pool" in
//                   the config not disabled, or jails (airlock-init processes)
//                   alive under the idle server. Otherwise it reads
//                   "—, no pool yet". For cold figures with a pooled build,
//                   pass --config with {"pool": {"enabled": false}}.
//
// The binary is $AIRLOCK_BIN, else <repo>/build/airlock. The MCP SDK client
// comes from tests/e2e/node_modules, the code-mode downstream server is
// tests/fixtures/mcp-servers/test-server.mjs (`scripts/setup.sh` installs
// both's packages).
//
// Latency: every round runs each contender once, in an order rotated per
// round so machine noise hits them alike: run_code over stdio, over HTTP and
// `airlock run` for every (language, tier), then the bare interpreters and
// bubblewrap. Calls are sequential (one in flight). p99 of N samples is
// the largest but floor(N/100) samples: with N < 100 it is the maximum.
// Compiled languages (C, C++, TypeScript) send the same source every time,
// so after the warm-up round the server's build cache answers ("cache hit"
// rows); the "first compile" rows of C and C++ append a unique comment to
// every sample so each one misses the cache. `airlock run` has no build
// cache: its column always compiles.
//
// Throughput: a fixed number of python `print(1)` runs at concurrency 1, 4
// and 8. Over stdio one session has C calls in flight; over HTTP C sessions
// (one SDK client each) call one after another. runs/s = runs / wall time.
//
// Memory: VmRSS summed over `airlock serve` and all its descendants (the
// runner child, and any jailed process still alive), read from /proc after
// start (initialized, no run yet) and after all the runs (idle again). Then
// every idle pooled jail of the stdio server (a process tree whose root is
// `airlock-init`): PSS (/proc/PID/smaps_rollup) and RSS summed over its
// processes, its shape read from the pre-started interpreter's cmdline, or,
// in a jail with no interpreter yet, from its mounts.
//
// Code mode: a third `airlock serve` whose config adds test-server.mjs as
// downstream server "test" (as bench/codemode_bench.mjs does): in each of
// min(--runs, 10) rounds one
// batch of CODEMODE_CALLS direct SDK calls of its `echo` tool, one `execute`
// per language with CODEMODE_CALLS `tools.call("test.echo")`, and two with
// none. Per bridged call = (p50 execute with N calls − p50 with 0) / N.
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
const TEST_SERVER = path.join(REPO, 'tests', 'fixtures', 'mcp-servers', 'test-server.mjs');

// Without --config, the servers get {"pool": {"warm": DEFAULT_WARM,
// "max_total": 24}}: every shape of the warm column ready before the first
// run, and room for all of them after the throughput cells raised the
// python shapes' targets (with the default 16, WASM Python's jail lost its
// place to them, and the idle memory table had no row for it). `airlock serve`
// accepts any string here (src/config/config.cc) and warms those that name
// a language ("python": native tier; "python:wasm": that tier;
// src/runtimes/local_executor.cc EnablePool). Pre-started interpreters
// (pool.prestart) exist for python, javascript, ruby, php and WASM python,
// javascript, ruby and php;
// the other shapes get a ready jail without one ("cpp" may also prepare
// C++'s precompiled headers at start-up, where the build has them).
const DEFAULT_WARM = ['python', 'javascript', 'typescript', 'ruby', 'php', 'bash', 'c', 'cpp',
                      'python:wasm', 'javascript:wasm', 'ruby:wasm', 'php:wasm', 'c:wasm'];

// Earlier figures some targets are set against (not measured in this run).
const PREVIOUS = {
  // docs/performance.md, code mode, `node bench/codemode_bench.mjs --rounds 5`
  // (2026-12-02): whole `execute` with 0 calls, client wall time, median.
  codemode_js_ms: 38,
  codemode_py_ms: 52,
  // docs/performance.md, "The WASM tier next to the native tier"
  // (bench/tiers_bench.sh, 2026-12-03): `airlock run` hello world in the
  // native tier, compile included, median.
  cpp_compile_ms: 424,
  c_compile_ms: 55.6,
};
const CODEMODE_CALLS = 100;     // tools.call per "N calls" execute
const CODEMODE_ZERO_PER_ROUND = 2;
const CODEMODE_MAX_ROUNDS = 10;  // rounds of the code-mode section: min(--runs, this)

// ---- flags -----------------------------------------------------------------
function usage(msg) {
  if (msg) console.error(`suite: ${msg}`);
  console.error('usage: bench/suite.sh [--runs N] [--only LANGS] [--no-http] [--json OUT] ' +
                '[--tput-runs N] [--config FILE] [--warm | --no-warm] [--warm-gap-ms MS] ' +
                '[--compile-runs K] [--no-codemode]');
  process.exit(2);
}
const opts = { runs: 30, tputRuns: 32, only: null, http: true, json: null, config: null, warmGapMs: 300, warm: null,
               compileRuns: 10, codemode: true };
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
      case '--warm-gap-ms': opts.warmGapMs = int(++i, '--warm-gap-ms'); break;
      case '--compile-runs': opts.compileRuns = int(++i, '--compile-runs'); break;
      case '--no-codemode': opts.codemode = false; break;
      case '--only': if (!a[i + 1]) usage('--only wants LANGS'); opts.only = a[++i].split(',').filter(Boolean); break;
      case '--no-http': opts.http = false; break;
      case '--warm': opts.warm = true; break;
      case '--no-warm': opts.warm = false; break;
      case '--json': if (!a[i + 1]) usage('--json wants a path'); opts.json = path.resolve(a[++i]); break;
      case '--config': if (!a[i + 1]) usage('--config wants a path'); opts.config = path.resolve(a[++i]); break;
      case '-h': case '--help': usage(); break;
      default: usage(`unknown argument ${a[i]}`);
    }
  }
}
if (!existsSync(AIRLOCK_BIN)) usage(`airlock binary not found at ${AIRLOCK_BIN} (build it, or set AIRLOCK_BIN)`);
if (opts.config && !existsSync(opts.config)) usage(`config ${opts.config} not found`);

// ---- statistics ------------------------------------------------------------
const quantile = (xs, q) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
};
const p50 = (xs) => quantile(xs, 0.5);
const p99 = (xs) => quantile(xs, 0.99);
const ms = (x) => (Number.isFinite(x) ? (x >= 100 ? x.toFixed(0) : x.toFixed(1)) : 'n/a');
const ratio = (x, base) => (Number.isFinite(x) && Number.isFinite(base) && base > 0 ? ` (${(x / base).toFixed(1)}×)` : '');
const cell = (x, base) => (Number.isFinite(x) ? `${ms(x)}${ratio(x, base)}` : '—');

// ---- the programs ----------------------------------------------------------
const HELLO = {
  python: 'print("hello from python")',
  javascript: 'console.log("hello from javascript")',
  typescript: 'const greeting: string = "hello from typescript";\nconsole.log(greeting);',
  ruby: 'puts "hello from ruby"',
  php: '<?php echo "hello from php\\n";',
  bash: 'echo "hello from bash"',
  c: '#include <stdio.h>\nint main(void) { printf("hello from c\\n"); return 0; }',
  cpp: '#include <iostream>\nint main() { std::cout << "hello from cpp" << std::endl; return 0; }',
};
const EXT = { python: 'py', javascript: 'js', typescript: 'ts', ruby: 'rb', php: 'php', bash: 'sh', c: 'c', cpp: 'cpp' };
const LANGS = Object.keys(HELLO);
// Compiled by airlock before they run (and kept in `airlock serve`'s build
// cache); C and C++ also get a "first compile" row.
const COMPILED = new Set(['typescript', 'c', 'cpp']);
const FIRST_COMPILE = new Set(['c', 'cpp']);
// (language/tier) left out unless --only names it: each run compiles ~1 s.
const ONLY_WHEN_NAMED = new Set(['cpp/wasm']);
// `airlock run` columns sampled in only opts.compileRuns of the rounds: each
// costs ~1 s or more (a C++ compile; a WASM interpreter compiled afresh).
const SPARSE_CLI = new Set(['cpp/native', 'cpp/wasm', 'python/wasm', 'ruby/wasm', 'php/wasm']);

const tmp = mkdtempSync(path.join(os.tmpdir(), 'airlock-suite-'));
for (const l of LANGS) writeFileSync(path.join(tmp, `hello.${EXT[l]}`), HELLO[l] + '\n');
// A "first compile" sample: the hello world plus a comment no other sample
// (in this or any other run) has, so the build cache (keyed by content)
// misses.
const nonce = `${process.pid.toString(36)}${Date.now().toString(36)}`;
let uniq = 0;
const sourceFor = (row) => (row.first ? `${HELLO[row.lang]}\n// first compile ${nonce}-${++uniq}\n` : HELLO[row.lang]);

// Absolute paths: a version manager's shim first on PATH (pyenv) would add
// its own start-up to the baseline; airlock runs the system interpreters.
function which(name) {
  for (const dir of ['/usr/bin', '/bin', '/usr/local/bin']) {
    const p = path.join(dir, name);
    if (existsSync(p)) return p;
  }
  return null;
}
const PY = which('python3');
const BWRAP = which('bwrap');
const NODE = which('node');
const ESBUILD = which('esbuild');
const GXX = which('g++');
// Baselines: [key, label, argv, language]. The first one of a language is the
// "bare" figure that language's rows are divided by; all are measured when
// that language is.
const BASELINES = [
  ['py', `python3 -c 'print(1)'`, PY && [PY, '-c', 'print(1)'], 'python'],
  ['py_is', `python3 -I -S -c pass`, PY && [PY, '-I', '-S', '-c', 'pass'], 'python'],
  ['node', `node -e 0`, NODE && [NODE, '-e', '0'], 'javascript'],
  ['esbuild', `esbuild hello.ts && node hello.js`, ESBUILD && NODE && ['/bin/sh', '-c',
    `${ESBUILD} ${tmp}/hello.ts --outfile=${tmp}/hello_ts.js --format=cjs --platform=node --log-level=warning && ` +
    `${NODE} ${tmp}/hello_ts.js`], 'typescript'],
  ['ruby', `ruby --disable-gems -e 1`, which('ruby') && [which('ruby'), '--disable-gems', '-e', '1'], 'ruby'],
  ['ruby_gems', `ruby -e 1`, which('ruby') && [which('ruby'), '-e', '1'], 'ruby'],
  ['php', `php -r 1;`, which('php') && [which('php'), '-r', '1;'], 'php'],
  ['bash', `bash -c 'echo hi'`, which('bash') && [which('bash'), '-c', 'echo hi'], 'bash'],
  ['gcc', `gcc -O2 hello.c && ./a.out`, which('gcc') && ['/bin/sh', '-c',
    `${which('gcc')} -O2 -o ${tmp}/a.out ${tmp}/hello.c -lm && ${tmp}/a.out`], 'c'],
  ['gxx', `g++ -O2 -std=gnu++20 hello.cpp -o a.out && ./a.out`, GXX && ['/bin/sh', '-c',
    `${GXX} -O2 -std=gnu++20 ${tmp}/hello.cpp -o ${tmp}/a_cpp.out && ${tmp}/a_cpp.out`], 'cpp'],
  ['bwrap', `bwrap --unshare-all … python3 -c 'print(1)'`, BWRAP && PY && [BWRAP, '--unshare-all', '--die-with-parent',
    '--ro-bind', '/usr', '/usr', '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64',
    '--symlink', 'usr/bin', '/bin', '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', PY, '-c', 'print(1)'], 'python'],
];

// Baselines run in a clean environment, as jailed programs do: this host's
// environment can cost a bare interpreter much (NODE_EXTRA_CA_CERTS makes
// `node -e 0` parse a CA bundle: ~80 ms instead of ~25 ms).
const CLEAN_ENV = { PATH: '/usr/bin:/bin', HOME: tmp, LANG: 'C.UTF-8' };

// One process, start to exit, in ms; {error} if it failed.
function timeProcess(argv, env = undefined) {
  const t0 = performance.now();
  const r = spawnSync(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], timeout: 60000, env });
  const t = performance.now() - t0;
  if (r.error) return { error: `${argv.join(' ')}: ${r.error.message}` };
  if (r.status !== 0) return { error: `${argv.join(' ')}: exit ${r.status} ${r.signal ?? ''} ${String(r.stderr).slice(0, 300)}` };
  return { t };
}

// ---- processes -------------------------------------------------------------
const servers = [];  // child processes to stop
const clients = [];
let cleaned = false;
async function cleanup() {
  if (cleaned) return;
  cleaned = true;
  for (const c of clients) await c.close().catch(() => {});
  for (const p of servers) {
    try { process.kill(p, 'SIGTERM'); } catch { /* gone */ }
  }
  rmSync(tmp, { recursive: true, force: true });
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const p of servers) { try { process.kill(p, 'SIGTERM'); } catch { /* gone */ } }
    rmSync(tmp, { recursive: true, force: true });
    process.exit(130);
  });
}

// The servers' config: the user's, else one that warms every shape of the
// warm column. `airlock run` gets only the user's.
const serverConfig = opts.config ?? path.join(tmp, 'suite-config.json');
const DEFAULT_POOL = { warm: DEFAULT_WARM, max_total: 24 };
if (!opts.config) writeFileSync(serverConfig, JSON.stringify({ pool: DEFAULT_POOL }, null, 2));
const serveArgs = (stateDir, config = serverConfig) => ['serve', '--state-dir', stateDir, '--config', config];
const newClient = () => new Client({ name: 'airlock-suite', version: '0.0.0' }, { capabilities: {} });

async function connectStdio(stateDir = path.join(tmp, 'state-stdio'), config = serverConfig, command = AIRLOCK_BIN,
                            args = serveArgs(stateDir, config)) {
  const transport = new StdioClientTransport({ command, args, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => { if (stderr.length < 64 * 1024) stderr += d; });
  const client = newClient();
  clients.push(client);
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`${path.basename(command)} ${args[0]} (stdio): ${e.message}\n${stderr}`);
  }
  servers.push(transport.pid);
  return { client, pid: transport.pid };
}

// `airlock serve --http 127.0.0.1:0`; ready when it prints its URL on stderr.
function startHttp() {
  return new Promise((resolve, reject) => {
    const proc = spawn(AIRLOCK_BIN, [...serveArgs(path.join(tmp, 'state-http')), '--http', '127.0.0.1:0'],
                       { stdio: ['ignore', 'ignore', 'pipe'] });
    servers.push(proc.pid);
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`airlock serve --http printed no URL in 20 s\n${buf}`)), 20000);
    proc.stderr.on('data', (d) => {
      if (buf.length < 64 * 1024) buf += d;
      const m = /http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(buf);
      if (m && Number(m[1]) > 0) { clearTimeout(timer); resolve({ url: m[0], pid: proc.pid }); }
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`airlock serve --http exited (${code})\n${buf}`)); });
  });
}
async function connectHttp(url) {
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  return client;
}

// Raw JSON-RPC clients (no SDK), to tell the server's HTTP cost from the
// SDK client's: one keep-alive HTTP connection, and a stdio server of its
// own spoken to line by line. Both return { call(body) -> ms }.
async function rawHttpClient(url) {
  const { default: httpMod } = await import('node:http');
  const u = new URL(url);
  const agent = new httpMod.Agent({ keepAlive: true, maxSockets: 1 });
  let sid = null;
  const post = (body) => new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (sid) Object.assign(headers, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
    const req = httpMod.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers }, (res) => {
      let data = '';
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ headers: res.headers, data }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
  const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize',
                            params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
  sid = init.headers['mcp-session-id'];
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  let id = 1;
  return {
    async call(params) {
      const t0 = performance.now();
      const r = await post({ jsonrpc: '2.0', id: id++, method: 'tools/call', params });
      const t = performance.now() - t0;
      return /"status":"ok"/.test(r.data) ? { t } : { error: `raw http: ${r.data.slice(0, 300)}` };
    },
    close() { agent.destroy(); },
  };
}
async function rawStdioClient(stateDir) {
  const proc = spawn(AIRLOCK_BIN, serveArgs(stateDir), { stdio: ['pipe', 'pipe', 'ignore'] });
  servers.push(proc.pid);
  let buf = '';
  const waiting = new Map();
  proc.stdout.on('data', (d) => {
    buf += d;
    for (let nl; (nl = buf.indexOf('\n')) >= 0;) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try { const m = JSON.parse(line); waiting.get(m.id)?.(line); waiting.delete(m.id); } catch { /* not ours */ }
    }
  });
  let id = 0;
  const send = (method, params) => new Promise((resolve) => {
    const myId = id++;
    waiting.set(myId, resolve);
    proc.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: myId, method, params }) + '\n');
  });
  await send('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } });
  proc.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  return {
    async call(params) {
      const t0 = performance.now();
      const line = await send('tools/call', params);
      const t = performance.now() - t0;
      return /"status":"ok"/.test(line) ? { t } : { error: `raw stdio: ${line.slice(0, 300)}` };
    },
    close() { proc.stdin.end(); },
  };
}

async function runCode(client, language, isolation, code) {
  const t0 = performance.now();
  const r = await client.callTool({ name: 'run_code', arguments: { language, code, isolation } },
                                  undefined, { timeout: 120000 });
  const t = performance.now() - t0;
  const sc = r.structuredContent;
  if (!sc || sc.status !== 'ok') {
    return { error: `run_code ${language}/${isolation}: ${JSON.stringify(sc ?? r).slice(0, 400)}` };
  }
  return { t };
}

// pid → [child pid], from /proc.
function childrenMap() {
  const children = new Map();
  for (const ent of readdirSync('/proc')) {
    if (!/^\d+$/.test(ent)) continue;
    try {
      const stat = readFileSync(`/proc/${ent}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(ent));
    } catch { /* exited */ }
  }
  return children;
}

// ---- code mode -------------------------------------------------------------
// As bench/codemode_bench.mjs: N sequential tools.call("test.echo") inside
// one `execute`, against the same tool called directly with the SDK.
const CODEMODE_PROGRAMS = {
  javascript: (n) => `
for (let i = 0; i < ${n}; i++) {
  const r = await tools.call("test.echo", {text: "x"});
  if (r !== "x") throw new Error("echo returned " + JSON.stringify(r));
}
return ${n};`,
  python: (n) => `
for _ in range(${n}):
    r = tools.call("test.echo", {"text": "x"})
    if r != "x":
        raise RuntimeError("echo returned %r" % (r,))
result = ${n}`,
};
async function execute(client, language, n) {
  const t0 = performance.now();
  const r = await client.callTool({ name: 'execute', arguments: { language, code: CODEMODE_PROGRAMS[language](n) } },
                                  undefined, { timeout: 120000 });
  const t = performance.now() - t0;
  const sc = r.structuredContent;
  if (!sc?.ok || sc.result !== n) return { error: `execute ${language} (${n} calls): ${JSON.stringify(sc ?? r).slice(0, 400)}` };
  return { t };
}
async function directEcho(client, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    times.push(performance.now() - t0);
    if (r.content?.[0]?.text !== 'x') return { error: `direct echo: ${JSON.stringify(r).slice(0, 400)}` };
  }
  return { times };
}

// The code-mode server's config: the user's (when it is plain JSON) with the
// downstream test server added and code mode's call limits raised.
function codemodeConfig() {
  let base = {};
  if (opts.config) {
    try { base = JSON.parse(readFileSync(opts.config, 'utf8')); } catch { /* comments: left out */ }
  }
  const cfg = {
    ...base,
    mcpServers: { ...(base.mcpServers ?? {}), test: { command: process.execPath, args: [TEST_SERVER], trusted: true } },
    // Code mode's engines pre-started from the start, as the run_code
    // servers' languages are (pool.warm).
    pool: { ...(base.pool ?? {}), warm: [...(base.pool?.warm ?? ['python']), 'code:javascript', 'code:python'] },
    codeMode: { ...(base.codeMode ?? {}),
                limits: { ...(base.codeMode?.limits ?? {}), max_calls: CODEMODE_CALLS + 50,
                          wall_ms: Math.max(10000, CODEMODE_CALLS * 200) } },
  };
  delete cfg.server?.state_dir;
  const file = path.join(tmp, 'codemode-config.json');
  writeFileSync(file, JSON.stringify(cfg, null, 2));
  return file;
}

// Rounds of: one batch of direct calls, an execute with N calls per language,
// CODEMODE_ZERO_PER_ROUND with 0 calls per language; order rotated per round.
async function codemodeSection(rounds) {
  const C = { direct: [], javascript: { zero: [], n: [] }, python: { zero: [], n: [] }, errors: [] };
  const err = (r) => { if (C.errors.length < 10) C.errors.push(r.error); };
  let direct;
  let airlock;
  try {
    direct = (await connectStdio(null, null, process.execPath, [TEST_SERVER])).client;
    airlock = (await connectStdio(null, null, AIRLOCK_BIN,
                                  serveArgs(path.join(tmp, 'state-codemode'), codemodeConfig()))).client;
  } catch (e) {
    C.errors.push(`code mode: ${e.message.slice(0, 600)}`);
    return C;
  }
  // Warm-up: the first bridge call starts the connector's session.
  await directEcho(direct, 20);
  for (const lang of ['javascript', 'python']) {
    for (const n of [20, 0]) { const r = await execute(airlock, lang, n); if (r.error) err(r); }
  }
  const steps = [
    async () => { const r = await directEcho(direct, CODEMODE_CALLS); if (r.error) err(r); else C.direct.push(...r.times); },
  ];
  for (const lang of ['javascript', 'python']) {
    steps.push(async () => { const r = await execute(airlock, lang, CODEMODE_CALLS); if (r.error) err(r); else C[lang].n.push(r.t); });
    steps.push(async () => {
      for (let i = 0; i < CODEMODE_ZERO_PER_ROUND; i++) {
        const r = await execute(airlock, lang, 0);
        if (r.error) err(r); else C[lang].zero.push(r.t);
      }
    });
  }
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < steps.length; k++) await steps[(k + round) % steps.length]();
  }
  // Stop both now, so they take no CPU from the readings that follow.
  await direct.close().catch(() => {});
  await airlock.close().catch(() => {});
  return C;
}

// VmRSS (KiB) of `root` and every descendant, from /proc.
function treeRssKiB(root) {
  const children = childrenMap();
  let kib = 0;
  let procs = 0;
  let jails = 0;  // airlock-init processes: jails alive while the server is idle
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop();
    try {
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) { kib += Number(m[1]); procs++; }
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'airlock-init') jails++;
    } catch { /* exited */ }
    todo.push(...(children.get(pid) ?? []));
  }
  return { kib, procs, jails };
}

// Every jail under `root` (an `airlock-init` and its descendants): its shape,
// whether an interpreter waits in it, and PSS / RSS (KiB, smaps_rollup)
// summed over its processes.
function pooledJails(root) {
  const children = childrenMap();
  const read = (f) => { try { return readFileSync(f, 'utf8'); } catch { return null; } };
  const jails = [];
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop();
    if ((read(`/proc/${pid}/comm`) ?? '').trim() !== 'airlock-init') { todo.push(...(children.get(pid) ?? [])); continue; }
    const procs = [];
    const inner = [pid];
    while (inner.length) { const q = inner.pop(); procs.push(q); inner.push(...(children.get(q) ?? [])); }
    let pss = 0;
    let rss = 0;
    for (const q of procs) {
      const sm = read(`/proc/${q}/smaps_rollup`) ?? '';
      pss += Number(/^Pss:\s+(\d+)/m.exec(sm)?.[1] ?? 0);
      rss += Number(/^Rss:\s+(\d+)/m.exec(sm)?.[1] ?? 0);
    }
    // The interpreter: the first process under airlock-init.
    const argv = procs.length > 1 ? (read(`/proc/${procs[1]}/cmdline`) ?? '').split('\0').filter(Boolean) : [];
    const exe = path.basename(argv[0] ?? '');
    let shape = null;
    if (exe === 'airlock-js') {
      if (argv.includes('--wasi-ruby')) shape = 'ruby/wasm';
      else if (argv.some((x) => /python\.wasm$/.test(x))) shape = 'python/wasm';
      else if (argv.some((x) => /php\.wasm$/.test(x))) shape = 'php/wasm';
      else if (argv.includes('--wasi')) shape = 'c|cpp/wasm';
      else shape = 'javascript/wasm';
    } else if (exe) {
      const name = exe.replace(/[\d.]+$/, '');  // python3.11 → python
      shape = { python: 'python/native', node: 'javascript/native', ruby: 'ruby/native', php: 'php/native',
                bash: 'bash/native' }[name] ?? `${name}/native`;
    } else {
      // No interpreter yet: the jail's mounts say its tier (and for the WASM
      // interpreters, the language).
      const mounts = (read(`/proc/${pid}/mountinfo`) ?? '').split('\n').map((l) => l.split(' ')[4]);
      if (mounts.includes('/opt/airlock/wasm-ruby')) shape = 'ruby/wasm';
      else if (mounts.includes('/opt/airlock/wasm-python')) shape = 'python/wasm';
      else if (mounts.includes('/opt/airlock/wasm-php')) shape = 'php/wasm';
      else if (mounts.includes('/opt/airlock/airlock-js')) shape = 'javascript|c|cpp/wasm';
      else if (mounts.includes('/etc/php')) shape = 'php/native';
      else if (mounts.includes('/etc/python3')) shape = 'python/native';
      else shape = 'native (javascript|typescript|ruby|bash|c|cpp)';
    }
    jails.push({ pid, shape, interpreter: procs.length > 1 ? argv.slice(0, 3).join(' ') : null,
                 procs: procs.length, pssKiB: pss, rssKiB: rss });
  }
  return jails;
}

// A pool, if the server reports one anywhere in list_languages' result or its
// Busy CPU time of the whole machine so far, in ms (/proc/stat: all but
// idle and iowait; USER_HZ 100).
function machineBusyMs() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = f;
  return (user + nice + system + irq + softirq + (steal || 0)) * 10;
}

// initialize answer (a key named like "pool" or "warm"); null otherwise.
function findPool(obj, where) {
  if (!obj || typeof obj !== 'object') return null;
  for (const [k, v] of Object.entries(obj)) {
    if (/pool|warm/i.test(k) && v !== null && v !== false && !(typeof v === 'object' && !Object.keys(v).length)) {
      return { where: `${where}.${k}`, value: v };
    }
    const inner = findPool(v, `${where}.${k}`);
    if (inner) return inner;
  }
  return null;
}

const sleep = (t) => new Promise((r) => setTimeout(r, t));

// ---- main ------------------------------------------------------------------
const started = performance.now();
const load0 = os.loadavg();
const kernel = spawnSync('uname', ['-r']).stdout?.toString().trim() || os.release();
const K = Math.min(opts.compileRuns, opts.runs);  // rounds that sample the sparse contenders
const CMR = Math.min(opts.runs, CODEMODE_MAX_ROUNDS);  // code-mode rounds
const header = [
  `# airlock performance suite`,
  '',
  `machine: nproc ${os.availableParallelism?.() ?? os.cpus().length}, ${os.cpus()[0]?.model ?? '?'}, ` +
    `kernel ${kernel}, node ${process.version}, load average ${load0.map((x) => x.toFixed(2)).join(' ')}, ` +
    `${new Date().toISOString()}`,
  `airlock: ${AIRLOCK_BIN} serve --config ${opts.config ? opts.config : `<temp: {"pool": ${JSON.stringify(DEFAULT_POOL)}}>`}` +
    `${opts.config ? ` (also given to airlock run)` : ''}; ${opts.runs} rounds (+1 warm-up), ` +
    `first compiles, bare g++ and the airlock run of ${[...SPARSE_CLI].join(', ')} in ${K} of them; throughput ${opts.tputRuns} runs per cell; ` +
    `code mode ${opts.codemode ? `${CMR} rounds of ${CODEMODE_CALLS} calls` : 'skipped (--no-codemode)'}`,
];
console.log(header.join('\n'));

const errors = [];
const out = { machine: { nproc: os.availableParallelism?.() ?? os.cpus().length, kernel, load0, date: new Date().toISOString() },
              opts, server_config: opts.config ?? { pool: DEFAULT_POOL }, previous: PREVIOUS,
              latency: {}, baselines: {}, throughput: {}, memory: {}, pooled_jails: [], codemode: null, targets: [], errors };
try {
  const stdio = await connectStdio();
  const http = opts.http ? await startHttp() : null;
  const httpClient = http ? await connectHttp(http.url) : null;
  await sleep(300);  // let both servers settle before the idle reading
  out.memory.start = { stdio: treeRssKiB(stdio.pid), http: http ? treeRssKiB(http.pid) : null };

  // Which languages and tiers the server offers; a pool if it reports one.
  const ll = await stdio.client.callTool({ name: 'list_languages', arguments: {} });
  const offered = new Map((ll.structuredContent?.languages ?? []).map((l) => [l.name, l.tiers ?? l.isolation ?? ['native']]));
  // Read after list_languages so a pool warmed at start-up has had its time.
  await sleep(500);
  const idle = treeRssKiB(stdio.pid);
  let configPool = null;
  try {
    configPool = JSON.parse(readFileSync(serverConfig, 'utf8')).pool ?? null;
  } catch { /* comments in the user's config: airlock reads it */ }
  const pool = opts.warm === false ? null
    : findPool(ll.structuredContent, 'list_languages') ??
      findPool(stdio.client.getServerCapabilities?.(), 'capabilities') ??
      (configPool && configPool.enabled !== false ? { where: `${opts.config ? '--config' : 'the suite\'s config'} pool`, value: configPool } : null) ??
      (idle.jails > 0 ? { where: '/proc', value: `${idle.jails} jail(s) ready while idle` } : null) ??
      (opts.warm ? { where: '--warm', value: true } : null);
  out.pool = pool;

  const named = (lang, tier) => (opts.only ?? []).includes(`${lang}:${tier}`);
  const want = (lang, tier) => (!opts.only ? !ONLY_WHEN_NAMED.has(`${lang}/${tier}`)
    : opts.only.includes(lang) ? !ONLY_WHEN_NAMED.has(`${lang}/${tier}`) : named(lang, tier));
  const rows = [];  // {lang, tier, first, id}
  for (const tier of ['native', 'wasm']) {
    for (const lang of LANGS) {
      if (!want(lang, tier)) continue;
      if (!offered.has(lang)) { if (tier === 'native') errors.push(`${lang}: not offered by list_languages`); continue; }
      if (!offered.get(lang).includes(tier)) continue;
      rows.push({ lang, tier, first: false, id: `${lang}/${tier}` });
      if (tier === 'native' && FIRST_COMPILE.has(lang)) rows.push({ lang, tier, first: true, id: `${lang}/${tier}/first` });
    }
  }
  for (const o of opts.only ?? []) {
    const [lang, tier] = o.split(':');
    if (!LANGS.includes(lang) || (tier && !['native', 'wasm'].includes(tier))) {
      errors.push(`--only ${o}: not one of ${LANGS.join(', ')} (optionally :native or :wasm)`);
    } else if (!rows.some((r) => r.lang === lang && (!tier || r.tier === tier))) {
      errors.push(`--only ${o}: the server offers no such language/tier`);
    }
  }
  const neededBase = new Set(rows.map((r) => r.lang));
  const baselines = BASELINES.filter(([key, , argv, lang]) => {
    if (!neededBase.has(lang)) return false;
    if (!argv) { errors.push(`baseline ${key}: binary not found`); return false; }
    return true;
  });

  // Samples. key → [ms]
  const S = {};
  const add = (key, r, what) => {
    if (r.error) { if (errors.length < 50) errors.push(`${what}: ${r.error}`); return; }
    (S[key] ??= []).push(r.t);
  };
  // {fn, sparse}: a sparse step runs in K of the rounds only.
  const steps = [];
  for (const row of rows) {
    const { lang, tier, id } = row;
    steps.push({ sparse: row.first, fn: async () => add(`stdio:${id}`, await runCode(stdio.client, lang, tier, sourceFor(row)), `stdio ${id}`) });
    if (httpClient) steps.push({ sparse: row.first, fn: async () => add(`http:${id}`, await runCode(httpClient, lang, tier, sourceFor(row)), `http ${id}`) });
    if (row.first) continue;  // `airlock run` has no build cache: the row above's column already compiles each time
    const cli = [AIRLOCK_BIN, 'run', '--lang', lang, '--isolation', tier, ...(opts.config ? ['--config', opts.config] : []),
                 path.join(tmp, `hello.${EXT[lang]}`)];
    steps.push({ sparse: SPARSE_CLI.has(id), fn: async () => add(`cli:${id}`, timeProcess(cli), `cli ${id}`) });
  }
  for (const [key, , argv] of baselines) {
    steps.push({ sparse: key === 'gxx', fn: async () => add(`base:${key}`, timeProcess(argv, CLEAN_ENV), `baseline ${key}`) });
  }
  // Round r of R samples the sparse steps when it starts a new K-th of the rounds.
  const sparseRound = (r) => Math.floor(((r + 1) * K) / opts.runs) > Math.floor((r * K) / opts.runs);

  // Warm-up round (not counted), then the measured rounds.
  const errorsBeforeWarmup = errors.length;
  for (const step of steps) await step.fn();
  for (const k of Object.keys(S)) delete S[k];
  const warmupErrors = errors.length - errorsBeforeWarmup;
  const tLat = performance.now();
  for (let round = 0; round < opts.runs; round++) {
    const off = (round * 7) % steps.length;  // rotate the order per round
    const dense = !sparseRound(round);
    for (let k = 0; k < steps.length; k++) {
      const step = steps[(k + off) % steps.length];
      if (step.sparse && dense) continue;
      await step.fn();
    }
  }
  const latSeconds = (performance.now() - tLat) / 1000;

  // Warm: only with a pool; a gap before each sample lets it refill.
  const W = {};
  const tWarm = performance.now();
  // Raw JSON-RPC clients beside the SDK ones for python/native (HTTP only).
  const raw = pool && httpClient && rows.some((r) => r.id === 'python/native')
    ? { http: await rawHttpClient(http.url), stdio: await rawStdioClient(path.join(tmp, 'state-raw-stdio')) } : null;
  if (raw) await sleep(1500);  // the raw stdio server warms its pool
  if (pool) {
    for (let i = 0; i < opts.runs; i++) {
      for (const row of rows) {
        if (row.first && !sparseRound(i)) continue;
        await sleep(opts.warmGapMs);
        const r = await runCode(stdio.client, row.lang, row.tier, sourceFor(row));
        if (r.error) errors.push(`warm ${row.id}: ${r.error}`); else (W[row.id] ??= []).push(r.t);
        // HTTP against stdio on equal terms: both after the same idle gap
        // (in the latency rounds an HTTP call follows the stdio server's
        // call and runs beside that server's refill).
        if (httpClient && row.id === 'python/native') {
          await sleep(opts.warmGapMs);
          const h = await runCode(httpClient, row.lang, row.tier, sourceFor(row));
          if (h.error) errors.push(`warm http ${row.id}: ${h.error}`); else (W[`http:${row.id}`] ??= []).push(h.t);
        }
        if (raw && row.id === 'python/native') {
          for (const via of ['stdio', 'http']) {
            await sleep(opts.warmGapMs);
            const x = await raw[via].call({ name: 'run_code', arguments: { language: 'python', code: sourceFor(row) } });
            if (x.error) errors.push(`warm raw ${via}: ${x.error}`); else (W[`raw-${via}:${row.id}`] ??= []).push(x.t);
          }
        }
      }
    }
  }
  if (raw) { raw.http.close(); raw.stdio.close(); }
  const warmSeconds = (performance.now() - tWarm) / 1000;

  // Throughput: fixed total of python print(1) runs per cell.
  const T = {};
  const levels = [1, 4, 8];
  const wantPy = rows.some((r) => r.lang === 'python' && r.tier === 'native');
  // WASM Python at C=1 and C=4 over stdio, against native's (issue 34).
  const wantWasmPy = wantPy && rows.some((r) => r.lang === 'python' && r.tier === 'wasm');
  const httpClients = [];
  const tTput = performance.now();
  if (wantPy) {
    if (httpClient) {
      httpClients.push(httpClient);
      while (httpClients.length < Math.max(...levels)) httpClients.push(await connectHttp(http.url));
    }
    const one = async (client, tier) => {
      const r = await runCode(client, 'python', tier, 'print(1)');
      if (r.error) { errors.push(`throughput (${tier}): ${r.error}`); return false; }
      return true;
    };
    // C workers pulling from one counter; `clientFor(w)` picks the session.
    const cellRun = async (c, clientFor, tier = 'native') => {
      let next = 0;
      let ok = 0;
      const busy0 = machineBusyMs();
      const t0 = performance.now();
      await Promise.all(Array.from({ length: c }, async (_, w) => {
        while (next < opts.tputRuns) { next++; if (await one(clientFor(w), tier)) ok++; }
      }));
      const s = (performance.now() - t0) / 1000;
      const cpuMsPerRun = ok ? (machineBusyMs() - busy0) / ok : null;
      return { runs: opts.tputRuns, ok, seconds: s, perSecond: ok / s, cpuMsPerRun };
    };
    // What one bare interpreter start costs, the floor of a run that gets a
    // fresh interpreter (pre-started or not): the user+system CPU of
    // `python3 -c 'print(1)'` as its parent's os.times() sees it (what
    // `hyperfine -N` reports too), without our own spawning's cost. The
    // bound is cores ÷ that (issue 32's definition).
    {
      const n = 30;
      const probe = spawnSync('/usr/bin/python3', ['-I', '-c',
        'import os, subprocess\n' +
        `for _ in range(${n}): subprocess.run(["/usr/bin/python3", "-c", "print(1)"], stdout=subprocess.DEVNULL, env={"PATH": "/usr/bin:/bin"})\n` +
        't = os.times()\nprint((t.children_user + t.children_system) * 1000 / ' + n + ')'], { env: CLEAN_ENV, encoding: 'utf8' });
      T.bareCpuMsPerRun = Number.parseFloat(probe.stdout);
      T.freshBoundPerSecond = (os.cpus().length * 1000) / T.bareCpuMsPerRun;
    }
    for (const c of levels) {
      T[`stdio:${c}`] = await cellRun(c, () => stdio.client);
      if (httpClient) T[`http:${c}`] = await cellRun(c, (w) => httpClients[w]);
    }
    if (wantWasmPy) {
      for (const c of [1, 4]) T[`wasm-stdio:${c}`] = await cellRun(c, () => stdio.client, 'wasm');
    }
  }
  const tputSeconds = (performance.now() - tTput) / 1000;

  // Code mode: its own server (the downstream test server in its config).
  const tCm = performance.now();
  const CM = opts.codemode ? await codemodeSection(CMR) : null;
  const cmSeconds = (performance.now() - tCm) / 1000;
  if (CM) errors.push(...CM.errors);

  // Idle again: wait until the pool's refills are over (the same jails and
  // interpreters in two readings 500 ms apart), at most 10 s.
  await sleep(1000);
  let jails = pooledJails(stdio.pid);
  const sig = (js) => js.map((j) => `${j.pid}:${j.procs}`).sort().join(',');
  for (let i = 0; i < 20; i++) {
    await sleep(500);
    const again = pooledJails(stdio.pid);
    const same = sig(again) === sig(jails);
    jails = again;
    if (same) break;
  }
  out.memory.end = { stdio: treeRssKiB(stdio.pid), http: http ? treeRssKiB(http.pid) : null };
  out.pooled_jails = jails;
  const load1 = os.loadavg();

  // ---- the tables ----------------------------------------------------------
  const lines = [];
  const baseKey = (lang) => BASELINES.find((b) => b[3] === lang)?.[0];
  const baseFor = (lang) => p50(S[`base:${baseKey(lang)}`] ?? []);
  const buildOf = (row) => (!COMPILED.has(row.lang) ? '—' : row.first ? 'first compile' : 'cache hit');
  lines.push('');
  lines.push(`## run_code hello world, sequential (ms; p50 and p99 over ${opts.runs} calls, first compiles over ${K}; ` +
             `× = over the bare interpreter's p50)`);
  lines.push('');
  lines.push(`build: for compiled languages, whether the server's build cache answered ("cache hit": the same source every ` +
             `time) or every sample was new ("first compile": a unique comment appended). \`airlock run\` has no build cache, ` +
             `so its column always compiles; first-compile rows leave it out. The \`airlock run\` column of ${[...SPARSE_CLI].join(', ')} and bare g++ ran in ${K} of the rounds.`);
  lines.push('');
  const hcols = httpClient ? ' http p50 | http p99 |' : '';
  lines.push(`| language | tier | build | stdio p50 | stdio p99 |${hcols} airlock run p50 | bare p50 | warm p50 | warm p99 |`);
  lines.push(`|---|---|---|---|---|${httpClient ? '---|---|' : ''}---|---|---|---|`);
  for (const row of rows) {
    const { lang, tier, id } = row;
    const base = baseFor(lang);
    const s = S[`stdio:${id}`] ?? [];
    const h = S[`http:${id}`] ?? [];
    const c = row.first ? [] : (S[`cli:${id}`] ?? []);
    const warm = pool ? cell(p50(W[id] ?? []), base) : '—, no pool yet';
    const warm99 = pool ? cell(p99(W[id] ?? []), base) : '—';
    const hc = httpClient ? ` ${cell(p50(h), base)} | ${cell(p99(h), base)} |` : '';
    lines.push(`| ${lang} | ${tier} | ${buildOf(row)} | ${cell(p50(s), base)} | ${cell(p99(s), base)} |${hc} ` +
               `${row.first ? '—' : cell(p50(c), base)} | ${ms(base)} | ${warm} | ${warm99} |`);
    out.latency[id] = {
      build: buildOf(row),
      stdio: { p50: p50(s), p99: p99(s), samples: s }, http: { p50: p50(h), p99: p99(h), samples: h },
      cli: { p50: p50(c), p99: p99(c), samples: c }, bare_p50: base,
      warm: pool ? { p50: p50(W[id] ?? []), p99: p99(W[id] ?? []), samples: W[id] ?? [] } : null,
    };
  }
  lines.push('');
  lines.push(`## baselines, same rounds, clean environment (PATH=/usr/bin:/bin HOME LANG only) (ms; × = over python3 -c 'print(1)')`);
  lines.push('');
  lines.push('airlock runs python3 -I main.py, node main.js (from -e, stdout blocking), esbuild then the same, ruby --disable-gems main.rb, php main.php, ' +
             'bash main.sh, gcc -O2 then the binary, g++ -O2 -std=gnu++20 then the binary; ' +
             'each language row above is divided by the first baseline here for that language.');
  lines.push('');
  lines.push('| baseline | p50 | p99 |');
  lines.push('|---|---|---|');
  const pyBase = p50(S['base:py'] ?? []);
  for (const [key, label] of baselines) {
    const xs = S[`base:${key}`] ?? [];
    lines.push(`| \`${label}\` | ${cell(p50(xs), pyBase)} | ${ms(p99(xs))} |`);
    out.baselines[key] = { label, p50: p50(xs), p99: p99(xs), samples: xs };
  }
  if (wantPy) {
    lines.push('');
    lines.push(`## throughput, python print(1), ${opts.tputRuns} runs per cell (runs/s; × = over concurrency 1 of the same transport)`);
    lines.push('');
    lines.push(`stdio: one session, C calls in flight${httpClient ? `; http: C sessions, one call in flight each` : ''}. ` +
               `The server runs at most server.max_concurrent_runs (default: nproc) at once and queues the rest.`);
    lines.push('');
    lines.push(`| transport | C=1 | C=4 | C=8 |`);
    lines.push('|---|---|---|---|');
    for (const tr of [...(httpClient ? ['stdio', 'http'] : ['stdio']), ...(wantWasmPy ? ['wasm-stdio'] : [])]) {
      const one = T[`${tr}:1`]?.perSecond;
      const cells = levels.map((c) => {
        const x = T[`${tr}:${c}`];
        if (!x) return '—';
        const bad = x.ok < x.runs ? ` [${x.runs - x.ok} failed]` : '';
        return `${x.perSecond.toFixed(1)}${c === 1 ? '' : ` (${(x.perSecond / one).toFixed(2)}×)`}${bad}`;
      });
      lines.push(`| ${tr} | ${cells.join(' | ')} |`);
    }
    lines.push('');
    const cpu = (x) => (x?.cpuMsPerRun == null ? '—' : `${x.cpuMsPerRun.toFixed(1)} ms`);
    lines.push(`CPU per run (whole machine, client included, from /proc/stat): ` +
               levels.map((c) => `stdio C=${c} ${cpu(T[`stdio:${c}`])}`).join(', ') +
               `; a bare \`python3 -I -c 'print(1)'\` costs ${T.bareCpuMsPerRun.toFixed(1)} ms, so ${os.cpus().length} cores ` +
               `start at most ${T.freshBoundPerSecond.toFixed(0)} fresh interpreters per second.` +
               (wantWasmPy ? ` wasm-stdio: the same python print(1) in the WASM tier (isolation "wasm"), stdio; ` +
                             `CPU per run C=1 ${cpu(T['wasm-stdio:1'])}, C=4 ${cpu(T['wasm-stdio:4'])}.` : ''));
    out.throughput = T;
  }
  lines.push('');
  lines.push('## server memory (VmRSS summed over airlock serve and its descendants)');
  lines.push('');
  lines.push('| server | after start | after the runs |');
  lines.push('|---|---|---|');
  const mem = (m) => (m ? `${(m.kib / 1024).toFixed(1)} MiB (${m.procs} proc${m.procs === 1 ? '' : 's'}` +
                          `${m.jails ? `, ${m.jails} idle jail${m.jails === 1 ? '' : 's'}` : ''})` : 'n/a');
  lines.push(`| stdio | ${mem(out.memory.start.stdio)} | ${mem(out.memory.end.stdio)} |`);
  if (http) lines.push(`| http | ${mem(out.memory.start.http)} | ${mem(out.memory.end.http)} |`);

  // Pooled jails of the stdio server while idle, grouped by shape.
  const MiB = (kib) => kib / 1024;
  const byShape = new Map();
  for (const j of jails) {
    const key = `${j.shape}${j.interpreter ? '' : ' (empty)'}`;
    if (!byShape.has(key)) byShape.set(key, []);
    byShape.get(key).push(j);
  }
  lines.push('');
  lines.push(`## idle pooled jails of the stdio server (MiB per jail, summed over its processes; PSS from /proc/PID/smaps_rollup)`);
  lines.push('');
  lines.push('A jail is the process tree under one `airlock-init`; its shape comes from the pre-started interpreter\'s ' +
             'cmdline, or, when none waits in it ("empty"), from its mounts (a WASM interpreter\'s directory, ' +
             '/opt/airlock/airlock-js for the WASM tier).');
  lines.push('');
  lines.push('| shape | jails | interpreter | PSS per jail (min–max) | RSS per jail (max) |');
  lines.push('|---|---|---|---|---|');
  const shapeRows = [...byShape.entries()].sort(([a], [b]) => a.localeCompare(b));
  for (const [shape, js] of shapeRows) {
    const pss = js.map((j) => MiB(j.pssKiB));
    const rss = js.map((j) => MiB(j.rssKiB));
    const interp = js[0].interpreter ? `\`${path.basename(js[0].interpreter.split(' ')[0])}\` pre-started` : 'none (ready jail only)';
    lines.push(`| ${shape} | ${js.length} | ${interp} | ${Math.min(...pss).toFixed(1)}–${Math.max(...pss).toFixed(1)} | ` +
               `${Math.max(...rss).toFixed(1)} |`);
  }
  if (!jails.length) lines.push('| (no jail alive under the idle server) | 0 | — | — | — |');

  // Code mode.
  let cmSum = null;
  if (CM) {
    const direct = p50(CM.direct);
    cmSum = { direct_p50: direct, direct_samples: CM.direct };
    lines.push('');
    lines.push(`## code mode (ms; its own airlock serve with tests/fixtures/mcp-servers/test-server.mjs as server "test"; ` +
               `${CMR} rounds)`);
    lines.push('');
    lines.push(`direct = SDK client → test-server.mjs \`echo\` over stdio, per call (${CM.direct.length} calls). ` +
               `Per bridged call = (p50 of execute with ${CODEMODE_CALLS} \`tools.call("test.echo")\` − p50 with none) / ${CODEMODE_CALLS}.`);
    lines.push('');
    lines.push(`| language | execute, 0 calls p50 | p99 | execute, ${CODEMODE_CALLS} calls p50 | per bridged call | × direct (${direct.toFixed(3)} ms) |`);
    lines.push('|---|---|---|---|---|---|');
    for (const lang of ['javascript', 'python']) {
      const z = CM[lang].zero;
      const n = CM[lang].n;
      const slope = (p50(n) - p50(z)) / CODEMODE_CALLS;
      cmSum[lang] = { zero_p50: p50(z), zero_p99: p99(z), n_p50: p50(n), per_call: slope, zero_samples: z, n_samples: n };
      lines.push(`| ${lang} | ${ms(p50(z))} | ${ms(p99(z))} | ${ms(p50(n))} | ${Number.isFinite(slope) ? slope.toFixed(3) : 'n/a'} | ` +
                 `${Number.isFinite(slope / direct) ? (slope / direct).toFixed(2) + '×' : 'n/a'} |`);
    }
    out.codemode = cmSum;
  }

  // ---- targets -------------------------------------------------------------
  // {target, figure, unit, base, baseLabel, ratio, goal, kind, note}
  // kind 'ratio≤' | 'ratio≥': the ratio against `goal`; 'abs≤': the figure
  // against `goal` (its unit); 'info': no goal given.
  const targets = [];
  const fmt = (x, unit) => {
    if (!Number.isFinite(x)) return 'n/a';
    if (unit === 'ms') return `${ms(x)} ms`;
    if (unit === 'ms/call') return `${x.toFixed(3)} ms`;
    if (unit === 'runs/s') return `${x.toFixed(1)} runs/s`;
    if (unit === 'MiB') return `${x.toFixed(1)} MiB`;
    return `${x.toFixed(3)} ${unit}`;
  };
  const T_ = (t) => {
    const r = Number.isFinite(t.ratio) ? t.ratio : (Number.isFinite(t.figure) && Number.isFinite(t.base) && t.base > 0 ? t.figure / t.base : NaN);
    let met = 'n/a';
    if (t.kind === 'ratio≤' && Number.isFinite(r)) met = r <= t.goal ? 'yes' : 'no';
    if (t.kind === 'ratio≥' && Number.isFinite(r)) met = r >= t.goal ? 'yes' : 'no';
    if (t.kind === 'abs≤' && Number.isFinite(t.figure)) met = t.figure <= t.goal ? 'yes' : 'no';
    if (t.na) met = 'n/a';
    const goal = t.kind === 'ratio≤' ? `≤ ${t.goal.toFixed(2)}×` : t.kind === 'ratio≥' ? `≥ ${t.goal.toFixed(2)}×`
      : t.kind === 'abs≤' ? `≤ ${t.goal} ${t.unit}` : 'none given (reported)';
    targets.push({ ...t, ratio: r, met, goalText: goal });
  };
  const warmP = (id, q) => (pool ? q(W[id] ?? []) : NaN);
  const noWarm = pool ? null : 'no warm column (no pool, or --no-warm)';
  const lat = (id, tr) => p50(S[`${tr}:${id}`] ?? []);
  const missing = (id) => (!rows.some((r) => r.id === id) ? `${id} not measured (not offered or not in --only)` : null);
  const baseP = (key) => p50(S[`base:${key}`] ?? []);
  const baseName = (key) => `\`${BASELINES.find((b) => b[0] === key)?.[1]}\``;

  // 1. Warm python and javascript through MCP stdio against the bare
  // interpreter (python3 -c 'print(1)', node -e 0).
  for (const [lang, key, label] of [['python', 'py', 'Python'], ['javascript', 'node', 'JavaScript']]) {
    for (const [q, name, goal] of [[p50, 'p50', 0.10], [p99, 'p99', 0.25]]) {
      T_({ target: `1. ${label} hello, warm, MCP stdio, ${name} (over bare p50)`, figure: warmP(`${lang}/native`, q), unit: 'ms',
           base: baseP(key), baseLabel: `${baseName(key)} p50`, kind: 'ratio≤', goal,
           note: missing(`${lang}/native`) ?? noWarm });
    }
  }
  // 2. Throughput at C=4 against the fresh-interpreter bound.
  T_({ target: '2. Throughput, python print(1), stdio C=4 (over fresh-interpreter bound)', figure: T['stdio:4']?.perSecond,
       unit: 'runs/s', base: T.freshBoundPerSecond,
       baseLabel: `${os.cpus().length} cores ÷ ${T.bareCpuMsPerRun?.toFixed(1) ?? '?'} ms CPU per bare python3 start`,
       kind: 'ratio≥', goal: 0.8, note: wantPy ? null : 'python/native not measured' });
  // 3. Code mode.
  // Issue 32: execute with no calls <= 10 ms (JavaScript), 15 ms (Python).
  for (const [lang, prev, goal] of [['javascript', PREVIOUS.codemode_js_ms, 10], ['python', PREVIOUS.codemode_py_ms, 15]]) {
    T_({ target: `3. Code mode, execute with no calls, ${lang}, p50 (absolute; × over the figure before pre-starting)`,
         figure: cmSum?.[lang]?.zero_p50, unit: 'ms', base: prev,
         baseLabel: 'previous figure (constant: codemode_bench, 2026-12-02; not this run)',
         kind: 'abs≤', goal, note: CM ? null : 'skipped (--no-codemode)' });
  }
  for (const lang of ['javascript', 'python']) {
    T_({ target: `3. Code mode, per bridged call, ${lang} (over a direct SDK call)`, figure: cmSum?.[lang]?.per_call,
         unit: 'ms/call', base: cmSum?.direct_p50, baseLabel: 'direct SDK call to the same `echo`, p50', kind: 'ratio≤', goal: 1.2,
         note: CM ? null : 'skipped (--no-codemode)' });
  }
  for (const lang of ['javascript', 'python']) {
    T_({ target: `3. Code mode, ${CODEMODE_CALLS} calls in one execute, ${lang}, p50 (over ${CODEMODE_CALLS} direct SDK calls)`,
         figure: cmSum?.[lang]?.n_p50, unit: 'ms', base: cmSum ? cmSum.direct_p50 * CODEMODE_CALLS : NaN,
         baseLabel: `${CODEMODE_CALLS} × the direct SDK call's p50`, kind: 'ratio≤', goal: 1.3,
         note: CM ? null : 'skipped (--no-codemode)' });
  }
  // 4. TypeScript against JavaScript, warm.
  T_({ target: '4. TypeScript hello, warm p50 (over JavaScript warm p50)', figure: warmP('typescript/native', p50), unit: 'ms',
       base: warmP('javascript/native', p50), baseLabel: 'javascript native warm p50',
       kind: 'ratio≤', goal: 1.5, note: missing('typescript/native') ?? missing('javascript/native') ?? noWarm });
  // 5. WASM tier: JavaScript and Ruby warm; memory per pooled WASM interpreter.
  T_({ target: '5. WASM JavaScript hello, warm p50 (over bare node -e 0)', figure: warmP('javascript/wasm', p50), unit: 'ms',
       base: baseP('node'), baseLabel: `${baseName('node')} p50`, kind: 'info',
       note: missing('javascript/wasm') ?? noWarm });
  T_({ target: '5. WASM Ruby hello, warm p50 (absolute; × over bare ruby)', figure: warmP('ruby/wasm', p50), unit: 'ms',
       base: baseP('ruby'), baseLabel: `${baseName('ruby')} p50`, kind: 'abs≤', goal: 100,
       note: missing('ruby/wasm') ?? noWarm });
  T_({ target: '5. WASM PHP echo, warm p50 (absolute; × over bare php -r)', figure: warmP('php/wasm', p50), unit: 'ms',
       base: baseP('php'), baseLabel: `${baseName('php')} p50`, kind: 'abs≤', goal: 100,
       note: missing('php/wasm') ?? noWarm });
  T_({ target: '5. WASM Python print(1) runs/s at C=4, stdio (over native Python at C=4)',
       figure: T['wasm-stdio:4']?.perSecond, unit: 'runs/s', base: T['stdio:4']?.perSecond, baseLabel: 'native stdio C=4',
       kind: 'ratio≥', goal: 0.5, note: wantWasmPy ? null : 'needs both python and python:wasm in --only' });
  for (const lang of ['javascript', 'python', 'ruby', 'php']) {
    const shape = `${lang}/wasm`;
    const withInterp = jails.filter((j) => j.shape === shape && j.interpreter);
    const empty = jails.filter((j) => j.interpreter === null && j.shape.split('/')[0].split('|').includes(lang) &&
                                      j.shape.endsWith('/wasm'));
    let note = null;
    if (!withInterp.length) {
      note = empty.length
        ? `no interpreter pre-started in its pooled jail; ${empty.length} empty WASM-tier jail(s), at most ` +
          `${Math.max(...empty.map((j) => MiB(j.pssKiB))).toFixed(1)} MiB PSS each`
        : 'no pooled jail of this shape while idle';
    } else {
      note = `RSS ${Math.max(...withInterp.map((j) => MiB(j.rssKiB))).toFixed(1)} MiB; ${withInterp.length} such jail(s)`;
    }
    T_({ target: `5. Memory of one idle pooled ${lang} WASM interpreter (PSS of its jail, max)`,
         figure: withInterp.length ? Math.max(...withInterp.map((j) => MiB(j.pssKiB))) : NaN, unit: 'MiB',
         base: NaN, baseLabel: '—', kind: 'abs≤', goal: 100, note, na: !withInterp.length });
  }
  // 6. First compiles. "Today's" compile (before precompiled headers and
  // gold) was exactly the bare compiler command below, run in a jail: the
  // same-run baseline is that command; the previous figure (another day,
  // another machine state) is shown for reference only.
  for (const [lang, prev, bareKey, label] of [['cpp', PREVIOUS.cpp_compile_ms, 'gxx', 'C++'],
                                             ['c', PREVIOUS.c_compile_ms, 'gcc', 'C']]) {
    const id = `${lang}/native/first`;
    T_({ target: `6. ${label} hello, first compile, warm p50 (over bare compile and run: what airlock ran before)`,
         figure: warmP(id, p50), unit: 'ms', base: baseP(bareKey), baseLabel: `${baseName(bareKey)} p50`,
         kind: lang === 'cpp' ? 'ratio≤' : 'info', goal: 0.4, note: missing(id) });
    T_({ target: `6. ${label} hello, first compile, back-to-back MCP stdio p50 (over bare compile and run)`,
         figure: lat(id, 'stdio'), unit: 'ms', base: baseP(bareKey), baseLabel: `${baseName(bareKey)} p50`, kind: 'info',
         note: missing(id) });
    T_({ target: `6. ${label} hello, first compile, warm p50 (over previous figure)`, figure: warmP(id, p50), unit: 'ms',
         base: prev, baseLabel: 'previous figure (constant: `airlock run`, bench/tiers_bench.sh, 2026-12-03; not this run)',
         kind: 'info', note: missing(id) });
  }
  // 7. HTTP at concurrency 1 against stdio.
  T_({ target: '7. HTTP/stdio, python hello, warm p50 (each after the same idle gap)', figure: warmP('http:python/native', p50),
       unit: 'ms', base: warmP('python/native', p50), baseLabel: 'stdio warm p50', kind: 'ratio≤', goal: 1.1,
       note: !httpClient ? 'no HTTP server (--no-http)' : missing('python/native') });
  T_({ target: '7. HTTP/stdio, python hello, warm p50, raw JSON-RPC clients (the server alone, no SDK)',
       figure: warmP('raw-http:python/native', p50), unit: 'ms', base: warmP('raw-stdio:python/native', p50),
       baseLabel: 'raw stdio warm p50 (a server of its own)', kind: 'ratio≤', goal: 1.1,
       note: !httpClient ? 'no HTTP server (--no-http)' : missing('python/native') ?? noWarm });
  T_({ target: '7. HTTP/stdio, python hello p50 (latency section, back to back)', figure: lat('python/native', 'http'),
       unit: 'ms', base: lat('python/native', 'stdio'), baseLabel: 'stdio p50', kind: 'info',
       note: !httpClient ? 'no HTTP server (--no-http)' : missing('python/native') });
  T_({ target: '7. stdio/HTTP, python print(1) runs/s at C=1 (throughput section)', figure: T['http:1']?.perSecond,
       unit: 'runs/s', base: T['stdio:1']?.perSecond, baseLabel: 'stdio C=1',
       ratio: T['http:1'] && T['stdio:1'] ? T['stdio:1'].perSecond / T['http:1'].perSecond : NaN,
       kind: 'ratio≤', goal: 1.2, note: !httpClient ? 'no HTTP server (--no-http)' : wantPy ? null : 'python/native not measured' });

  lines.push('');
  lines.push('## Targets');
  lines.push('');
  lines.push('ratio = figure ÷ baseline (for "stdio/HTTP": stdio runs/s ÷ HTTP runs/s). Baselines were measured in this run ' +
             'except those marked "constant". met: n/a when the figure was not measured or no goal was given.');
  lines.push('');
  lines.push('| target | figure | baseline (same run) | ratio | goal | met |');
  lines.push('|---|---|---|---|---|---|');
  for (const t of targets) {
    const base = Number.isFinite(t.base) ? `${fmt(t.base, t.unit)}, ${t.baseLabel}` : t.baseLabel;
    const rt = Number.isFinite(t.ratio) ? `${t.ratio.toFixed(2)}×` : '—';
    const fig = fmt(t.figure, t.unit);
    const figNote = !t.note ? fig : fig === 'n/a' ? `n/a: ${t.note}` : `${fig} (${t.note})`;
    lines.push(`| ${t.target} | ${figNote} | ${base} | ${rt} | ${t.goalText} | ${t.met} |`);
  }
  out.targets = targets.map((t) => ({
    target: t.target, figure: Number.isFinite(t.figure) ? t.figure : null, unit: t.unit,
    baseline: Number.isFinite(t.base) ? t.base : null, baseline_label: t.baseLabel,
    ratio: Number.isFinite(t.ratio) ? t.ratio : null, goal: t.goalText, goal_kind: t.kind, goal_value: t.goal ?? null,
    met: t.met, note: t.note ?? null,
  }));

  lines.push('');
  lines.push(`warm column: ${pool ? `pool reported at ${pool.where} = ${JSON.stringify(pool.value).slice(0, 200)}; ` +
    `warm p50/p99 = sequential calls each after ${opts.warmGapMs} ms idle (the other columns are back-to-back calls, ` +
    `which may outrun the pool's refill)` : 'no pool seen (list_languages, capabilities, --config, idle jails in /proc)'}.`);
  lines.push(`load average ${load0.map((x) => x.toFixed(2)).join(' ')} (start) → ${load1.map((x) => x.toFixed(2)).join(' ')} (end); ` +
             `latency rounds ${latSeconds.toFixed(1)} s, warm ${warmSeconds.toFixed(1)} s, throughput ${tputSeconds.toFixed(1)} s, ` +
             `code mode ${cmSeconds.toFixed(1)} s, suite ${((performance.now() - started) / 1000).toFixed(1)} s`);
  if (errors.length) {
    lines.push('');
    lines.push(`errors (${errors.length}${warmupErrors ? `, ${warmupErrors} in the warm-up round` : ''}; failed samples are left out):`);
    for (const e of errors.slice(0, 20)) lines.push(`- ${e.replace(/\n/g, ' ')}`);
  }
  console.log(lines.join('\n'));
  out.load1 = load1;
  out.seconds = { latency: latSeconds, warm: warmSeconds, throughput: tputSeconds, codemode: cmSeconds,
                  suite: (performance.now() - started) / 1000 };
  if (opts.json) writeFileSync(opts.json, JSON.stringify(out, null, 2));
} finally {
  await cleanup();
}
