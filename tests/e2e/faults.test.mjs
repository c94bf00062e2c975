// Fault injection: real faults against a real `airlock serve`, each asserting
// the documented outcome.
//
//   1. the runner process SIGKILLed mid-run        → runner_unavailable, restart, no leak
//   2. a connector killed mid-call / one that hangs → a bounded E_TOOL_ERROR, the program goes on
//   3. the audit log on a full disk / locked        → E_AUDIT_UNAVAILABLE (fail-closed), then recovery
//   4. SIGSTOP inside a jail                        → the wall clock still ends the run (timeout)
//   5. an HTTP client that vanishes mid-response    → the run is cancelled, the server stays healthy
//   6. 1000 idle HTTP sessions                      → a fresh client is served at once; max_sessions, idle reaping
//   7. slowloris (2 × server.http.threads)          → a normal client is still served
//   8. slow request bodies (48 conns, + --metrics)  → /healthz, MCP and /metrics still served; 408 at the deadline
//   9. a flood of failed console sign-ins          → 429s, a handful of audit rows, another address signs in
//
// Needs root for the tmpfs of the disk-full case (skipped otherwise), and
// /usr/bin/python3 (Debian's, with sqlite3) for the lock case.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync,
} from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
  AIRLOCK_BIN, REPO, connectHttp, pidsWithMarker, runCode, sleep, startHttpServer, textOf, uniqueMarker,
  waitFor,
} from './helpers.mjs';

const TEST_SERVER = path.join(REPO, 'tests', 'fixtures', 'mcp-servers', 'test-server.mjs');
const PROTOCOL = '2025-11-25';
const ACCEPT = 'application/json, text/event-stream';
const INIT = JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'faults', version: '0' } },
});

let tmp;
before(() => { tmp = mkdtempSync(path.join(tmpdir(), 'airlock-e2e-faults-')); });
after(() => { if (tmp) rmSync(tmp, { recursive: true, force: true }); });

// A config file in the temp dir; every server gets a state dir of its own.
function writeConfig(name, config) {
  const file = path.join(tmp, `${name}.json`);
  const server = { state_dir: path.join(tmp, `${name}-state`), ...(config.server ?? {}) };
  writeFileSync(file, JSON.stringify({ ...config, server }, null, 2));
  return file;
}

// ---------------------------------------------------------------------------
// Processes, cgroups, mounts (host view of /proc).

// pid -> {ppid, state, comm} of every process now.
function processTable() {
  const table = new Map();
  for (const ent of readdirSync('/proc')) {
    if (!/^\d+$/.test(ent)) continue;
    try {
      const stat = readFileSync(`/proc/${ent}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const [state, ppid] = stat.slice(close + 2).split(' ');
      table.set(Number(ent), { ppid: Number(ppid), state, comm: stat.slice(stat.indexOf('(') + 1, close) });
    } catch {
      // exited meanwhile
    }
  }
  return table;
}

// Alive and not a zombie (a zombie holds nothing but its pid; reaping the
// orphans is PID 1's business, not airlock's).
function isLive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

function descendants(pid) {
  const table = processTable();
  const out = [];
  const queue = [pid];
  while (queue.length > 0) {
    const p = queue.shift();
    for (const [child, info] of table) {
      if (info.ppid === p) {
        out.push(child);
        queue.push(child);
      }
    }
  }
  return out;
}

function childrenOf(pid) {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((t) => readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8')
      .trim().split(/\s+/).filter(Boolean).map(Number));
  } catch {
    return [];
  }
}

// The `airlock runner` child of `airlock serve`, or undefined.
function runnerOf(serverPid) {
  return childrenOf(serverPid).find((p) => {
    try {
      return isLive(p) && readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes('runner');
    } catch {
      return false;
    }
  });
}

// The cgroup directories named airlock-<pid>-* that the supervisor `pid`
// made, looked for in (and one level above) each of its own cgroups.
function cgroupDirsOf(pid, ownCgroups) {
  const found = new Set();
  for (const line of ownCgroups) {
    const [, controllers, rel] = line.split(':');
    const roots = controllers === ''
      ? ['/sys/fs/cgroup', '/sys/fs/cgroup/unified']
      : [controllers, ...controllers.split(','), controllers.replace(/^name=/, '')].map((c) => `/sys/fs/cgroup/${c}`);
    for (const root of roots) {
      for (const dir of [path.join(root, rel), path.dirname(path.join(root, rel))]) {
        try {
          for (const ent of readdirSync(dir)) if (ent.startsWith(`airlock-${pid}-`)) found.add(path.join(dir, ent));
        } catch {
          // no such hierarchy here
        }
      }
    }
  }
  return [...found];
}

function mountPoints() {
  return new Set(readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter(Boolean).map((l) => l.split(' ')[4]));
}

function procStatus(pid) {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(s)?.[1]);
  return { rssKiB: field('VmRSS'), threads: field('Threads') };
}

function livePidsWithMarker(marker) {
  return pidsWithMarker(marker).filter(isLive);
}

// ---------------------------------------------------------------------------
// Raw HTTP (node:http without keep-alive: every request its own connection,
// so no idle keep-alive connection of ours holds a server thread).

function httpRequest(port, { method = 'POST', path: p = '/mcp', headers = {}, body, timeoutMs = 15000 } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port, path: p, method, agent: false,
      headers: { connection: 'close', ...(body !== undefined ? { 'content-type': 'application/json', accept: ACCEPT } : {}), ...headers },
    }, (res) => {
      let data = '';
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

// initialize + notifications/initialized; returns the session's headers.
async function rawSession(port) {
  const res = await httpRequest(port, { body: INIT });
  assert.equal(res.status, 200, res.body);
  const sid = res.headers['mcp-session-id'];
  assert.ok(sid, 'Mcp-Session-Id');
  const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL };
  const n = await httpRequest(port, { headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  assert.equal(n.status, 202);
  return headers;
}

async function ping(port, headers) {
  return httpRequest(port, { headers, body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'ping' }) });
}

// A tools/call over a bare TCP socket: resolves {sock, received()} once
// `until(received)` holds (or rejects after timeoutMs).
function rawToolsCall(port, headers, params, until, timeoutMs = 15000) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params });
  const head = [
    'POST /mcp HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Content-Type: application/json', `Accept: ${ACCEPT}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${Buffer.byteLength(body)}`, '', '',
  ].join('\r\n');
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let got = '';
    const timer = setTimeout(() => { sock.destroy(); reject(new Error(`raw call: nothing matched within ${timeoutMs} ms: ${JSON.stringify(got)}`)); }, timeoutMs);
    sock.on('error', () => {});
    sock.on('data', (d) => {
      got += d.toString();
      if (until(got)) {
        clearTimeout(timer);
        resolve({ sock, received: () => got });
      }
    });
    sock.write(head + body);
  });
}

// ===========================================================================
describe('faults: the runner process SIGKILLed', () => {
  let server;
  let conn;
  let config;
  before(async () => {
    config = writeConfig('runner-kill', {});
    server = await startHttpServer({ args: ['--config', config] });
    conn = await connectHttp(server.url);
  });

  // Live processes that run this server's runner code (its command line:
  // `/proc/self/exe runner --channel-fd N --config <ours>`): the runner, and
  // clones of it that have not exec'd airlock-init yet.
  // Returns [{pid, ppid}].
  const runnerImages = () => [...processTable()].filter(([p, info]) => {
    if (info.state === 'Z' || info.state === 'X') return false;
    try {
      const argv = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      return argv.includes('runner') && argv.includes(config);
    } catch {
      return false;
    }
  }).map(([pid, info]) => ({ pid, ppid: info.ppid }));
  const unexecdClonesOf = (runner) => runnerImages().filter((r) => r.ppid === runner).map((r) => r.pid);
  after(async () => {
    await conn?.close().catch(() => {});
    await server?.stop();
  });

  it('fails the run in flight with runner_unavailable, restarts the runner, and leaks nothing', async (t) => {
    const warm = await runCode(conn.client, { language: 'python', code: 'print("warm")' });
    assert.equal(warm.structuredContent.status, 'ok', JSON.stringify(warm.structuredContent));
    const oldRunner = runnerOf(server.proc.pid);
    assert.ok(oldRunner, `no runner child of airlock serve (${server.proc.pid}): ${childrenOf(server.proc.pid)}`);
    const ownCgroups = readFileSync(`/proc/${oldRunner}/cgroup`, 'utf8').split('\n').filter(Boolean);
    const mountsBefore = mountPoints();

    const marker = uniqueMarker('runner-kill');
    const call = runCode(conn.client, { language: 'python', code: `# ${marker}\nimport time\ntime.sleep(30)`, timeout_ms: 40000 }, { timeout: 20000 });
    assert.ok(await waitFor(() => livePidsWithMarker(marker).length > 0, 15000), 'the run started in a jail');
    const jailed = descendants(oldRunner).filter(isLive);  // the run's jail and the pool's
    const cgroups = cgroupDirsOf(oldRunner, ownCgroups);
    t.diagnostic(`the old runner ${oldRunner}: ${jailed.length} processes below it, ${cgroups.length} cgroup directories`);
    // Kill it at a moment when it is not building a jail (a clone that has not
    // exec'd airlock-init yet): that window is the next test's.
    for (let i = 0; ; i++) {
      process.kill(oldRunner, 'SIGSTOP');
      if (unexecdClonesOf(oldRunner).length === 0 || i === 100) break;
      process.kill(oldRunner, 'SIGCONT');
      await sleep(20);
    }
    const killedAt = Date.now();
    process.kill(oldRunner, 'SIGKILL');

    const r = await call;
    const failedAfter = Date.now() - killedAt;
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.equal(r.structuredContent?.status, 'internal_error', JSON.stringify(r.structuredContent));
    assert.equal(r.structuredContent.error_code, 'runner_unavailable', JSON.stringify(r.structuredContent));
    assert.match(r.structuredContent.message, /runner/);
    assert.ok(failedAfter < 5000, `the run failed ${failedAfter} ms after the kill, not at once`);

    // The gateway restarts the runner; the next run works.
    const next = await runCode(conn.client, { language: 'python', code: 'print("after the kill")' }, { timeout: 20000 });
    assert.equal(next.structuredContent.status, 'ok', JSON.stringify(next.structuredContent));
    assert.equal(next.structuredContent.stdout, 'after the kill\n');
    const newRunner = runnerOf(server.proc.pid);
    assert.ok(newRunner && newRunner !== oldRunner, `a new runner (old ${oldRunner}, now ${newRunner})`);
    assert.equal(server.proc.exitCode, null, 'airlock serve is still up');
    assert.match(server.stderr(), /runner.*exited unexpectedly \(signal 9\)/);
    const base = new URL(server.url).origin;
    assert.ok(await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, 10000), 'ready again');

    // Nothing of the old runner is left: no process, no cgroup, no mount.
    assert.ok(await waitFor(() => jailed.every((p) => !isLive(p)), 10000),
      `processes of the killed runner still alive: ${jailed.filter(isLive)}`);
    assert.deepEqual(livePidsWithMarker(marker), []);
    assert.ok(await waitFor(() => cgroups.every((d) => !existsSync(d)), 10000),
      `cgroups of the killed runner left: ${cgroups.filter((d) => existsSync(d))}`);
    const newMounts = [...mountPoints()].filter((m) => !mountsBefore.has(m));
    assert.deepEqual(newMounts, [], 'no new mounts on the host');
    // No orphaned copy of the old runner (see the next test).
    const orphans = () => runnerImages().filter((r) => r.pid !== newRunner && r.ppid !== newRunner).map((r) => r.pid);
    assert.ok(await waitFor(() => orphans().length === 0, 5000), `orphaned runner images: ${orphans()}`);
  });

  // The runner clones each jail's init (JailChildMain, src/jail/jail.cc); the
  // clone waits for the runner's "G" before it sets PR_SET_PDEATHSIG and
  // execs airlock-init. Killed in that window, the runner must not leave the
  // clone behind, and the gateway must still see that the runner died. The
  // test stops the runner (SIGSTOP) at random moments while runs keep it
  // building jails, until it catches a clone that has not exec'd yet; then it
  // SIGKILLs the runner.
  it('SIGKILLed while it builds a jail: nothing outlives it, and the gateway restarts it', async (t) => {
    const runner = runnerOf(server.proc.pid);
    assert.ok(runner);
    let churning = true;
    const churn = (async () => {
      while (churning) await runCode(conn.client, { language: 'python', code: 'print(1)' }, { timeout: 20000 }).catch(() => {});
    })();
    let caught = [];
    let attempts = 0;
    const problems = [];
    try {
      const deadline = Date.now() + 10000;
      while (Date.now() < deadline && caught.length === 0) {
        attempts++;
        process.kill(runner, 'SIGSTOP');
        // One still waiting for the runner's "G" (blocked in a read), not one
        // already on its way to exec.
        caught = unexecdClonesOf(runner).filter((p) => {
          try { return /read/.test(readFileSync(`/proc/${p}/wchan`, 'utf8')); } catch { return false; }
        });
        if (caught.length > 0) break;
        process.kill(runner, 'SIGCONT');
        await sleep(Math.random() * 3);
      }
      if (caught.length === 0) {
        process.kill(runner, 'SIGCONT');
        t.skip(`no jail caught half-built in ${attempts} stops of the runner`);
        return;
      }
      process.kill(runner, 'SIGKILL');
      const gone = await waitFor(() => caught.every((p) => !isLive(p)), 3000);
      const left = caught.filter(isLive).map((p) => {
        const info = processTable().get(p);
        let wchan = '';
        try { wchan = readFileSync(`/proc/${p}/wchan`, 'utf8'); } catch { /* gone */ }
        return `pid ${p} (ppid ${info?.ppid}, state ${info?.state}, wchan ${wchan})`;
      });
      // With the runner dead, a run must end: ok (restarted) or runner_unavailable.
      const probe = await runCode(conn.client, { language: 'python', code: 'print("probe")' }, { timeout: 6000 })
        .then((r) => (r.structuredContent?.status === 'ok' || r.structuredContent?.error_code === 'runner_unavailable'
          ? 'ok' : JSON.stringify(r.structuredContent)), (e) => `no answer: ${e.message}`);
      if (!gone) problems.push(`3 s after the runner was SIGKILLed its half-built jail process is still alive, orphaned: ${left.join(', ')}`);
      if (probe !== 'ok') problems.push(`a run 3 s after the kill: ${probe} (the gateway did not notice the runner died)`);
    } finally {
      churning = false;
      try { process.kill(runner, 'SIGCONT'); } catch { /* killed */ }
      // The orphans ignore SIGTERM; they are ours to end (which also unwedges the server).
      for (const p of caught) { try { process.kill(p, 'SIGKILL'); } catch { /* gone */ } }
      await churn;
    }
    // Once nothing holds the old runner's channel any more, the server recovers.
    const next = await runCode(conn.client, { language: 'python', code: 'print("after")' }, { timeout: 20000 });
    assert.equal(next.structuredContent.stdout, 'after\n', JSON.stringify(next.structuredContent));
    assert.ok(runnerOf(server.proc.pid));
    assert.deepEqual(problems, [], `caught after ${attempts} stops:\n${problems.join('\n')}`);
  });
});

// ===========================================================================
describe('faults: a downstream connector that dies or hangs mid-call (code mode)', () => {
  const testMarker = uniqueMarker('conn-test');
  const hangMarker = uniqueMarker('conn-hang');
  let server;
  let conn;
  const stopped = new Set();

  const execute = (language, code, extra = {}) => conn.client.callTool(
    { name: 'execute', arguments: { language, code, ...extra } }, undefined, { timeout: 60000 });
  const connectorPids = (marker) => livePidsWithMarker(marker).filter((p) => p !== server.proc.pid);

  before(async () => {
    const config = writeConfig('connectors', {
      server: { max_concurrent_runs: 4 },
      mcpServers: {
        // Calls time out after 5 s (connector) or at the run's end, whichever is first.
        test: { command: process.execPath, args: [TEST_SERVER, '--e2e-marker', testMarker], trusted: true, timeout_ms: 5000 },
        hang: { command: process.execPath, args: [TEST_SERVER, '--e2e-marker', hangMarker], trusted: true, timeout_ms: 1000 },
      },
    });
    server = await startHttpServer({ args: ['--config', config] });
    conn = await connectHttp(server.url);
    const r = await execute('javascript', 'return [await tools.call("test.echo", {text: "a"}), await tools.call("hang.echo", {text: "b"})];');
    assert.deepEqual(r.structuredContent?.result, ['a', 'b'], JSON.stringify(r.structuredContent));
  });
  after(async () => {
    for (const p of stopped) { try { process.kill(p, 'SIGCONT'); } catch { /* gone */ } }
    await conn?.close().catch(() => {});
    await server?.stop();
  });

  it('killed mid-call: the call fails at once with E_TOOL_ERROR, the program carries on, the server is restarted', async () => {
    const [victim] = connectorPids(testMarker);
    assert.ok(victim, 'the test connector runs');
    const statsBefore = (await execute('javascript', 'return await tools.call("test.stats", {});')).structuredContent.result;
    const run = execute('javascript', `
      const t0 = Date.now(); const r = {};
      try { await tools.call("test.slow", {ms: 30000}); r.first = "answered"; }
      catch (e) { r.first = e.code; r.message = e.message; }
      r.failed_after_ms = Date.now() - t0;
      r.after = await tools.call("test.echo", {text: "after the crash"});
      return r;`);
    // Kill it once the slow call is in flight downstream.
    assert.ok(await waitFor(async () => {
      const s = await execute('javascript', 'return await tools.call("test.stats", {});');
      return s.structuredContent?.result?.started_slow > statsBefore.started_slow;
    }, 15000), 'the slow call reached the connector');
    const killedAt = Date.now();
    process.kill(victim, 'SIGKILL');
    const r = await run;
    const sc = r.structuredContent;
    assert.equal(sc.ok, true, JSON.stringify(sc));
    assert.equal(sc.result.first, 'E_TOOL_ERROR', JSON.stringify(sc.result));
    assert.match(sc.result.message, /went away|exited/, sc.result.message);
    assert.ok(Date.now() - killedAt < 4000, 'bounded by the crash, not by the 5 s call timeout or the 30 s call');
    assert.ok(sc.result.failed_after_ms < 5000, JSON.stringify(sc.result));
    // Documented (src/gateway/connector.h): the next use restarts it after a
    // 200 ms backoff when that fits the call's timeout, so the same run goes on.
    assert.equal(sc.result.after, 'after the crash');
    assert.ok(!isLive(victim), 'the killed connector is gone');
    assert.equal(connectorPids(testMarker).length, 1, `one live test connector: ${connectorPids(testMarker)}`);
    const again = await execute('javascript', 'return await tools.call("test.echo", {text: "next run"});');
    assert.equal(again.structuredContent.result, 'next run');
  });

  it('a server that hangs (SIGSTOPped): each call fails at the per-call timeout, the program carries on', async () => {
    const pids = connectorPids(hangMarker);
    assert.ok(pids.length > 0, 'the hang connector runs');
    for (const p of pids) { process.kill(p, 'SIGSTOP'); stopped.add(p); }
    try {
      const t0 = Date.now();
      const r = await execute('javascript', `
        const r = {}; let t = Date.now();
        try { await tools.call("hang.echo", {text: "x"}); r.first = "answered"; }
        catch (e) { r.first = e.code; r.message = e.message; }
        r.first_ms = Date.now() - t;
        r.other = await tools.call("test.echo", {text: "another connector still works"});
        t = Date.now();
        try { await tools.call("hang.echo", {text: "y"}); r.second = "answered"; } catch (e) { r.second = e.code; }
        r.second_ms = Date.now() - t;
        return r;`);
      const sc = r.structuredContent;
      assert.equal(sc.ok, true, JSON.stringify(sc));
      assert.equal(sc.result.first, 'E_TOOL_ERROR', JSON.stringify(sc.result));
      assert.match(sc.result.message, /timed out/);
      for (const ms of [sc.result.first_ms, sc.result.second_ms]) {
        assert.ok(ms >= 900 && ms < 4000, `a call to the hung server took ${ms} ms (connector timeout_ms 1000)`);
      }
      assert.equal(sc.result.other, 'another connector still works');
      assert.equal(sc.result.second, 'E_TOOL_ERROR');
      assert.ok(Date.now() - t0 < 10000);

      // Python: the same bounded ToolError.
      const py = await execute('python', [
        'import time', 't = time.time()',
        'try:', '    tools.call("hang.echo", {"text": "x"})', '    code = "answered"',
        'except ToolError as e:', '    code = e.code',
        'result = {"code": code, "ms": int((time.time() - t) * 1000)}',
      ].join('\n'));
      assert.equal(py.structuredContent.ok, true, JSON.stringify(py.structuredContent));
      assert.equal(py.structuredContent.result.code, 'E_TOOL_ERROR');
      assert.ok(py.structuredContent.result.ms < 4000, JSON.stringify(py.structuredContent.result));

      // Uncaught, it ends the run as a failure with the tool error (bounded).
      const un = await execute('javascript', 'await tools.call("hang.echo", {text: "z"}); return "unreachable";');
      const e = un.structuredContent.error;
      assert.equal(un.isError, true);
      assert.equal(un.structuredContent.ok, false);
      assert.ok(e.code === 'E_TOOL_ERROR' || (e.code === 'E_PROGRAM_ERROR' && e.name === 'ToolError'), JSON.stringify(e));
      assert.ok(un.structuredContent.wall_ms < 4000, `wall_ms ${un.structuredContent.wall_ms}`);
    } finally {
      for (const p of pids) { process.kill(p, 'SIGCONT'); stopped.delete(p); }
    }
    const back = await execute('javascript', 'return await tools.call("hang.echo", {text: "resumed"});');
    assert.equal(back.structuredContent.result, 'resumed', JSON.stringify(back.structuredContent));
  });

  it('a call that never answers within the run: the run ends at its wall_ms and the call is cancelled downstream', async () => {
    const before = (await execute('javascript', 'return await tools.call("test.stats", {});')).structuredContent.result;
    const t0 = Date.now();
    const r = await execute('javascript', 'await tools.call("test.slow", {ms: 30000}); return "unreachable";', { limits: { wall_ms: 1500 } });
    assert.ok(Date.now() - t0 < 6000, `execute took ${Date.now() - t0} ms with wall_ms 1500`);
    assert.equal(r.structuredContent.ok, false);
    assert.equal(r.structuredContent.error.code, 'E_LIMIT_WALLCLOCK', JSON.stringify(r.structuredContent));
    assert.ok(await waitFor(async () => {
      const s = (await execute('javascript', 'return await tools.call("test.stats", {});')).structuredContent.result;
      return s.cancelled_count > before.cancelled_count;
    }, 5000), 'notifications/cancelled reached the connector');
  });
});

// ===========================================================================
describe('faults: the audit log cannot be written (audit.fail_closed)', () => {
  it('a full disk: a run in flight has its result withheld, new calls are refused, freeing space recovers', async (t) => {
    const mnt = path.join(tmp, 'auditfs');
    mkdirSync(mnt, { recursive: true });
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0700', 'airlock-e2e-faults', mnt], { stdio: 'pipe' });
    } catch (e) {
      t.skip(`cannot mount a tmpfs (needs root): ${e.stderr?.toString().trim() ?? e.message}`);
      return;
    }
    const config = writeConfig('audit-full', { audit: { fail_closed: true, path: path.join(mnt, 'audit.db') } });
    let server;
    let conn;
    try {
      server = await startHttpServer({ args: ['--config', config] });
      conn = await connectHttp(server.url);
      const warm = await runCode(conn.client, { language: 'python', code: 'print(1)' });
      assert.equal(warm.structuredContent.status, 'ok');

      // A run in flight when the disk fills.
      const marker = uniqueMarker('audit-full');
      const inflight = runCode(conn.client, { language: 'python', code: `# ${marker}\nimport time\ntime.sleep(1.5)\nprint("withheld-" + "output")` });
      assert.ok(await waitFor(() => livePidsWithMarker(marker).length > 0, 15000), 'the run started');
      const filler = path.join(mnt, 'filler');
      const fd = openSync(filler, 'w');
      try {
        const chunk = Buffer.alloc(64 * 1024);
        for (;;) writeSync(fd, chunk);
      } catch (e) {
        assert.equal(e.code, 'ENOSPC');
      } finally {
        closeSync(fd);
      }
      const r = await inflight;
      assert.equal(r.isError, true, JSON.stringify(r));
      assert.match(textOf(r), /^E_AUDIT_UNAVAILABLE: .*withheld/);
      assert.doesNotMatch(JSON.stringify(r), /withheld-output/, 'the result is not returned');

      // New calls are refused, at once and clearly.
      const t0 = Date.now();
      const refused = await runCode(conn.client, { language: 'python', code: 'print("must not run")' });
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /^E_AUDIT_UNAVAILABLE: the audit log cannot be written, so airlock refuses to run tools \(.*(full|space)/);
      assert.doesNotMatch(JSON.stringify(refused), /must not run\\n/);
      assert.ok(Date.now() - t0 < 5000);

      // Free the space: runs work again.
      rmSync(filler);
      const again = await runCode(conn.client, { language: 'python', code: 'print("recovered")' });
      assert.equal(again.structuredContent?.status, 'ok', JSON.stringify(again));
      assert.equal(again.structuredContent.stdout, 'recovered\n');
      await conn.close();
      conn = undefined;
      await server.stop();
      server = undefined;
      // The hash chain is intact after the failed writes.
      const verify = execFileSync(AIRLOCK_BIN, ['audit', 'verify', '--config', config], { encoding: 'utf8' });
      assert.match(verify, /^ok: \d+ rows/);
    } finally {
      await conn?.close().catch(() => {});
      await server?.stop();
      try { execFileSync('umount', [mnt], { stdio: 'pipe' }); } catch { execFileSync('umount', ['-l', mnt], { stdio: 'pipe' }); }
    }
  });

  it('the database locked by another process: calls are refused after the busy timeout, then work once it is released', async () => {
    const db = path.join(tmp, 'audit-locked.db');
    const config = writeConfig('audit-locked', { audit: { fail_closed: true, path: db } });
    const server = await startHttpServer({ args: ['--config', config] });
    const conn = await connectHttp(server.url);
    let locker;
    try {
      const warm = await runCode(conn.client, { language: 'python', code: 'print(1)' });
      assert.equal(warm.structuredContent.status, 'ok');
      locker = spawn('/usr/bin/python3', ['-c', [
        'import sqlite3, sys',
        'db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)',
        'db.execute("BEGIN EXCLUSIVE")',
        'print("locked", flush=True)',
        'sys.stdin.read()',
        'db.execute("ROLLBACK")',
        'print("released", flush=True)',
      ].join('\n'), db], { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      locker.stdout.on('data', (d) => { out += d; });
      locker.stderr.on('data', (d) => { err += d; });
      assert.ok(await waitFor(() => out.includes('locked'), 10000), `the lock was not taken: ${err}`);

      const t0 = Date.now();
      const refused = await runCode(conn.client, { language: 'python', code: 'print("must not run")' });
      const took = Date.now() - t0;
      assert.equal(refused.isError, true, JSON.stringify(refused));
      assert.match(textOf(refused), /^E_AUDIT_UNAVAILABLE: .*refuses to run tools.*locked/);
      assert.ok(took < 20000, `refused after ${took} ms`);

      locker.stdin.end();
      assert.ok(await waitFor(() => out.includes('released'), 10000), err);
      const t1 = Date.now();
      const again = await runCode(conn.client, { language: 'python', code: 'print("recovered")' });
      assert.equal(again.structuredContent?.status, 'ok', JSON.stringify(again));
      assert.ok(Date.now() - t1 < 5000);
    } finally {
      if (locker && locker.exitCode === null) locker.kill('SIGKILL');
      await conn.close().catch(() => {});
      await server.stop();
    }
    const verify = execFileSync(AIRLOCK_BIN, ['audit', 'verify', '--config', config], { encoding: 'utf8' });
    assert.match(verify, /^ok: \d+ rows/);
  });
});

// ===========================================================================
describe('faults: SIGSTOP inside a jail', () => {
  let server;
  let conn;
  before(async () => {
    server = await startHttpServer({ args: ['--config', writeConfig('sigstop', {})] });
    conn = await connectHttp(server.url);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await server?.stop();
  });

  for (const which of ['the user program', 'every process of the jail, its init too']) {
    it(`SIGSTOP ${which}: the wall clock still ends the run as timeout, and nothing is left`, async () => {
      const marker = uniqueMarker('sigstop');
      const t0 = Date.now();
      const call = runCode(conn.client, {
        language: 'python', code: `# ${marker}\nimport time\nwhile True:\n    time.sleep(0.05)`, timeout_ms: 1500,
      });
      assert.ok(await waitFor(() => livePidsWithMarker(marker).length >= 2, 15000), 'the jail runs (init and program)');
      const pids = livePidsWithMarker(marker);
      const victims = which.startsWith('every') ? pids : pids.filter((p) => readFileSync(`/proc/${p}/comm`, 'utf8').trim() !== 'airlock-init');
      assert.ok(victims.length > 0 && descendants(runnerOf(server.proc.pid)).includes(victims[0]),
        `the program is a descendant of the runner: ${victims}`);
      for (const p of victims) process.kill(p, 'SIGSTOP');
      const r = await call;
      assert.equal(r.structuredContent.status, 'timeout', JSON.stringify(r.structuredContent));
      assert.ok(Date.now() - t0 < 1500 + 5000, `took ${Date.now() - t0} ms for a 1500 ms limit`);
      assert.ok(await waitFor(() => pids.every((p) => !isLive(p)), 5000), `left alive: ${pids.filter(isLive)}`);
      const next = await runCode(conn.client, { language: 'python', code: 'print("next")' });
      assert.equal(next.structuredContent.stdout, 'next\n');
    });
  }
});

// ===========================================================================
describe('faults: an HTTP client that disconnects mid-request or mid-response', () => {
  let server;
  let port;
  let runner;
  before(async () => {
    server = await startHttpServer({ args: ['--config', writeConfig('disconnect', {})] });
    port = server.port;
  });
  after(async () => { await server?.stop(); });

  async function assertHealthy() {
    const h = await httpRequest(port, { method: 'GET', path: '/healthz' });
    assert.equal(h.status, 200);
    assert.equal(h.body.trim(), 'ok');
    const c = await connectHttp(server.url);
    try {
      const r = await runCode(c.client, { language: 'bash', code: 'echo healthy' });
      assert.equal(r.structuredContent.stdout, 'healthy\n', JSON.stringify(r.structuredContent));
    } finally {
      await c.close();
    }
    assert.equal(server.proc.exitCode, null);
    runner ??= runnerOf(server.proc.pid);
    assert.equal(runnerOf(server.proc.pid), runner, 'the runner did not restart');
  }

  const longRun = (marker) => ({
    name: 'run_code', arguments: { language: 'python', code: `# ${marker}\nimport time\ntime.sleep(20)`, timeout_ms: 25000 },
  });

  it('reset mid-response (application/json body being padded): the run is cancelled, the server stays healthy', async () => {
    await assertHealthy();
    const headers = await rawSession(port);
    const marker = uniqueMarker('rst-json');
    // Headers, then at least one padding newline of the body: mid-response.
    const { sock, received } = await rawToolsCall(port, headers, longRun(marker),
      (got) => got.includes('\r\n\r\n') && got.length > got.indexOf('\r\n\r\n') + 4);
    assert.match(received(), /^HTTP\/1\.1 200[\s\S]*content-type: application\/json/i);
    assert.ok(livePidsWithMarker(marker).length > 0, 'the run is in its jail');
    sock.resetAndDestroy();
    assert.ok(await waitFor(() => livePidsWithMarker(marker).length === 0, 8000),
      `the run outlived its client by 8 s: ${livePidsWithMarker(marker)}`);
    await assertHealthy();
  });

  it('closed mid-response on an SSE stream (progressToken): the run is cancelled, the server stays healthy', async () => {
    const headers = await rawSession(port);
    const marker = uniqueMarker('fin-sse');
    const params = { ...longRun(marker), _meta: { progressToken: 'p1' } };
    const { sock, received } = await rawToolsCall(port, headers, params,
      (got) => /content-type: text\/event-stream/i.test(got) && /(event: message|: ping)/.test(got));
    assert.match(received(), /^HTTP\/1\.1 200/);
    assert.ok(await waitFor(() => livePidsWithMarker(marker).length > 0, 10000), 'the run is in its jail');
    sock.destroy();
    assert.ok(await waitFor(() => livePidsWithMarker(marker).length === 0, 8000),
      `the run outlived its client by 8 s: ${livePidsWithMarker(marker)}`);
    await assertHealthy();
  });

  it('gone mid-request (half a body sent): no run starts, the server stays healthy', async () => {
    const headers = await rawSession(port);
    const marker = uniqueMarker('half-body');
    const body = JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: longRun(marker) });
    const sock = net.connect(port, '127.0.0.1');
    sock.on('error', () => {});
    await new Promise((r) => sock.once('connect', r));
    sock.write([
      'POST /mcp HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Content-Type: application/json', `Accept: ${ACCEPT}`,
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${Buffer.byteLength(body)}`, '', '',
    ].join('\r\n') + body.slice(0, body.length >> 1));
    await sleep(300);
    sock.destroy();
    await sleep(500);
    assert.deepEqual(livePidsWithMarker(marker), []);
    assert.equal((await ping(port, headers)).status, 200, 'the session still answers');
    await assertHealthy();
  });
});

// ===========================================================================
describe('faults: 1000 idle HTTP sessions', () => {
  it('a fresh client is still served at once; RSS and threads stay flat; max_sessions is enforced', async (t) => {
    // Defaults: server.http.max_sessions 1024, session_idle_timeout_s 3600.
    const server = await startHttpServer({ args: ['--config', writeConfig('sessions', {})] });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    try {
      const warm = await connectHttp(server.url);  // session 1
      assert.equal((await runCode(warm.client, { language: 'bash', code: 'echo warm' })).structuredContent.status, 'ok');
      await warm.close();
      await sleep(200);
      const before = procStatus(server.proc.pid);

      const post = (body, headers = {}) => new Promise((resolve, reject) => {
        const req = http.request({
          host: '127.0.0.1', port: server.port, path: '/mcp', method: 'POST', agent,
          headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers },
        }, (res) => {
          let data = '';
          res.on('data', (d) => { data += d; });
          res.on('end', () => resolve({ status: res.statusCode, sid: res.headers['mcp-session-id'], body: data }));
        });
        req.on('error', reject);
        req.end(body);
      });
      const t0 = Date.now();
      const opened = await Promise.all(Array.from({ length: 1000 }, () => post(INIT)));
      const sids = opened.map((r) => r.sid);
      assert.ok(opened.every((r) => r.status === 200 && r.sid), `statuses: ${[...new Set(opened.map((r) => r.status))]}`);
      assert.equal(new Set(sids).size, 1000);
      const inits = await Promise.all(sids.map((sid) => post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        { 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL })));
      assert.ok(inits.every((r) => r.status === 202));
      const openMs = Date.now() - t0;
      agent.destroy();  // the sessions stay; our keep-alive connections go
      await sleep(200);
      const loaded = procStatus(server.proc.pid);

      const t1 = Date.now();
      const fresh = await connectHttp(server.url);  // session 1002
      const r = await runCode(fresh.client, { language: 'bash', code: 'echo fresh' });
      const freshMs = Date.now() - t1;
      await fresh.close();
      assert.equal(r.structuredContent.stdout, 'fresh\n');
      assert.ok(freshMs < 5000, `a fresh client took ${freshMs} ms with 1000 idle sessions`);
      const afterFresh = procStatus(server.proc.pid);
      t.diagnostic(`1000 sessions opened in ${openMs} ms; RSS ${before.rssKiB} -> ${loaded.rssKiB} KiB ` +
        `(${((loaded.rssKiB - before.rssKiB) / 1000).toFixed(2)} KiB/session), threads ${before.threads} -> ${loaded.threads}; ` +
        `fresh client initialize+run ${freshMs} ms; after it RSS ${afterFresh.rssKiB} KiB, threads ${afterFresh.threads}`);
      assert.ok(loaded.threads <= before.threads + 2, `idle sessions hold no threads: ${before.threads} -> ${loaded.threads}`);
      assert.ok(loaded.rssKiB - before.rssKiB < 64 * 1024, `RSS grew by ${loaded.rssKiB - before.rssKiB} KiB`);

      // max_sessions (1024): 22 more fit, the next initialize gets 503.
      const mine = 1 + 1000 + 1;
      for (let i = mine; i < 1024; i++) assert.equal((await httpRequest(server.port, { body: INIT })).status, 200, `session ${i + 1}`);
      const over = await httpRequest(server.port, { body: INIT });
      assert.equal(over.status, 503, over.body);
      assert.equal(over.headers['mcp-session-id'], undefined);
      // ... and the sessions already open still work.
      assert.equal((await ping(server.port, { 'mcp-session-id': sids[500], 'mcp-protocol-version': PROTOCOL })).status, 200);
    } finally {
      agent.destroy();
      await server.stop();
    }
  });

  it('idle sessions are ended after session_idle_timeout_s, which frees their places under max_sessions', async () => {
    const server = await startHttpServer({ args: ['--config', writeConfig('sessions-idle', { server: { http: { max_sessions: 2, session_idle_timeout_s: 1 } } })] });
    try {
      const a = await rawSession(server.port);
      await rawSession(server.port);
      assert.equal((await httpRequest(server.port, { body: INIT })).status, 503, 'max_sessions 2');
      assert.ok(await waitFor(async () => (await httpRequest(server.port, { body: INIT })).status === 200, 8000),
        'a place is free again once the idle sessions are reaped');
      assert.equal((await ping(server.port, a)).status, 404, 'an idle session is ended');
    } finally {
      await server.stop();
    }
  });
});

// ===========================================================================
describe('faults: slowloris', () => {
  it('clients that send their headers one byte a second cannot hold every HTTP thread', async (t) => {
    const threads = 4;
    const server = await startHttpServer({ args: ['--config', writeConfig('slowloris', { server: { http: { threads } } })] });
    const slow = [];
    try {
      const request = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Type: application/json\r\n` +
        `X-Slow: ${'a'.repeat(200)}\r\n\r\n`;
      for (let i = 0; i < 2 * threads; i++) {
        const sock = net.connect(server.port, '127.0.0.1');
        sock.on('error', () => {});
        let pos = 0;
        const timer = setInterval(() => { if (pos < request.length && !sock.destroyed) sock.write(request[pos++]); }, 1000);
        slow.push({ sock, timer });
      }
      await sleep(1500);  // every slow connection accepted and dribbling

      const timed = async (fn) => {
        const t0 = Date.now();
        try {
          const status = await fn();
          return { status, ms: Date.now() - t0 };
        } catch (e) {
          return { error: e.message, ms: Date.now() - t0 };
        }
      };
      const [health, init] = await Promise.all([
        timed(async () => (await httpRequest(server.port, { method: 'GET', path: '/healthz', timeoutMs: 6000 })).status),
        timed(async () => (await httpRequest(server.port, { body: INIT, timeoutMs: 6000 })).status),
      ]);
      t.diagnostic(`${2 * threads} slowloris connections, server.http.threads ${threads}: ` +
        `/healthz ${JSON.stringify(health)}, initialize ${JSON.stringify(init)}`);
      assert.equal(health.status, 200, `/healthz while slowloris holds the server: ${JSON.stringify(health)}`);
      assert.ok(health.ms < 5000, `/healthz took ${health.ms} ms`);
      assert.equal(init.status, 200, `initialize while slowloris holds the server: ${JSON.stringify(init)}`);
      assert.ok(init.ms < 5000, `initialize took ${init.ms} ms`);
    } finally {
      for (const { sock, timer } of slow) { clearInterval(timer); sock.destroy(); }
      await server.stop();
    }
  });
});

// ===========================================================================
// Issue 29: slow request bodies, and a flood of failed console sign-ins.

// `airlock keys create` for the server of `configFile`; returns the secret.
function createKey(configFile, keysFile, user, role) {
  const out = execFileSync(AIRLOCK_BIN, ['keys', 'create', '--file', keysFile, '--config', configFile, '--as', 'setup',
    '--user', user, '--role', role, '--json'], { encoding: 'utf8' });
  return JSON.parse(out).secret;
}

// A raw connection that sends `head` at once, then its body one byte every
// `everyMs` (never, when 0). Resolves `closed` with what the server wrote
// once it closes the connection.
function slowBody(port, head, everyMs) {
  const sock = net.connect(port, '127.0.0.1');
  let got = '';
  let timer;
  sock.on('error', () => {});
  sock.on('data', (d) => { got += d.toString(); });
  const closed = new Promise((resolve) => sock.on('close', () => { clearInterval(timer); resolve(got); }));
  sock.on('connect', () => {
    sock.write(head);
    if (everyMs > 0) timer = setInterval(() => { if (!sock.destroyed) sock.write('x'); }, everyMs);
  });
  return { sock, closed, stop: () => { clearInterval(timer); sock.destroy(); } };
}

describe('faults: slow request bodies', () => {
  it('clients that announce a large body and trickle it (or send none) cannot hold the HTTP threads', async (t) => {
    const threads = 4;
    const bodyTimeoutS = 4;
    const keysFile = path.join(tmp, 'slow-body-keys.json');
    const configFile = writeConfig('slow-body', {
      server: { http: { threads, keys_file: keysFile, body_timeout_s: bodyTimeoutS } },
    });
    const key = createKey(configFile, keysFile, 'alice', 'admin');
    const server = await startHttpServer({ args: ['--config', configFile, '--metrics', '127.0.0.1:0'] });
    const slow = [];
    try {
      assert.ok(await waitFor(() => /metrics at http:\/\/127\.0\.0\.1:\d+\/metrics/.test(server.stderr()), 10000), server.stderr());
      const metricsPort = Number(/metrics at http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(server.stderr())[1]);
      const host = `Host: 127.0.0.1:${server.port}\r\n`;
      const heads = [
        // The console's sign-in, before any authentication.
        `POST /console/api/signin HTTP/1.1\r\n${host}Authorization: Bearer nope\r\nContent-Length: 1000000\r\n\r\n`,
        // MCP with a valid key, and without one.
        `POST /mcp HTTP/1.1\r\n${host}Authorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
          `Accept: ${ACCEPT}\r\nContent-Length: 1000000\r\n\r\n`,
        `POST /mcp HTTP/1.1\r\n${host}Content-Type: application/json\r\nAccept: ${ACCEPT}\r\nContent-Length: 1000000\r\n\r\n`,
      ];
      for (let i = 0; i < 48; i++) slow.push(slowBody(server.port, heads[i % heads.length], i % 2 ? 10000 : 0));
      // The metrics listener (2 threads): slow headers and a slow body.
      const metricsHeads = [`GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n`, `POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n`];
      for (let i = 0; i < 8; i++) {
        const c = net.connect(metricsPort, '127.0.0.1');
        c.on('error', () => {});
        c.on('connect', () => c.write(metricsHeads[i % 2]));
        slow.push({ sock: c, stop: () => c.destroy() });
      }
      await sleep(1500);  // every slow connection accepted, its header in

      const timed = async (fn) => {
        const t0 = Date.now();
        try {
          return { value: await fn(), ms: Date.now() - t0 };
        } catch (e) {
          return { error: e.message, ms: Date.now() - t0 };
        }
      };
      const auth = { authorization: `Bearer ${key}` };
      const [health, mcp, metrics] = await Promise.all([
        timed(async () => (await httpRequest(server.port, { method: 'GET', path: '/healthz', timeoutMs: 6000 })).status),
        timed(async () => {
          const init = await httpRequest(server.port, { headers: auth, body: INIT, timeoutMs: 6000 });
          assert.equal(init.status, 200, init.body);
          const headers = { ...auth, 'mcp-session-id': init.headers['mcp-session-id'], 'mcp-protocol-version': PROTOCOL };
          await httpRequest(server.port, { headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), timeoutMs: 6000 });
          const list = await httpRequest(server.port, { headers, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), timeoutMs: 6000 });
          assert.equal(list.status, 200, list.body);
          return JSON.parse(list.body).result.tools.length;
        }),
        timed(async () => (await httpRequest(metricsPort, { method: 'GET', path: '/metrics', timeoutMs: 6000 })).status),
      ]);
      t.diagnostic(`48 slow bodies + 8 slow metrics clients, threads ${threads}: /healthz ${JSON.stringify(health)}, ` +
        `initialize+tools/list ${JSON.stringify(mcp)}, metrics listener ${JSON.stringify(metrics)}`);
      assert.equal(health.value, 200, `/healthz while slow bodies are pending: ${JSON.stringify(health)}`);
      assert.ok(health.ms < 5000, `/healthz took ${health.ms} ms`);
      assert.ok(mcp.value > 0, `initialize + tools/list while slow bodies are pending: ${JSON.stringify(mcp)}`);
      assert.ok(mcp.ms < 5000, `initialize + tools/list took ${mcp.ms} ms`);
      assert.equal(metrics.value, 200, `the metrics listener while slow clients hold it: ${JSON.stringify(metrics)}`);
      assert.ok(metrics.ms < 5000, `/metrics took ${metrics.ms} ms`);

      // The slow bodies are cut at the deadline, with 408.
      const answers = await Promise.race([
        Promise.all(slow.filter((s) => s.closed).map((s) => s.closed)),
        sleep((bodyTimeoutS + 10) * 1000).then(() => null),
      ]);
      assert.ok(answers, `the slow bodies were still open ${bodyTimeoutS + 10} s after their header`);
      assert.ok(answers.every((a) => a.startsWith('HTTP/1.1 408')), JSON.stringify(answers.slice(0, 3)));
    } finally {
      for (const s of slow) s.stop();
      await server.stop();
    }
  });
});

describe('faults: console sign-in flood', () => {
  it('failed sign-ins are rate-limited per address (429) and fill no audit log; another address still signs in', async () => {
    const keysFile = path.join(tmp, 'signin-flood-keys.json');
    const configFile = writeConfig('signin-flood', { server: { http: { keys_file: keysFile } } });
    const key = createKey(configFile, keysFile, 'alice', 'admin');
    const server = await startHttpServer({ args: ['--config', configFile] });
    const signin = (authorization, localAddress = '127.0.0.1') => new Promise((resolve, reject) => {
      const req = http.request({
        host: '127.0.0.1', port: server.port, path: '/console/api/signin', method: 'POST', agent: false, localAddress,
        headers: { authorization, connection: 'close' },
      }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, retryAfter: res.headers['retry-after'] }));
      });
      req.setTimeout(15000, () => req.destroy(new Error('no answer')));
      req.on('error', reject);
      req.end();
    });
    const denied = () => JSON.parse(execFileSync(AIRLOCK_BIN,
      ['audit', '--config', configFile, '--json', '--limit', '100000', '--type', 'event'], { encoding: 'utf8' }))
      .filter((e) => e.kind === 'console_signin_denied');
    try {
      const statuses = [];
      for (let round = 0; round < 30; round++) {
        const batch = await Promise.all(Array.from({ length: 10 }, (_, i) => signin(`Bearer alk_wrong${round}_${i}`)));
        statuses.push(...batch);
      }
      const count = (s) => statuses.filter((r) => r.status === s).length;
      assert.equal(statuses.length, 300);
      assert.ok(count(429) >= 290, `429s: ${count(429)}, 401s: ${count(401)}`);
      assert.equal(count(429) + count(401), 300);
      assert.ok(statuses.filter((r) => r.status === 429).every((r) => Number(r.retryAfter) >= 1), 'Retry-After');
      // A correct key from the flooding address waits the window out too.
      assert.equal((await signin(`Bearer ${key}`)).status, 429);
      // From another address it signs in.
      assert.equal((await signin(`Bearer ${key}`, '127.0.0.2')).status, 200);
      const rows = denied();
      assert.ok(rows.length <= 7, `${rows.length} console_signin_denied rows for 300 attempts`);
      const attempts = rows.reduce((n, r) => n + (r.detail.attempts ?? 1), 0);
      assert.ok(attempts >= 6, `the rows stand for ${attempts} attempts: ${JSON.stringify(rows.map((r) => r.detail))}`);
    } finally {
      await server.stop();
    }
  });
});
