// The driver of bench/scaleout.sh (which sets up the gateways and runner
// hosts); MCP SDK client over Streamable HTTP.
//
//   node bench/scaleout.mjs throughput --url 1=URL --url 2=URL --url 3=URL [--runs 60] [--rounds 2] [--concurrency 6]
//   node bench/scaleout.mjs latency --url remote=URL --url local=URL [--runs 40]
//
// throughput: a CPU-bound python run (~0.1-0.2 s of CPU), --runs per URL at
// --concurrency, split over --rounds rounds that visit the URLs in turn
// (rotated each round); runs/s per URL and the ratio to the first.
// latency: python print(1), one at a time, alternating between the URLs;
// medians, p90 and the difference to the last (the local runner).
// Markdown on stdout; --json FILE merges the figures into FILE.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';

import { connectHttp, runCode } from '../tests/e2e/helpers.mjs';

const argv = process.argv.slice(2);
const mode = argv.shift();
const opt = { runs: 0, rounds: 2, concurrency: 6, urls: [], json: '', cg: '', state: '' };
while (argv.length) {
  const a = argv.shift();
  const v = argv.shift();
  if (a === '--url') {
    const i = v.indexOf('=');
    opt.urls.push({ label: v.slice(0, i), url: v.slice(i + 1) });
  } else if (['--runs', '--rounds', '--concurrency'].includes(a)) {
    opt[a.slice(2)] = Number(v);
  } else if (['--json', '--cg', '--state'].includes(a)) {
    opt[a.slice(2)] = v;
  } else {
    console.error(`unknown argument ${a}`);
    process.exit(2);
  }
}
if (!['throughput', 'latency'].includes(mode) || opt.urls.length < 2) {
  console.error('usage: scaleout.mjs throughput|latency --url LABEL=URL ... [--runs N] [--rounds N] [--concurrency N] [--json FILE]');
  process.exit(2);
}

const CPU_CODE = 's = 0\nfor i in range(1000000):\n    s += i * i\nprint(s)';
const CPU_OUT = '333332833333500000\n';

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');
const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');

function machine() {
  const cpus = os.cpus();
  return `${cpus.length} × ${cpus[0]?.model ?? '?'}, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, Linux ${os.release()}`;
}

let failuresShown = 0;
async function timedRun(client, code, expect) {
  const t0 = performance.now();
  const r = await runCode(client, { language: 'python', code, timeout_ms: 60000 });
  const ms = performance.now() - t0;
  const sc = r.structuredContent ?? {};
  const ok = sc.status === 'ok' && sc.stdout === expect;
  if (!ok && failuresShown++ < 3) {
    console.error(`scaleout: a run failed: ${JSON.stringify(sc).slice(0, 800)}`);
  }
  return { ms, ok, host: sc.runner_host || 'local', wall: sc.wall_ms, err: ok ? '' : `${sc.status}/${sc.error_code}` };
}

// `n` runs at `concurrency`; resolves {wallMs, samples}.
async function batch(client, n, concurrency, code, expect) {
  let next = 0;
  const samples = [];
  const t0 = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, async () => {
    while (next < n) {
      next++;
      samples.push(await timedRun(client, code, expect));
    }
  }));
  return { wallMs: performance.now() - t0, samples };
}

function mergeJson(key, value) {
  if (!opt.json) return;
  const doc = existsSync(opt.json) ? JSON.parse(readFileSync(opt.json, 'utf8')) : {};
  doc.machine = machine();
  doc[key] = value;
  writeFileSync(opt.json, `${JSON.stringify(doc, null, 1)}\n`);
}

const conns = [];
for (const u of opt.urls) {
  const c = await connectHttp(u.url);
  conns.push({ ...u, client: c.client, close: () => c.close() });
}

if (mode === 'throughput') {
  const runs = opt.runs || 60;
  const perRound = Math.ceil(runs / opt.rounds);
  const acc = Object.fromEntries(conns.map((c) => [c.label, { wallMs: 0, samples: [] }]));
  // Warm-up: every host's pool and the gateways' connections.
  for (const c of conns) await batch(c.client, opt.concurrency * 2, opt.concurrency, CPU_CODE, CPU_OUT);
  for (let round = 0; round < opt.rounds; round++) {
    const order = conns.map((_, i) => conns[(i + round) % conns.length]);
    for (const c of order) {
      const b = await batch(c.client, perRound, opt.concurrency, CPU_CODE, CPU_OUT);
      acc[c.label].wallMs += b.wallMs;
      acc[c.label].samples.push(...b.samples);
    }
  }
  const rows = conns.map((c) => {
    const a = acc[c.label];
    const hosts = {};
    for (const s of a.samples) hosts[s.host] = (hosts[s.host] ?? 0) + 1;
    return {
      hosts: c.label,
      runs: a.samples.length,
      failed: a.samples.filter((s) => !s.ok).length,
      runs_per_s: a.samples.length / (a.wallMs / 1000),
      p50_ms: median(a.samples.map((s) => s.ms)),
      p90_ms: quantile(a.samples.map((s) => s.ms), 0.9),
      per_host: hosts,
    };
  });
  const base = rows[0].runs_per_s;
  console.log(`### Scale-out: runs/s behind one gateway\n`);
  console.log(`${machine()}; each runner host limited to cpu ${opt.cg}; state ${opt.state}; `
    + `CPU-bound python (a 10^6-step loop), ${opt.concurrency} concurrent, ${opt.rounds} interleaved rounds\n`);
  console.log('| runner hosts | runs | failed | runs/s | × 1 host | p50 ms | p90 ms | runs per host |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const spread = Object.entries(r.per_host).sort().map(([h, n]) => `${h}: ${n}`).join(', ');
    console.log(`| ${r.hosts} | ${r.runs} | ${r.failed} | ${f2(r.runs_per_s)} | ${f2(r.runs_per_s / base)} | ${f1(r.p50_ms)} | ${f1(r.p90_ms)} | ${spread} |`);
  }
  console.log('');
  mergeJson('throughput', { concurrency: opt.concurrency, cpu_limit: opt.cg, state: opt.state, rows });
} else {
  const runs = opt.runs || 40;
  const ms = Object.fromEntries(conns.map((c) => [c.label, []]));
  const wall = Object.fromEntries(conns.map((c) => [c.label, []]));
  const failed = Object.fromEntries(conns.map((c) => [c.label, 0]));
  for (const c of conns) for (let i = 0; i < 5; i++) await timedRun(c.client, 'print(1)', '1\n');  // warm-up
  for (let i = 0; i < runs; i++) {
    const order = i % 2 ? [...conns].reverse() : conns;
    for (const c of order) {
      const s = await timedRun(c.client, 'print(1)', '1\n');
      if (s.ok) { ms[c.label].push(s.ms); wall[c.label].push(s.wall); } else failed[c.label]++;
    }
  }
  const ref = conns[conns.length - 1].label;
  const refP50 = median(ms[ref]);
  console.log(`### Latency of a remote run over a local one\n`);
  console.log(`${machine()}; python print(1), one at a time, ${runs} per row, alternating; state ${opt.state}\n`);
  console.log(`| runner | runs | failed | p50 ms | p90 ms | p50 − ${ref} ms | × ${ref} | run's own wall_ms p50 |`);
  console.log('|---|---|---|---|---|---|---|---|');
  const rows = conns.map((c) => {
    const p50 = median(ms[c.label]);
    const row = { runner: c.label, runs: ms[c.label].length, failed: failed[c.label], p50_ms: p50,
      p90_ms: quantile(ms[c.label], 0.9), added_ms: p50 - refP50, ratio: p50 / refP50, run_wall_p50_ms: median(wall[c.label]) };
    console.log(`| ${row.runner} | ${row.runs} | ${row.failed} | ${f1(row.p50_ms)} | ${f1(row.p90_ms)} | ${f1(row.added_ms)} | ${f2(row.ratio)} | ${f1(row.run_wall_p50_ms)} |`);
    return row;
  });
  console.log('');
  mergeJson('latency', { state: opt.state, rows });
}

for (const c of conns) await c.close().catch(() => {});
