// Operating airlock (issue 19): /healthz and /readyz, and /metrics parsed by
// a real Prometheus parser (Debian's python3-prometheus-client), with
// counters that move when the official MCP SDK client makes real runs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { connectHttp, connectStdio, runCode, startHttpServer, waitFor } from './helpers.mjs';

const PARSER = `
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = {}
for fam in text_string_to_metric_families(sys.stdin.read()):
    out[fam.name] = {"type": fam.type, "samples": [[s.name, s.labels, s.value] for s in fam.samples]}
print(json.dumps(out))
`;

// /metrics through the real parser: {family: {type, samples: [[name, labels, value]]}}.
async function scrape(base) {
  const res = await fetch(`${base}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const r = spawnSync('/usr/bin/python3', ['-c', PARSER], { input: text, encoding: 'utf8' });
  assert.equal(r.status, 0, `the Prometheus parser rejected /metrics: ${r.stderr}\n${text}`);
  return JSON.parse(r.stdout);
}

function sample(families, family, name, labels = {}) {
  const f = families[family];
  if (!f) return undefined;
  const s = f.samples.find(([n, l]) => n === name && Object.entries(labels).every(([k, v]) => l[k] === v));
  return s?.[2];
}

describe('operations: health, readiness, metrics', () => {
  let server;
  let base;
  before(async () => {
    server = await startHttpServer();
    base = new URL(server.url).origin;
  });
  after(async () => { await server?.stop(); });

  it('/healthz and /readyz answer without credentials and say nothing else', async () => {
    const health = await fetch(`${base}/healthz`);
    assert.equal(health.status, 200);
    assert.equal((await health.text()).trim(), 'ok');
    // Ready once the runner is up (and the pool has settled).
    let ready;
    for (let i = 0; i < 100; i++) {
      ready = await fetch(`${base}/readyz`);
      if (ready.status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(ready.status, 200);
    assert.equal((await ready.text()).trim(), 'ready');
    const post = await fetch(`${base}/healthz`, { method: 'POST' });
    assert.notEqual(post.status, 200);
  });

  it('/metrics parses and its counters move with real runs', async () => {
    const before = await scrape(base);
    assert.equal(before.airlock_runs?.type, 'counter', Object.keys(before).join(' '));
    const okBefore = sample(before, 'airlock_runs', 'airlock_runs_total', { language: 'python', status: 'ok' }) ?? 0;
    const c = await connectHttp(server.url);
    try {
      for (let i = 0; i < 3; i++) {
        const r = await runCode(c.client, { language: 'python', code: 'print(1)' });
        assert.equal(r.structuredContent.status, 'ok', JSON.stringify(r.structuredContent));
      }
      const bad = await runCode(c.client, { language: 'python', code: 'import time\ntime.sleep(5)', timeout_ms: 300 });
      assert.equal(bad.structuredContent.status, 'timeout');
    } finally {
      await c.close();
    }
    const now = await scrape(base);
    assert.equal(sample(now, 'airlock_runs', 'airlock_runs_total', { language: 'python', tier: 'native', mode: 'run', status: 'ok' }),
      okBefore + 3);
    assert.equal(sample(now, 'airlock_runs', 'airlock_runs_total', { language: 'python', status: 'timeout' }), 1);
    assert.equal(now.airlock_run_seconds?.type, 'histogram');
    assert.ok(sample(now, 'airlock_run_seconds', 'airlock_run_seconds_count', { phase: 'total' }) >= 4);
    assert.ok(sample(now, 'airlock_run_seconds', 'airlock_run_seconds_count', { phase: 'program' }) >= 3);
    assert.equal(sample(now, 'airlock_runner_up', 'airlock_runner_up'), 1);
    assert.ok(sample(now, 'airlock_process_resident_memory_bytes', 'airlock_process_resident_memory_bytes') > 1e6);
    assert.ok((sample(now, 'airlock_audit_writes', 'airlock_audit_writes_total', { kind: 'run', result: 'ok' }) ?? 0) >= 4,
      'every run is written to the audit log');
    const hits = sample(now, 'airlock_pool_hits', 'airlock_pool_hits_total');
    assert.ok(hits >= 1, `pooled runs are counted (hits ${hits})`);
    const shapes = now.airlock_pool_shape_hits?.samples ?? [];
    assert.ok(shapes.some(([, l, v]) => l.shape.startsWith('python/native') && v >= 1),
      `per-shape pool figures: ${JSON.stringify(shapes)}`);
  });
});

describe('operations: --metrics HOST:PORT, a listener of its own', () => {
  it('serves /metrics for a stdio server, and counts its runs', async () => {
    const s = await connectStdio({ args: ['--metrics', '127.0.0.1:0'] });
    try {
      assert.ok(await waitFor(() => /metrics at (http:\/\/127\.0\.0\.1:\d+)\/metrics/.test(s.stderr()), 10000), s.stderr());
      const base = /metrics at (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(s.stderr())[1];
      const r = await runCode(s.client, { language: 'bash', code: 'echo hi' });
      assert.equal(r.structuredContent.status, 'ok');
      const m = await scrape(base);
      assert.equal(sample(m, 'airlock_runs', 'airlock_runs_total', { language: 'bash', status: 'ok' }), 1);
      const other = await fetch(`${base}/mcp`);
      assert.equal(other.status, 404, 'it serves nothing but /metrics');
    } finally {
      await s.close();
    }
  });

  it('moves /metrics off the HTTP listener', async () => {
    const server = await startHttpServer({ args: ['--metrics', '127.0.0.1:0'] });
    try {
      const base = new URL(server.url).origin;
      assert.equal((await fetch(`${base}/metrics`)).status, 404);
      const m = /metrics at (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(server.stderr());
      assert.ok(m, server.stderr());
      assert.equal((await fetch(`${m[1]}/metrics`)).status, 200);
    } finally {
      await server.stop();
    }
  });
});

describe('operations: a graceful stop (SIGTERM)', () => {
  let tmp;
  let config;
  before(() => {
    tmp = mkdtempSync(path.join(tmpdir(), 'airlock-ops-'));
    config = path.join(tmp, 'airlock.json');
    writeFileSync(config, JSON.stringify({ server: { state_dir: path.join(tmp, 'state'), shutdown_grace_s: 3 } }));
  });
  after(() => { if (tmp) rmSync(tmp, { recursive: true, force: true }); });

  // Resolves with {code, signal} when the server process exits.
  function exited(proc) {
    return new Promise((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve({ code: proc.exitCode, signal: proc.signalCode });
      proc.once('exit', (code, signal) => resolve({ code, signal }));
    });
  }

  it('a call in flight finishes within the grace period; new requests are refused meanwhile', async () => {
    const server = await startHttpServer({ args: ['--config', config] });
    const base = new URL(server.url).origin;
    const c = await connectHttp(server.url);
    try {
      const call = runCode(c.client, { language: 'python', code: 'import time\ntime.sleep(1.5)\nprint("finished")', timeout_ms: 20000 });
      await new Promise((r) => setTimeout(r, 500));
      const gone = exited(server.proc);
      server.proc.kill('SIGTERM');
      assert.ok(await waitFor(async () => (await fetch(`${base}/readyz`).catch(() => null))?.status === 503, 2000),
        'not ready while draining');
      const refused = await fetch(server.url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) }).catch(() => null);
      assert.ok(refused === null || refused.status === 503, `a new request while draining: ${refused?.status}`);
      const r = await call;
      assert.equal(r.structuredContent.status, 'ok', JSON.stringify(r.structuredContent));
      assert.equal(r.structuredContent.stdout, 'finished\n');
      const { code, signal } = await gone;
      assert.equal(signal, null);
      assert.equal(code, 0);
      assert.match(server.stderr(), /stopped cleanly/);
      assert.doesNotMatch(server.stderr(), /exited unexpectedly/);
    } finally {
      await c.close().catch(() => {});
      await server.stop();
    }
  });

  it('a call still running after the grace period is cancelled, and the stop is clean', async () => {
    const server = await startHttpServer({ args: ['--config', config] });
    const c = await connectHttp(server.url);
    try {
      const started = Date.now();
      const call = runCode(c.client, { language: 'python', code: 'import time\ntime.sleep(60)', timeout_ms: 60000 })
        .catch((e) => ({ error: e }));
      await new Promise((r) => setTimeout(r, 700));
      const gone = exited(server.proc);
      server.proc.kill('SIGTERM');
      const r = await call;
      const { code, signal } = await gone;
      assert.ok(Date.now() - started < 20000, 'cancelled after the 3 s grace, not at its own 60 s clock');
      assert.ok(r.error || r.structuredContent?.error_code === 'cancelled' || r.isError, JSON.stringify(r));
      assert.equal(signal, null, 'it stopped on SIGTERM without SIGKILL');
      assert.equal(code, 0);
      assert.match(server.stderr(), /cancelled 1 call\(s\) still running after the grace period/);
      assert.match(server.stderr(), /stopped cleanly/);
      assert.doesNotMatch(server.stderr(), /exited unexpectedly/);
    } finally {
      await c.close().catch(() => {});
      await server.stop();
    }
  });
});

describe('operations: --log-format json', () => {
  it('every stderr line is one JSON object, with one line per tool call', async () => {
    const server = await startHttpServer({ args: ['--log-format', 'json'] });
    let stopped = false;
    try {
      const c = await connectHttp(server.url);
      const r = await runCode(c.client, { language: 'python', code: 'print(1)' });
      assert.equal(r.structuredContent.status, 'ok');
      // A refused call (an unknown session): its structuredContent says
      // status internal_error; the log line says error + the error code.
      const gone = await c.client.callTool({ name: 'run_code',
        arguments: { language: 'python', code: 'print(2)', session_id: 's_' + '0'.repeat(32) } });
      assert.equal(gone.structuredContent.error_code, 'E_SESSION_NOT_FOUND', JSON.stringify(gone));
      await c.close();
      const exited = new Promise((resolve) => server.proc.once('exit', resolve));
      server.proc.kill('SIGTERM');
      await exited;
      stopped = true;
      const lines = server.stderr().split('\n').filter((l) => l.length > 0);
      assert.ok(lines.length >= 3, server.stderr());
      const objects = lines.map((l) => {
        try { return JSON.parse(l); } catch { assert.fail(`not a JSON line: ${l}`); }
      });
      for (const o of objects) {
        assert.equal(typeof o.time, 'string');
        assert.match(o.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        assert.ok(['info', 'warning', 'error'].includes(o.level), JSON.stringify(o));
        assert.equal(typeof o.event, 'string');
      }
      // The documented statuses only (docs/deploy.md); an error's reason in error_code.
      const documented = ['ok', 'exit_nonzero', 'timeout', 'memory_limit', 'output_limit', 'compile_error',
        'killed_signal', 'error', 'protocol_error'];
      for (const o of objects.filter((x) => x.event === 'tool_call')) {
        assert.ok(documented.includes(o.status), JSON.stringify(o));
      }
      const refused = objects.find((o) => o.event === 'tool_call' && o.error_code === 'E_SESSION_NOT_FOUND');
      assert.ok(refused, server.stderr());
      assert.equal(refused.status, 'error');
      const call = objects.find((o) => o.event === 'tool_call');
      assert.ok(call, server.stderr());
      assert.equal(call.tool, 'run_code');
      assert.equal(call.status, 'ok');
      assert.match(call.run_id, /^r_[0-9a-f]{16}$/);
      assert.equal(call.endpoint, 'default');
      assert.equal(typeof call.user, 'string');
      assert.ok(call.duration_ms >= 0);
      assert.ok(objects.some((o) => o.message === 'stopped cleanly'), server.stderr());
    } finally {
      if (!stopped) await server.stop();
    }
  });
});

describe('operations: SIGHUP', () => {
  it('re-reads the keys and names the configuration changes that need a restart', async () => {
    const tmp = mkdtempSync(path.join(tmpdir(), 'airlock-hup-'));
    const config = path.join(tmp, 'airlock.json');
    const write = (threads) => writeFileSync(config, JSON.stringify({ server: { state_dir: path.join(tmp, 'state'), http: { threads } } }));
    write(32);
    const server = await startHttpServer({ args: ['--config', config] });
    try {
      server.proc.kill('SIGHUP');
      assert.ok(await waitFor(() => /SIGHUP: .*the configuration is unchanged/.test(server.stderr()), 5000), server.stderr());
      write(48);
      server.proc.kill('SIGHUP');
      assert.ok(await waitFor(() => /need a restart to take effect: server\.http\.threads/.test(server.stderr()), 5000),
        server.stderr());
      writeFileSync(config, '{"server": {"bogus": 1}}');
      server.proc.kill('SIGHUP');
      assert.ok(await waitFor(() => /warning: SIGHUP: .*the configuration has errors, nothing changes/.test(server.stderr()), 5000), server.stderr());
      // Still serving, and still the same server.
      const c = await connectHttp(server.url);
      const r = await runCode(c.client, { language: 'bash', code: 'echo still' });
      assert.equal(r.structuredContent.stdout, 'still\n');
      await c.close();
      assert.equal(server.proc.exitCode, null);
    } finally {
      await server.stop();
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

// The children of `pid` (every thread's), and the cgroup directories whose
// name starts with airlock-<pid> (the runner's cgroup parent and leaves,
// jail/cgroup.cc), looked for a few levels below /sys/fs/cgroup.
function childrenOf(pid) {
  const out = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      out.push(...readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
    }
  } catch {
    // gone
  }
  return out;
}
function airlockCgroupsOf(pid, dir = '/sys/fs/cgroup', depth = 0, found = []) {
  let entries = [];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return found;
  }
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const p = path.join(dir, e.name);
    if (e.name === `airlock-${pid}` || e.name.startsWith(`airlock-${pid}-`)) found.push(p);
    else if (depth < 5) airlockCgroupsOf(pid, p, depth + 1, found);
  }
  return found;
}
const isLive = (pid) => {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
};

describe('operations: SIGTERM over stdio', () => {
  it('stops the runner cleanly: no cgroup directory of it is left', async () => {
    const c = await connectStdio();
    try {
      const r = await runCode(c.client, { language: 'bash', code: 'echo hi' });
      assert.equal(r.structuredContent.stdout, 'hi\n');
      const server = c.transport.pid;
      const runner = childrenOf(server).find((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes('runner');
        } catch {
          return false;
        }
      });
      assert.ok(runner, `no runner child of airlock serve ${server}`);
      const cgroups = airlockCgroupsOf(runner);
      assert.ok(cgroups.length > 0, `the runner ${runner} made no cgroup directory to check`);
      process.kill(server, 'SIGTERM');
      assert.ok(await waitFor(() => !isLive(server) && !isLive(runner), 15000), c.stderr());
      assert.match(c.stderr(), /airlock: Terminated: stopping/);
      const left = airlockCgroupsOf(runner);
      assert.deepEqual(left, [], `left behind: ${left.join(', ')}\n${c.stderr()}`);
    } finally {
      await c.close().catch(() => {});
    }
  });
});
