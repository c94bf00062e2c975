#!/usr/bin/env node
// The performance suite: one command that prints, as markdown, what a
// hello-world costs through airlock's MCP server (stdio and Streamable HTTP)
// and through `airlock run`, against the bare interpreters and bubblewrap
// measured in the same run, plus throughput under concurrency and the
// server's resident memory. Not a test: it asserts nothing about the figures.
//
//   bench/suite.sh [--runs N] [--only LANGS] [--no-http] [--json OUT]
//                  [--tput-runs N] [--config FILE] [--warm-gap-ms MS]
//
//   --runs N        rounds of the latency section (default 30; one warm-up
//                   round before them is not counted)
//   --only LANGS    comma list of languages (python,c,...); `python:wasm` or
//                   `c:native` keeps only that tier of that language
//   --no-http       skip the Streamable HTTP server (stdio only)
//   --json OUT      also write every sample and the summary to OUT
//   --tput-runs N   runs per throughput cell (default 32)
//   --config FILE   forwarded to both `airlock serve`s and to `airlock run`
//                   (e.g. a later warm-pool configuration)
//   --warm-gap-ms   idle time before each "warm" sample (default 300)
//   --warm/--no-warm  force the warm column on or off. By default it is
//                   measured when a pool shows: a "pool"/"warm" key in
//                   list_languages or the server capabilities, a "pool" in
//                   --config not disabled, or jails (airlock-init processes)
//                   alive under the idle server. Otherwise it reads
//                   "—, no pool yet". For cold figures with a pooled build,
//                   pass --config with {"pool": {"enabled": false}}.
//
// The binary is $AIRLOCK_BIN, else <repo>/build/airlock. The MCP SDK client
// comes from tests/e2e/node_modules (`scripts/setup.sh` installs it).
//
// Latency: every round runs each contender once, in an order rotated per
// round so machine noise hits them alike: run_code over stdio, over HTTP and
// `airlock run` for every (language, tier), then the bare interpreters and
// bubblewrap. Calls are sequential (one in flight). p99 of N samples is
// the largest but floor(N/100) samples: with N < 100 it is the maximum.
//
// Throughput: a fixed number of python `print(1)` runs at concurrency 1, 4
// and 8. Over stdio one session has C calls in flight; over HTTP C sessions
// (one SDK client each) call one after another. runs/s = runs / wall time.
//
// Memory: VmRSS summed over `airlock serve` and all its descendants (the
// runner child, and any jailed process still alive), read from /proc after
// start (initialized, no run yet) and after all the runs (idle again).
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
  if (msg) console.error(`suite: ${msg}`);
  console.error('usage: bench/suite.sh [--runs N] [--only LANGS] [--no-http] [--json OUT] ' +
                '[--tput-runs N] [--config FILE] [--warm | --no-warm] [--warm-gap-ms MS]');
  process.exit(2);
}
const opts = { runs: 30, tputRuns: 32, only: null, http: true, json: null, config: null, warmGapMs: 300, warm: null };
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
  ruby: 'puts "hello from ruby"',
  php: '<?php echo "hello from php\\n";',
  bash: 'echo "hello from bash"',
  c: '#include <stdio.h>\nint main(void) { printf("hello from c\\n"); return 0; }',
};
const EXT = { python: 'py', javascript: 'js', ruby: 'rb', php: 'php', bash: 'sh', c: 'c' };
const LANGS = Object.keys(HELLO);

const tmp = mkdtempSync(path.join(os.tmpdir(), 'airlock-suite-'));
for (const l of LANGS) writeFileSync(path.join(tmp, `hello.${EXT[l]}`), HELLO[l] + '\n');

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
// Baselines: [key, label, argv, language]. The first one of a language is the
// "bare" figure that language's rows are divided by; all are measured when
// that language is.
const BASELINES = [
  ['py', `python3 -c 'print(1)'`, PY && [PY, '-c', 'print(1)'], 'python'],
  ['py_is', `python3 -I -S -c pass`, PY && [PY, '-I', '-S', '-c', 'pass'], 'python'],
  ['node', `node -e 0`, which('node') && [which('node'), '-e', '0'], 'javascript'],
  ['ruby', `ruby --disable-gems -e 1`, which('ruby') && [which('ruby'), '--disable-gems', '-e', '1'], 'ruby'],
  ['ruby_gems', `ruby -e 1`, which('ruby') && [which('ruby'), '-e', '1'], 'ruby'],
  ['php', `php -r 1;`, which('php') && [which('php'), '-r', '1;'], 'php'],
  ['bash', `bash -c 'echo hi'`, which('bash') && [which('bash'), '-c', 'echo hi'], 'bash'],
  ['gcc', `gcc -O2 hello.c && ./a.out`, which('gcc') && ['/bin/sh', '-c',
    `${which('gcc')} -O2 -o ${tmp}/a.out ${tmp}/hello.c -lm && ${tmp}/a.out`], 'c'],
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

const serveArgs = (stateDir) => ['serve', '--state-dir', stateDir, ...(opts.config ? ['--config', opts.config] : [])];
const newClient = () => new Client({ name: 'airlock-suite', version: '0.0.0' }, { capabilities: {} });

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
    throw new Error(`airlock serve (stdio): ${e.message}\n${stderr}`);
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

// VmRSS (KiB) of `root` and every descendant, from /proc.
function treeRssKiB(root) {
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
const header = [
  `# airlock performance suite`,
  '',
  `machine: nproc ${os.availableParallelism?.() ?? os.cpus().length}, ${os.cpus()[0]?.model ?? '?'}, ` +
    `kernel ${kernel}, node ${process.version}, load average ${load0.map((x) => x.toFixed(2)).join(' ')}, ` +
    `${new Date().toISOString()}`,
  `airlock: ${AIRLOCK_BIN}${opts.config ? ` --config ${opts.config}` : ''}; ${opts.runs} rounds (+1 warm-up), ` +
    `throughput ${opts.tputRuns} runs per cell`,
];
console.log(header.join('\n'));

const errors = [];
const out = { machine: { nproc: os.availableParallelism?.() ?? os.cpus().length, kernel, load0, date: new Date().toISOString() },
              opts, latency: {}, baselines: {}, throughput: {}, memory: {}, errors };
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
  if (opts.config) {
    try { configPool = JSON.parse(readFileSync(opts.config, 'utf8')).pool ?? null; } catch { /* airlock says */ }
  }
  const pool = opts.warm === false ? null
    : findPool(ll.structuredContent, 'list_languages') ??
      findPool(stdio.client.getServerCapabilities?.(), 'capabilities') ??
      (configPool && configPool.enabled !== false ? { where: '--config pool', value: configPool } : null) ??
      (idle.jails > 0 ? { where: '/proc', value: `${idle.jails} jail(s) ready while idle` } : null) ??
      (opts.warm ? { where: '--warm', value: true } : null);
  out.pool = pool;

  const want = (lang, tier) => !opts.only || opts.only.includes(lang) || opts.only.includes(`${lang}:${tier}`);
  const rows = [];  // {lang, tier}
  for (const tier of ['native', 'wasm']) {
    for (const lang of LANGS) {
      if (!want(lang, tier)) continue;
      if (!offered.has(lang)) { if (tier === 'native') errors.push(`${lang}: not offered by list_languages`); continue; }
      if (!offered.get(lang).includes(tier)) continue;
      rows.push({ lang, tier });
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
    if (!argv) { errors.push(`baseline ${key}: binary not found`); return false; }
    return neededBase.has(lang);
  });

  // Samples. key → [ms]
  const S = {};
  const add = (key, r, what) => {
    if (r.error) { if (errors.length < 50) errors.push(`${what}: ${r.error}`); return; }
    (S[key] ??= []).push(r.t);
  };
  const steps = [];
  for (const { lang, tier } of rows) {
    const id = `${lang}/${tier}`;
    steps.push(async () => add(`stdio:${id}`, await runCode(stdio.client, lang, tier, HELLO[lang]), `stdio ${id}`));
    if (httpClient) steps.push(async () => add(`http:${id}`, await runCode(httpClient, lang, tier, HELLO[lang]), `http ${id}`));
    const cli = [AIRLOCK_BIN, 'run', '--lang', lang, '--isolation', tier, ...(opts.config ? ['--config', opts.config] : []),
                 path.join(tmp, `hello.${EXT[lang]}`)];
    steps.push(async () => add(`cli:${id}`, timeProcess(cli), `cli ${id}`));
  }
  for (const [key, , argv] of baselines) steps.push(async () => add(`base:${key}`, timeProcess(argv, CLEAN_ENV), `baseline ${key}`));

  // Warm-up round (not counted), then the measured rounds.
  const errorsBeforeWarmup = errors.length;
  for (const step of steps) await step();
  for (const k of Object.keys(S)) delete S[k];
  const warmupErrors = errors.length - errorsBeforeWarmup;
  const tLat = performance.now();
  for (let round = 0; round < opts.runs; round++) {
    const off = (round * 7) % steps.length;  // rotate the order per round
    for (let k = 0; k < steps.length; k++) await steps[(k + off) % steps.length]();
  }
  const latSeconds = (performance.now() - tLat) / 1000;

  // Warm: only with a pool; a gap before each sample lets it refill.
  const W = {};
  if (pool) {
    for (let i = 0; i < opts.runs; i++) {
      for (const { lang, tier } of rows) {
        await sleep(opts.warmGapMs);
        const r = await runCode(stdio.client, lang, tier, HELLO[lang]);
        if (r.error) errors.push(`warm ${lang}/${tier}: ${r.error}`); else (W[`${lang}/${tier}`] ??= []).push(r.t);
      }
    }
  }

  // Throughput: fixed total of python print(1) runs per cell.
  const T = {};
  const levels = [1, 4, 8];
  const wantPy = rows.some((r) => r.lang === 'python' && r.tier === 'native');
  const httpClients = [];
  if (wantPy) {
    if (httpClient) {
      httpClients.push(httpClient);
      while (httpClients.length < Math.max(...levels)) httpClients.push(await connectHttp(http.url));
    }
    const one = async (client) => {
      const r = await runCode(client, 'python', 'native', 'print(1)');
      if (r.error) { errors.push(`throughput: ${r.error}`); return false; }
      return true;
    };
    // C workers pulling from one counter; `clientFor(w)` picks the session.
    const cellRun = async (c, clientFor) => {
      let next = 0;
      let ok = 0;
      const busy0 = machineBusyMs();
      const t0 = performance.now();
      await Promise.all(Array.from({ length: c }, async (_, w) => {
        while (next < opts.tputRuns) { next++; if (await one(clientFor(w))) ok++; }
      }));
      const s = (performance.now() - t0) / 1000;
      const cpuMsPerRun = ok ? (machineBusyMs() - busy0) / ok : null;
      return { runs: opts.tputRuns, ok, seconds: s, perSecond: ok / s, cpuMsPerRun };
    };
    // What one bare interpreter start costs the machine, the floor of a run
    // that gets a fresh interpreter (pre-started or not).
    {
      const busy0 = machineBusyMs();
      const n = 30;
      for (let i = 0; i < n; i++) spawnSync('/usr/bin/python3', ['-I', '-c', 'print(1)'], { env: CLEAN_ENV });
      T.bareCpuMsPerRun = (machineBusyMs() - busy0) / n;
    }
    for (const c of levels) {
      T[`stdio:${c}`] = await cellRun(c, () => stdio.client);
      if (httpClient) T[`http:${c}`] = await cellRun(c, (w) => httpClients[w]);
    }
  }

  await sleep(1000);  // idle again
  out.memory.end = { stdio: treeRssKiB(stdio.pid), http: http ? treeRssKiB(http.pid) : null };
  const load1 = os.loadavg();

  // ---- the tables ----------------------------------------------------------
  const lines = [];
  const baseFor = (lang) => p50(S[`base:${BASELINES.find((b) => b[3] === lang)?.[0]}`] ?? []);
  lines.push('');
  lines.push(`## run_code hello world, sequential (ms; p50 and p99 over ${opts.runs} calls; × = over the bare interpreter's p50)`);
  lines.push('');
  const hcols = httpClient ? ' http p50 | http p99 |' : '';
  lines.push(`| language | tier | stdio p50 | stdio p99 |${hcols} airlock run p50 | bare p50 | warm p50 | warm p99 |`);
  lines.push(`|---|---|---|---|${httpClient ? '---|---|' : ''}---|---|---|---|`);
  for (const { lang, tier } of rows) {
    const id = `${lang}/${tier}`;
    const base = baseFor(lang);
    const s = S[`stdio:${id}`] ?? [];
    const h = S[`http:${id}`] ?? [];
    const c = S[`cli:${id}`] ?? [];
    const warm = pool ? cell(p50(W[id] ?? []), base) : '—, no pool yet';
    const warm99 = pool ? cell(p99(W[id] ?? []), base) : '—';
    const hc = httpClient ? ` ${cell(p50(h), base)} | ${cell(p99(h), base)} |` : '';
    lines.push(`| ${lang} | ${tier} | ${cell(p50(s), base)} | ${cell(p99(s), base)} |${hc} ${cell(p50(c), base)} | ${ms(base)} | ${warm} | ${warm99} |`);
    out.latency[id] = {
      stdio: { p50: p50(s), p99: p99(s), samples: s }, http: { p50: p50(h), p99: p99(h), samples: h },
      cli: { p50: p50(c), p99: p99(c), samples: c }, bare_p50: base,
      warm: pool ? { p50: p50(W[id] ?? []), p99: p99(W[id] ?? []), samples: W[id] ?? [] } : null,
    };
  }
  lines.push('');
  lines.push(`## baselines, same rounds, clean environment (PATH=/usr/bin:/bin HOME LANG only) (ms; × = over python3 -c 'print(1)')`);
  lines.push('');
  lines.push('airlock runs python3 -I main.py, node main.js, ruby --disable-gems main.rb, php main.php, bash main.sh, gcc -O2 then the binary; ' +
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
    for (const tr of httpClient ? ['stdio', 'http'] : ['stdio']) {
      const one = T[`${tr}:1`]?.perSecond;
      const cells = levels.map((c) => {
        const x = T[`${tr}:${c}`];
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
               `start at most ${(os.cpus().length * 1000 / T.bareCpuMsPerRun).toFixed(0)} fresh interpreters per second.`);
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
  lines.push('');
  lines.push(`warm column: ${pool ? `pool reported at ${pool.where} = ${JSON.stringify(pool.value).slice(0, 200)}; ` +
    `warm p50/p99 = sequential calls each after ${opts.warmGapMs} ms idle (the other columns are back-to-back calls, ` +
    `which may outrun the pool's refill)` : 'no pool seen (list_languages, capabilities, --config, idle jails in /proc)'}.`);
  lines.push(`load average ${load0.map((x) => x.toFixed(2)).join(' ')} (start) → ${load1.map((x) => x.toFixed(2)).join(' ')} (end); ` +
             `latency rounds ${latSeconds.toFixed(1)} s, suite ${((performance.now() - started) / 1000).toFixed(1)} s`);
  if (errors.length) {
    lines.push('');
    lines.push(`errors (${errors.length}${warmupErrors ? `, ${warmupErrors} in the warm-up round` : ''}; failed samples are left out):`);
    for (const e of errors.slice(0, 20)) lines.push(`- ${e.replace(/\n/g, ' ')}`);
  }
  console.log(lines.join('\n'));
  out.load1 = load1;
  if (opts.json) writeFileSync(opts.json, JSON.stringify(out, null, 2));
} finally {
  await cleanup();
}
