#!/usr/bin/env node
// Pause, resume and fork benchmark (docs/sessions.md "Pause, resume and
// fork"): what a paused WASM-tier Python session costs and how long it
// takes to come back, through airlock's MCP server over stdio with the SDK
// client. Not a test: it asserts nothing about the figures.
//
//   node bench/checkpoints.mjs [--runs N] [--paused K] [--json OUT]
//
//   --runs N    rounds (default 30): each pauses the session, then times the
//               first `print(1)` after it (restore + cell), a second one
//               (warm, in the restored jail), a fork_session and a
//               `print(1)` in the fork; then closes the fork
//   --paused K  sessions opened, given the same state and paused one after
//               another (default 100): the server tree's memory (PSS) before
//               and with all K paused, what one more live session adds, and
//               the image directory's size
//
// The session's state: `import json, decimal, datetime, re, collections,
// statistics` and a 100 000-element list. The image directory is the
// runner's private one ($TMPDIR or /tmp, airlock-session-images-*).
// The binary is $AIRLOCK_BIN, else <repo>/build/airlock.
import { readFileSync, readdirSync, statSync, existsSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
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

const opts = { runs: 30, paused: 100, json: '' };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  const v = process.argv[i + 1];
  if (a === '--runs') { opts.runs = Number(v); i++; } else if (a === '--paused') { opts.paused = Number(v); i++; } else if (a === '--json') { opts.json = v; i++; } else {
    console.error(`usage: node bench/checkpoints.mjs [--runs N] [--paused K] [--json OUT]`);
    process.exit(2);
  }
}

const quantile = (xs, q) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
};
const fmt = (x) => (Number.isFinite(x) ? (x >= 100 ? x.toFixed(0) : x.toFixed(1)) : '—');
const MiB = (b) => (b / 1048576).toFixed(1);

const tmp = mkdtempSync(path.join(os.tmpdir(), 'airlock-checkpoints-bench-'));
const configPath = path.join(tmp, 'config.json');
writeFileSync(configPath, JSON.stringify({
  sessions: { max_per_caller: Math.min(1024, Math.max(16, opts.paused + 4)), max_total: Math.max(16, opts.paused + 8), pause_after_s: 0 },
  // No warm pool: its jails would blur the memory figures.
  pool: { enabled: false },
}));

const SETUP = 'import json, decimal, datetime, re, collections, statistics\nrows = list(range(100000))\nprint(len(rows))';

// PSS (KiB) of `root` and every descendant.
function treePssKiB(root) {
  const children = new Map();
  for (const ent of readdirSync('/proc')) {
    if (!/^\d+$/.test(ent)) continue;
    try {
      const s = readFileSync(`/proc/${ent}/stat`, 'utf8');
      const ppid = Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(ent));
    } catch { /* gone */ }
  }
  let kib = 0;
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop();
    try {
      const m = /^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      if (m) kib += Number(m[1]);
    } catch { /* gone */ }
    todo.push(...(children.get(pid) ?? []));
  }
  return kib;
}

function imageDirs() {
  const base = process.env.TMPDIR && path.isAbsolute(process.env.TMPDIR) ? process.env.TMPDIR : '/tmp';
  return readdirSync(base).filter((d) => d.startsWith('airlock-session-images-')).map((d) => path.join(base, d));
}
function imageBytes(dirs) {
  let total = 0;
  let files = 0;
  for (const d of dirs) {
    try {
      for (const f of readdirSync(d)) { total += statSync(path.join(d, f)).size; files++; }
    } catch { /* gone */ }
  }
  return { total, files };
}

const transport = new StdioClientTransport({
  command: AIRLOCK_BIN, args: ['serve', '--state-dir', path.join(tmp, 'state'), '--config', configPath], stderr: 'pipe',
});
let stderr = '';
transport.stderr?.on('data', (d) => { if (stderr.length < 65536) stderr += d; });
const client = new Client({ name: 'airlock-checkpoints-bench', version: '0.0.0' }, { capabilities: {} });
const before = new Set(imageDirs());
await client.connect(transport);
const serverPid = transport.pid;

async function call(name, args) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
  return r.structuredContent ?? JSON.parse(r.content[0].text);
}
async function open() {
  return (await call('open_session', { language: 'python', isolation: 'wasm' })).session_id;
}
async function timed(name, args) {
  const t = performance.now();
  const out = await call(name, args);
  return [performance.now() - t, out];
}

const samples = { pause: [], restore_call: [], warm_call: [], fork: [], fork_call: [] };
let mine = [];
let imageSize = 0;
try {
  const id = await open();
  await call('run_code', { session_id: id, code: SETUP });
  for (let i = 0; i < 3; i++) await call('run_code', { session_id: id, code: 'print(1)' });
  mine = imageDirs().filter((d) => !before.has(d));
  for (let r = 0; r < opts.runs; r++) {
    samples.pause.push((await timed('pause_session', { session_id: id }))[0]);
    if (r === 0) imageSize = imageBytes(mine).total;
    samples.restore_call.push((await timed('run_code', { session_id: id, code: 'print(len(rows))' }))[0]);
    samples.warm_call.push((await timed('run_code', { session_id: id, code: 'print(1)' }))[0]);
    const [forkMs, forked] = await timed('fork_session', { session_id: id });
    samples.fork.push(forkMs);
    samples.fork_call.push((await timed('run_code', { session_id: forked.session_id, code: 'print(len(rows))' }))[0]);
    await call('close_session', { session_id: forked.session_id });
  }
  await call('close_session', { session_id: id });

  console.log(`WASM Python session (${SETUP.split('\n')[0]}; a 100 000-element list), ${opts.runs} rounds, stdio:`);
  console.log(`  image on disk: ${MiB(imageSize)} MiB`);
  console.log('  what                                  p50 ms   p90 ms');
  const row = (label, xs) => console.log(`  ${label.padEnd(36)} ${fmt(quantile(xs, 0.5)).padStart(7)}  ${fmt(quantile(xs, 0.9)).padStart(7)}`);
  row('pause_session', samples.pause);
  row('first run_code after it (restore)', samples.restore_call);
  row('next run_code (warm, baseline)', samples.warm_call);
  row('fork_session (snapshot + restore)', samples.fork);
  row('first run_code in the fork', samples.fork_call);
  console.log(`  restore cost over a warm call (p50): ${fmt(quantile(samples.restore_call, 0.5) - quantile(samples.warm_call, 0.5))} ms`);

  // Many paused sessions: each opened, given the state and paused in turn
  // (one live at a time), then the server tree's memory against before,
  // and the images' disk; one more left live, for what a live one costs.
  const ids = [];
  await new Promise((r) => setTimeout(r, 1000));
  const pss0 = treePssKiB(serverPid);
  const disk0 = imageBytes(imageDirs()).total;
  const t0 = performance.now();
  for (let i = 0; i < opts.paused; i++) {
    const s = await open();
    await call('run_code', { session_id: s, code: SETUP });
    await call('pause_session', { session_id: s });
    ids.push(s);
  }
  const perSessionMs = (performance.now() - t0) / opts.paused;
  await new Promise((r) => setTimeout(r, 1000));
  const pssPaused = treePssKiB(serverPid);
  const disk1 = imageBytes(imageDirs());
  const live = await open();
  await call('run_code', { session_id: live, code: SETUP });
  ids.push(live);
  const pssLive = treePssKiB(serverPid);
  const perDisk = (disk1.total - disk0) / opts.paused;
  console.log(`\n${opts.paused} paused sessions (same state; open + cell + pause ${fmt(perSessionMs)} ms each):`);
  console.log(`  server tree PSS: ${MiB(pss0 * 1024)} MiB before -> ${MiB(pssPaused * 1024)} MiB with them all paused ` +
              `(${((pssPaused - pss0) * 1024 / opts.paused / 1024).toFixed(1)} KiB each)`);
  console.log(`  one more session, live: +${MiB((pssLive - pssPaused) * 1024)} MiB`);
  console.log(`  images: ${disk1.files} files, ${MiB(disk1.total - disk0)} MiB (${MiB(perDisk)} MiB each)`);
  for (const s of ids) await call('close_session', { session_id: s });
  if (opts.json) writeFileSync(opts.json, JSON.stringify({ samples, imageSize, paused: { n: opts.paused, pss0, pssPaused, pssLive, disk: disk1.total - disk0, perSessionMs } }, null, 2));
} catch (e) {
  console.error(`failed: ${e.message}\n${stderr}`);
  process.exitCode = 1;
} finally {
  if (process.env.BENCH_STDERR) console.error(stderr);
  await client.close().catch(() => {});
  rmSync(tmp, { recursive: true, force: true });
}
