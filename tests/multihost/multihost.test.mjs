// The multi-host test (issue 22), run by tests/multihost/run.sh, which sets
// up two gateways (gwA, gwB) and three runner hosts (each in its own network
// namespace, gRPC + mutual TLS) sharing one PostgreSQL, and describes them in
// $MH_TOPOLOGY. Driven with the official MCP TypeScript SDK client over
// Streamable HTTP with a bearer API key.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { setMaxListeners } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';

import {
  connectHttp, pidsWithMarker, runCode, sleep, startHttpServer, uniqueMarker, waitFor,
} from '../e2e/helpers.mjs';
import { defineSharedTests } from '../e2e/shared_suite.mjs';
import { alive, readPid, respawn } from './processes.mjs';

const execFileP = promisify(execFile);
const TOPOLOGY = process.env.MH_TOPOLOGY;
const T = TOPOLOGY ? JSON.parse(readFileSync(TOPOLOGY, 'utf8')) : null;
const skip = T ? false : 'no $MH_TOPOLOGY: run tests/multihost/run.sh';

const GW = T ? Object.fromEntries(T.gateways.map((g) => [g.name, g])) : {};
const HOSTS = T ? T.runner_hosts : [];
const ADDRS = HOSTS.map((h) => h.addr);
const CERTS = T?.certs;

// --- helpers ------------------------------------------------------------------------------

const show = (r) => JSON.stringify(r?.structuredContent ?? r, null, 1).slice(0, 1500);
const bearer = (key) => ({ Authorization: `Bearer ${key.secret}` });

const clients = [];
async function connect(gwName, key = T.keys.user) {
  const c = await connectHttp(GW[gwName].url, { headers: bearer(key) });
  clients.push(c);
  return c;
}

function cli(args, { allowFail = false } = {}) {
  const r = spawnSync(T.bin, args, { encoding: 'utf8', timeout: 60000, maxBuffer: 256 << 20 });
  if (!allowFail && r.status !== 0) {
    throw new Error(`airlock ${args.join(' ')} exited ${r.status}: ${r.stderr}\n${r.stdout}`.slice(0, 4000));
  }
  return r;
}

// Run rows of the shared (PostgreSQL) audit log, recorded in the last 30 min.
function auditRuns(config = GW.gwB.config) {
  const r = cli(['audit', '--config', config, '--json', '--type', 'run', '--since', '30m', '--limit', '100000']);
  return JSON.parse(r.stdout);
}

function auditVerify(config = GW.gwA.config) {
  const r = cli(['audit', '--config', config, '--json', 'verify'], { allowFail: true });
  let doc = null;
  try { doc = JSON.parse(r.stdout); } catch { /* plain text */ }
  return { status: r.status, doc, out: `${r.stdout}\n${r.stderr}` };
}

function assertAuditChainOk(what) {
  const v = auditVerify();
  assert.equal(v.status, 0, `${what}: airlock audit verify exited ${v.status}: ${v.out}`);
  if (v.doc && 'ok' in v.doc) assert.equal(v.doc.ok, true, `${what}: ${v.out}`);
  return v;
}



async function httpStatus(url, timeoutMs = 1500) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

async function waitStatus(url, want, timeoutMs) {
  let last = 0;
  const ok = await waitFor(async () => { last = await httpStatus(url); return last === want; }, timeoutMs);
  return { ok, last };
}

// Which runner host (1..3) a jailed process carrying `marker` descends from,
// by its parent chain in this machine's /proc (the namespaces are network
// namespaces only, so every process is visible here); null if unknown.
function placement(marker) {
  const hostPids = new Map(HOSTS.map((h) => [readPid(h.pid_file), h.n]));
  for (const pid of pidsWithMarker(marker)) {
    let p = pid;
    for (let depth = 0; depth < 32 && p > 1; depth++) {
      if (hostPids.has(p)) return hostPids.get(p);
      try {
        const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
        p = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      } catch {
        break;
      }
    }
  }
  return null;
}

const hostN = (addr) => HOSTS.find((h) => h.addr === addr)?.n ?? null;

function countBy(xs) {
  const m = {};
  for (const x of xs) m[x] = (m[x] ?? 0) + 1;
  return m;
}

// A TLS client to a runner host with the given client certificate (or none):
// resolves {ok: true} when the server sends anything after the HTTP/2
// preface (a gRPC server sends its SETTINGS), {ok: false, error} when the
// handshake or the connection fails.
function tlsProbe({ host, port, ca = `${CERTS}/ca1.pem`, cert, servername = T.server_name, timeoutMs = 5000 }) {
  return new Promise((resolve) => {
    const opts = {
      host, port, servername, ALPNProtocols: ['h2'], ca: readFileSync(ca),
    };
    if (cert) {
      opts.cert = readFileSync(`${CERTS}/${cert}.pem`);
      opts.key = readFileSync(`${CERTS}/${cert}.key`);
    }
    let done = false;
    const finish = (v) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      resolve(v);
    };
    const s = tls.connect(opts);
    const timer = setTimeout(() => finish({ ok: false, error: 'timeout' }), timeoutMs);
    s.on('secureConnect', () => {
      // HTTP/2 connection preface + an empty SETTINGS frame.
      s.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]));
    });
    s.on('data', () => finish({ ok: true, alpn: s.alpnProtocol }));
    s.on('error', (e) => finish({ ok: false, error: `${e.code ?? ''} ${e.message}` }));
    s.on('close', () => finish({ ok: false, error: 'closed' }));
  });
}

function tcpOpen(host, port) {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: 1000 });
    s.on('connect', () => { s.destroy(); resolve(true); });
    s.on('error', () => resolve(false));
    s.on('timeout', () => { s.destroy(); resolve(false); });
  });
}

function logSize(file) {
  try { return statSync(file).size; } catch { return 0; }
}
function logSince(file, offset) {
  try { return readFileSync(file, 'utf8').slice(offset); } catch { return ''; }
}

// --- set-up -------------------------------------------------------------------------------

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
});

// --- the SDK end-to-end suite against each gateway ------------------------------------

for (const name of ['gwA', 'gwB']) {
  describe(`SDK end-to-end suite through gateway ${name.slice(2)}`, { skip }, () => {
    let conn;
    before(async () => { conn = await connect(name); });
    // Every test of the suite holds with remote runner hosts: the
    // cancellation test finds the jailed program in /proc, which shows the
    // runner hosts' jails too (their namespaces are network namespaces).
    defineSharedTests(() => conn);
  });
}

// --- placement ----------------------------------------------------------------------------

describe('placement', { skip }, () => {
  it('concurrent runs spread across all three runner hosts, and each result names its host', async () => {
    const c = await connect('gwA');
    const rs = await Promise.all(Array.from({ length: 12 }, (_, i) => runCode(c.client, {
      language: 'python', code: `import time\ntime.sleep(0.5)\nprint("spread ${i}")`,
    })));
    rs.forEach((r, i) => {
      assert.equal(r.structuredContent.status, 'ok', show(r));
      assert.equal(r.structuredContent.stdout, `spread ${i}\n`);
      assert.ok(ADDRS.includes(r.structuredContent.runner_host),
        `structuredContent.runner_host ${JSON.stringify(r.structuredContent.runner_host)} is one of ${ADDRS}`);
    });
    const byHost = countBy(rs.map((r) => r.structuredContent.runner_host));
    assert.equal(Object.keys(byHost).length, 3, `runs per host: ${JSON.stringify(byHost)}`);
  });

  it('a session sticks to its runner host: every cell runs there, state kept', async () => {
    const c = await connect('gwB');
    const open = await c.client.callTool({ name: 'open_session', arguments: { language: 'python' } });
    assert.notEqual(open.isError, true, show(open));
    const sid = open.structuredContent.session_id;
    try {
      const hosts = [];
      let r = await runCode(c.client, { session_id: sid, code: 'n = 1\nimport os\npid = os.getpid()' });
      assert.equal(r.structuredContent.status, 'ok', show(r));
      hosts.push(r.structuredContent.runner_host);
      // Other runs in between, which spread over the hosts.
      const others = Promise.all([0, 1, 2, 3].map((i) => runCode(c.client, { language: 'python', code: `print(${i})` })));
      for (let i = 0; i < 4; i++) {
        r = await runCode(c.client, { session_id: sid, code: 'n += 1\nprint(n, os.getpid() == pid)' });
        assert.equal(r.structuredContent.status, 'ok', show(r));
        assert.equal(r.structuredContent.stdout, `${i + 2} True\n`, 'state and interpreter kept');
        hosts.push(r.structuredContent.runner_host);
      }
      for (const o of await others) assert.equal(o.structuredContent.status, 'ok', show(o));
      assert.ok(ADDRS.includes(hosts[0]), `runner_host ${hosts[0]}`);
      assert.deepEqual(hosts, hosts.map(() => hosts[0]), `every cell on one host: ${hosts}`);
    } finally {
      await c.client.callTool({ name: 'close_session', arguments: { session_id: sid } }).catch(() => {});
    }
  });
});

// --- containment through the remote path ------------------------------------------------

describe('containment through a runner host', { skip }, () => {
  let listener;
  let listenPort;
  before(async () => {
    // A listener on every address of this machine (10.77.N.1 included): the
    // runner hosts can reach it, a jail must not.
    listener = net.createServer((s) => s.end('hello\n'));
    await new Promise((r) => listener.listen(0, '0.0.0.0', r));
    listenPort = listener.address().port;
  });
  after(() => listener?.close());

  it('every runner host itself reaches this machine (the control for the network checks)', async () => {
    for (const h of HOSTS) {
      // Asynchronously: the listener lives in this process's event loop.
      const { stdout, stderr } = await execFileP('nsenter', [`--net=/run/netns/${h.netns}`, 'python3', '-c',
        `import socket; s=socket.create_connection(("${h.root_ip}", ${listenPort}), 3); print(s.recv(10).decode().strip())`],
      { encoding: 'utf8', timeout: 10000 }).catch((e) => e);
      assert.equal(stdout?.trim(), 'hello', `from ${h.netns}: ${stderr}`);
    }
  });

  it('no network, no host files, no secrets in the environment, on every host', async (t) => {
    const c = await connect('gwA');
    const targets = {};
    for (const h of HOSTS) {
      targets[`root ns via ${h.root_ip}`] = [h.root_ip, listenPort];
      targets[`runner host gRPC ${h.addr}`] = h.addr.split(':').map((x, i) => (i ? Number(x) : x));
      targets[`runner host probe ${h.probe}`] = h.probe.split(':').map((x, i) => (i ? Number(x) : x));
    }
    targets['127.0.0.1 listener'] = ['127.0.0.1', listenPort];
    targets['127.0.0.1 PostgreSQL'] = ['127.0.0.1', T.pg_port];
    targets['127.0.0.1 gateway A'] = ['127.0.0.1', GW.gwA.port];
    const files = [
      T.planted_file, '/etc/shadow', `${CERTS}/gw.key`, `${CERTS}/ca1.key`, GW.gwA.config, TOPOLOGY,
      ...HOSTS.map((h) => h.tls_key),
    ];
    const code = `
import json, os, socket, time
out = {"net": {}, "files": {}, "env": dict(os.environ)}
for name, (h, p) in ${JSON.stringify(targets)}.items():
    s = None
    try:
        # socket() itself may be refused (seccomp: no AF_INET at all).
        s = socket.socket()
        s.settimeout(1.5)
        s.connect((h, p))
        out["net"][name] = "CONNECTED"
    except OSError as e:
        out["net"][name] = f"{type(e).__name__} {e.errno}"
    finally:
        if s is not None:
            s.close()
for f in ${JSON.stringify(files)}:
    try:
        out["files"][f] = "READ:" + open(f, "rb").read(200).decode("latin1")
    except OSError as e:
        out["files"][f] = type(e).__name__
try:
    out["proc_environ"] = open("/proc/self/environ", "rb").read().decode("latin1")
except OSError as e:
    out["proc_environ"] = type(e).__name__
time.sleep(0.3)
print(json.dumps(out))
`;
    // Six at once so that every host runs the probe.
    const rs = await Promise.all(Array.from({ length: 6 }, () => runCode(c.client, { language: 'python', code, timeout_ms: 30000 })));
    const seen = new Set();
    for (const r of rs) {
      assert.equal(r.structuredContent.status, 'ok', show(r));
      seen.add(r.structuredContent.runner_host);
      const out = JSON.parse(r.structuredContent.stdout);
      const where = `on ${r.structuredContent.runner_host}`;
      if (!seen.has(`diag ${r.structuredContent.runner_host}`)) {
        seen.add(`diag ${r.structuredContent.runner_host}`);
        t.diagnostic(`${where}: net ${JSON.stringify(out.net)}; files ${JSON.stringify(out.files)}; env ${Object.keys(out.env)}`);
      }
      for (const [name, v] of Object.entries(out.net)) assert.notEqual(v, 'CONNECTED', `${where}: connected to ${name}`);
      for (const [f, v] of Object.entries(out.files)) assert.ok(!v.startsWith('READ:'), `${where}: read ${f}: ${v}`);
      // What the jail saw (not the paths it was told to try).
      const everything = JSON.stringify([out.env, out.proc_environ, Object.values(out.files), Object.values(out.net)]);
      assert.ok(!everything.includes(T.planted_secret), `${where}: the planted secret leaked: ${everything.slice(0, 2000)}`);
      for (const needle of [T.dsn, 'password=', 'PRIVATE KEY', T.dir, ...T.gateways.map((g) => g.config)]) {
        assert.ok(!everything.includes(needle), `${where}: ${needle} visible in the jail`);
      }
      for (const k of Object.keys(out.env)) {
        assert.doesNotMatch(k, /PG|TLS|SSL|GRPC|SECRET|TOKEN|PASSWORD|KEY|MH_|AIRLOCK/i, `${where}: environment variable ${k}`);
      }
    }
    const hosts = [...seen].filter((x) => !x.startsWith('diag '));
    assert.ok(hosts.length >= 2, `the probe ran on ${hosts}`);
  });

  it('a fork bomb is limited and every runner host stays intact', async () => {
    const c = await connect('gwA');
    const code = `
import os, time
n = 0
err = ""
try:
    while n < 5000:
        pid = os.fork()
        if pid == 0:
            time.sleep(3)
            os._exit(0)
        n += 1
except OSError as e:
    err = type(e).__name__
print(n, err, flush=True)
`;
    const rs = await Promise.all([0, 1, 2].map(() => runCode(c.client, { language: 'python', code, timeout_ms: 15000 })));
    for (const r of rs) {
      const sc = r.structuredContent;
      assert.ok(['ok', 'exit_nonzero', 'killed_signal', 'timeout'].includes(sc.status), show(r));
      const m = /^(\d+) (\w*)/.exec(sc.stdout);
      assert.ok(m, `the bomb reported how far it got: ${show(r)}`);
      assert.ok(Number(m[1]) < 200, `forked ${m[1]} processes on ${sc.runner_host}`);
      assert.equal(m[2], 'BlockingIOError', show(r));
    }
    for (const h of HOSTS) {
      assert.ok(alive(readPid(h.pid_file)), `runner host ${h.n} is alive`);
      assert.equal(await httpStatus(`http://${h.probe}/readyz`), 200, `runner host ${h.n} ready`);
    }
    const after = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => runCode(c.client, { language: 'bash', code: `echo after ${i}` })));
    after.forEach((r, i) => assert.equal(r.structuredContent.stdout, `after ${i}\n`, show(r)));
  });
});

// --- shared state: audit chain and keys ---------------------------------------------------

describe('shared state in PostgreSQL', { skip }, () => {
  it('concurrent runs through both gateways leave one verifiable audit chain', async () => {
    const batch = uniqueMarker('both');
    const [a, b] = [await connect('gwA'), await connect('gwB')];
    const calls = [];
    for (let i = 0; i < 20; i++) {
      for (const [g, c] of [['A', a], ['B', b]]) {
        calls.push(runCode(c.client, { language: 'python', code: `print("${batch}-${g}-${i}")` }));
      }
    }
    const rs = await Promise.all(calls);
    for (const r of rs) assert.equal(r.structuredContent.status, 'ok', show(r));
    const rows = auditRuns().filter((row) => (row.code ?? '').includes(batch));
    assert.equal(rows.length, 40, `audit rows of this batch: ${rows.length}`);
    const markers = new Set(rows.map((row) => /"([^"]+)"/.exec(row.code)[1]));
    assert.equal(markers.size, 40, 'one row per run');
    for (const row of rows) assert.equal(row.status, 'SUCCESS', JSON.stringify(row).slice(0, 500));
    const v = assertAuditChainOk('after 2×20 concurrent runs');
    if (v.doc?.rows_checked !== undefined) assert.ok(v.doc.rows_checked >= 40, v.out);
  });

  it('a key revoked through gateway A\'s console is refused by gateway B', async (t) => {
    const victim = T.keys.victim;
    const b = await connectHttp(GW.gwB.url, { headers: bearer(victim) });
    clients.push(b);
    const r0 = await runCode(b.client, { language: 'bash', code: 'echo before' });
    assert.equal(r0.structuredContent.stdout, 'before\n', show(r0));

    const origin = `http://127.0.0.1:${GW.gwA.port}`;
    const api = (p) => `${GW.gwA.console}api/${p}`;
    const signin = await fetch(api('signin'), { method: 'POST', headers: { ...bearer(T.keys.admin), Origin: origin } });
    assert.equal(signin.status, 200, `console sign-in on gateway A: ${await signin.clone().text()}`);
    const { csrf } = await signin.json();
    const cookie = signin.headers.get('set-cookie').split(';')[0];
    const revoke = await fetch(api(`keys/${victim.id}/revoke`), {
      method: 'POST',
      headers: { Cookie: cookie, 'X-CSRF-Token': csrf, Origin: origin, 'Content-Type': 'application/json' },
      body: '{}',
    });
    assert.equal(revoke.status, 200, `revoke through gateway A: ${await revoke.clone().text()}`);
    const t0 = Date.now();

    // A new request to gateway B with that key: 401 within 2 s.
    const raw = () => fetch(GW.gwB.url, {
      method: 'POST',
      headers: { ...bearer(victim), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '0' } } }),
    }).then(async (res) => { await res.arrayBuffer(); return res.status; });
    let status = 0;
    const refused = await waitFor(async () => { status = await raw(); return status === 401; }, 2500);
    assert.ok(refused, `gateway B still answers ${status} ${Date.now() - t0} ms after the revocation`);
    const took = Date.now() - t0;
    assert.ok(took <= 2500, `refused after ${took} ms`);
    t.diagnostic(`gateway B refused the key ${took} ms after gateway A revoked it`);
    // ... and the open connection's next request too.
    await assert.rejects(b.client.listTools(), /401|Unauthorized/i);
    // Revocation is per key: another key still works on B.
    const other = await connect('gwB');
    const r1 = await runCode(other.client, { language: 'bash', code: 'echo other' });
    assert.equal(r1.structuredContent.stdout, 'other\n', show(r1));
    await fetch(api('signout'), { method: 'POST', headers: { Cookie: cookie, 'X-CSRF-Token': csrf, Origin: origin } }).catch(() => {});
  });
});

// --- failures ------------------------------------------------------------------------------

describe('failures', { skip }, () => {
  it('a runner host SIGKILLed mid-run: runner_unavailable for its runs only, the rest finish, new runs avoid it; restarted, it gets runs again', async (t) => {
    const c = await connect('gwA');
    const N = 9;
    const markers = Array.from({ length: N }, (_, i) => uniqueMarker(`kill${i}`));
    const calls = markers.map((m, i) => runCode(c.client, {
      language: 'python', code: `# ${m}\nimport time\ntime.sleep(8)\nprint("done ${i}")`, args: [m], timeout_ms: 30000,
    }).then((r) => ({ r, at: Date.now() }), (e) => ({ e, at: Date.now() })));
    const started = await waitFor(() => markers.every((m) => pidsWithMarker(m).length > 0), 20000);
    assert.ok(started, `not every run started: ${markers.map((m) => pidsWithMarker(m).length)}`);
    const placed = markers.map((m) => placement(m));
    const byHost = countBy(placed);
    // The victim: host 2 if it has runs, else any host that has.
    const victim = HOSTS.find((h) => h.n === 2 && byHost[2]) ?? HOSTS.find((h) => byHost[h.n]);
    assert.ok(victim, `runs placed: ${JSON.stringify(placed)}`);
    const victimPid = readPid(victim.pid_file);
    process.kill(victimPid, 'SIGKILL');
    const tKill = Date.now();
    const results = await Promise.all(calls);
    let unavailable = 0;
    results.forEach(({ r, e, at }, i) => {
      assert.ok(!e, `run ${i}: ${e}`);
      const sc = r.structuredContent;
      const host = placed[i] ?? hostN(sc.runner_host);
      if (host === victim.n) {
        unavailable++;
        assert.equal(sc.error_code, 'runner_unavailable', `run ${i} on the killed host ${victim.addr}: ${show(r)}`);
        assert.equal(r.isError, true);
        assert.ok(at - tKill < 4000, `run ${i} failed ${at - tKill} ms after the kill (its sleep had ~6 s left)`);
      } else {
        assert.equal(sc.status, 'ok', `run ${i} on host ${host} (placed ${JSON.stringify(placed)}): ${show(r)}`);
        assert.equal(sc.stdout, `done ${i}\n`);
        assert.notEqual(sc.runner_host, victim.addr);
      }
    });
    assert.ok(unavailable >= 1, `runs on the killed host: ${unavailable}`);
    t.diagnostic(`placed on hosts ${JSON.stringify(placed)}; killed host ${victim.n}: ${unavailable} runs failed within `
      + `${Math.max(...results.filter((_, i) => placed[i] === victim.n).map((x) => x.at - tKill))} ms`);
    // Nothing of the killed host's runs keeps running.
    const orphans = await waitFor(() => markers.filter((m, i) => placed[i] === victim.n && pidsWithMarker(m).length > 0).length === 0, 5000);
    assert.ok(orphans, 'the killed host\'s jails are gone within 5 s');

    // New runs succeed on the remaining hosts.
    await sleep(500);
    const again = await Promise.all(Array.from({ length: 6 }, (_, i) => runCode(c.client, {
      language: 'python', code: `import time\ntime.sleep(0.3)\nprint("again ${i}")`,
    })));
    again.forEach((r, i) => {
      assert.equal(r.structuredContent.status, 'ok', show(r));
      assert.equal(r.structuredContent.stdout, `again ${i}\n`);
      assert.notEqual(r.structuredContent.runner_host, victim.addr);
    });
    assert.notEqual(await httpStatus(`${GW.gwA.url.replace(/\/mcp$/, '')}/readyz`), 0, 'gateway A answers');

    // Restarted, the host gets runs again (the gateway reconnects).
    respawn(victim);
    const ready = await waitStatus(`http://${victim.probe}/readyz`, 200, 30000);
    assert.ok(ready.ok, `restarted runner host ${victim.n} not ready (${ready.last})`);
    let reached = false;
    const end = Date.now() + 20000;
    while (!reached && Date.now() < end) {
      const rs = await Promise.all(Array.from({ length: 6 }, () => runCode(c.client, {
        language: 'python', code: 'import time\ntime.sleep(0.3)\nprint("back")',
      })));
      for (const r of rs) assert.equal(r.structuredContent.status, 'ok', show(r));
      reached = rs.some((r) => r.structuredContent.runner_host === victim.addr);
    }
    assert.ok(reached, `no run reached the restarted host ${victim.addr} within 20 s`);
  });

  it('a gateway SIGKILLed loses nothing it acknowledged; the chain verifies; restarted, it serves', async (t) => {
    const gw = GW.gwA;
    const c = await connectHttp(gw.url, { headers: bearer(T.keys.user) });
    const batch = uniqueMarker('gwkill');
    const acked = [];
    const ac = new AbortController();
    setMaxListeners(64, ac.signal);
    let killed = false;
    let seq = 0;
    const worker = async () => {
      while (!killed) {
        const m = `${batch}-${seq++}`;
        try {
          const r = await runCode(c.client, { language: 'python', code: `print("${m}")` }, { signal: ac.signal, timeout: 20000 });
          if (!killed && r.structuredContent?.status === 'ok' && r.structuredContent.stdout === `${m}\n`) acked.push(m);
        } catch {
          return;
        }
      }
    };
    const workers = [0, 1, 2, 3].map(worker);
    await waitFor(() => acked.length >= 25, 20000);
    await sleep(150);
    killed = true;
    const pid = readPid(gw.pid_file);
    process.kill(pid, 'SIGKILL');
    const nAcked = acked.length;
    ac.abort('gateway killed');
    await Promise.all(workers);
    await c.close().catch(() => {});
    await waitFor(() => !alive(pid), 5000);
    assert.ok(nAcked >= 25, `acknowledged before the kill: ${nAcked}`);
    t.diagnostic(`${nAcked} runs acknowledged before the SIGKILL, ${seq - nAcked} more started`);

    const codes = new Set(auditRuns(GW.gwB.config).map((row) => row.code ?? ''));
    const missing = acked.slice(0, nAcked).filter((m) => !codes.has(`print("${m}")`));
    assert.deepEqual(missing, [], `acknowledged runs without an audit row (of ${nAcked})`);
    assertAuditChainOk('after a gateway was SIGKILLed');

    respawn(gw);
    const ready = await waitStatus(`${gw.url.replace(/\/mcp$/, '')}/readyz`, 200, 30000);
    assert.ok(ready.ok, `restarted gateway A not ready (${ready.last})`);
    const c2 = await connect('gwA');
    const r = await runCode(c2.client, { language: 'bash', code: 'echo restarted' });
    assert.equal(r.structuredContent.stdout, 'restarted\n', show(r));
    assertAuditChainOk('after the restart');
  });
});

// --- mutual TLS -------------------------------------------------------------------------------

// --- a runner host that drains ------------------------------------------------------------

describe('a runner host that drains (SIGTERM)', { skip }, () => {
  // MH_DRAIN_SESSIONS (default 3; the gateways allow a caller 4) WASM-tier
  // Python sessions are opened; the host of the first is stopped, and every
  // session must keep its state.
  it('hands its WASM-tier sessions to another host: state, files and both gateways follow; the moved session is still contained', async (t) => {
    const a = await connect('gwA');
    const b = await connect('gwB');
    const N = Number(process.env.MH_DRAIN_SESSIONS ?? 3);
    const sessions = [];
    for (let i = 0; i < N; i++) {
      const open = await a.client.callTool({ name: 'open_session', arguments: { language: 'python', isolation: 'wasm' } });
      assert.notEqual(open.isError, true, show(open));
      const sid = open.structuredContent.session_id;
      const r = await runCode(a.client, {
        session_id: sid, code: `x = ${41 + i}\nopen("note.txt", "w").write("kept ${i}")\nprint("set")`,
      });
      assert.equal(r.structuredContent.stdout, 'set\n', show(r));
      sessions.push({ sid, i, home: r.structuredContent.runner_host });
    }
    const home = sessions[0].home;
    const victim = HOSTS.find((h) => h.addr === home);
    assert.ok(victim, `runner_host ${home} is one of ${ADDRS}`);
    const leaving = sessions.filter((s) => s.home === home);
    // Gateway B routes to one too (the shared book), before the drain.
    let r = await runCode(b.client, { session_id: sessions[0].sid, code: 'x += 0\nprint(x)' });
    assert.equal(r.structuredContent.stdout, '41\n', show(r));

    const pid = readPid(victim.pid_file);
    const t0 = Date.now();
    process.kill(pid, 'SIGTERM');
    const gone = await waitFor(() => !alive(pid), 90000);
    assert.ok(gone, `runner host ${victim.n} did not stop within 90 s of SIGTERM`);
    const log = readFileSync(victim.log, 'utf8');
    assert.match(log, /draining/, 'the runner host said it drains');
    const moves = Object.values(GW).flatMap((g) => readFileSync(g.log, 'utf8').split('\n'))
      .filter((l) => leaving.some((s) => l.includes(`session ${s.sid} moved`)));
    t.diagnostic(`${leaving.length} of ${N} sessions were on runner host ${victim.n}; it drained and stopped in `
      + `${Date.now() - t0} ms; ${moves.map((l) => l.replace(/.*moved /, '')).join('; ')}`);

    try {
      for (const s of sessions) {
        for (const [name, c] of [['gwB', b], ['gwA', a]]) {
          r = await runCode(c.client, { session_id: s.sid, code: 'x += 1\nprint(x, open("note.txt").read())' });
          assert.equal(r.structuredContent.status, 'ok', `${name}, session ${s.i}: ${show(r)}`);
          assert.notEqual(r.structuredContent.runner_host, home, `${name}: still routed to the stopped host`);
          assert.ok(ADDRS.includes(r.structuredContent.runner_host), show(r));
        }
        assert.equal(r.structuredContent.stdout, `${41 + s.i + 2} kept ${s.i}\n`, `session ${s.i}: state and files moved`);
      }
      // A moved session is a restored one: the same jail as any.
      const files = [T.planted_file, `${CERTS}/gw.key`, `${CERTS}/ca1.key`, GW.gwA.config, ...HOSTS.map((h) => h.tls_key)];
      const probe = `
import json, os
out = {"files": {}, "net": None, "env": sorted(os.environ)}
for f in ${JSON.stringify(files)}:
    try:
        out["files"][f] = "READ:" + open(f, "rb").read(100).decode("latin1")
    except OSError as e:
        out["files"][f] = type(e).__name__
try:
    import socket
    s = socket.socket()
    s.settimeout(1.5)
    s.connect(("127.0.0.1", ${GW.gwA.port}))
    out["net"] = "CONNECTED"
except Exception as e:
    out["net"] = type(e).__name__
print(json.dumps(out))
`;
      r = await runCode(a.client, { session_id: sessions[0].sid, code: probe });
      assert.equal(r.structuredContent.status, 'ok', show(r));
      const got = JSON.parse(r.structuredContent.stdout);
      for (const [f, v] of Object.entries(got.files)) assert.ok(!v.startsWith('READ:'), `the moved session read ${f}: ${v}`);
      assert.notEqual(got.net, 'CONNECTED', 'the moved session reached gateway A');
      assert.ok(!got.env.some((k) => /KEY|SECRET|TOKEN|PASSWORD|PG/i.test(k)), `environment: ${got.env}`);
    } finally {
      for (const s of sessions) {
        await a.client.callTool({ name: 'close_session', arguments: { session_id: s.sid } }).catch(() => {});
      }
      // Back to three hosts for the tests after this one.
      respawn(victim);
      const ready = await waitStatus(`http://${victim.probe}/readyz`, 200, 30000);
      assert.ok(ready.ok, `restarted runner host ${victim.n} not ready (${ready.last})`);
    }
  });
});

describe('mutual TLS', { skip }, () => {
  const rh1 = HOSTS[0];
  const [rh1Host, rh1Port] = rh1 ? rh1.addr.split(':') : [];
  const extra = [];  // gateways started here
  let rogue;         // {pid, addr, probe}
  after(async () => {
    for (const s of extra) await s.stop().catch(() => {});
    if (rogue && alive(rogue.pid)) {
      process.kill(rogue.pid, 'SIGTERM');
      if (!(await waitFor(() => !alive(rogue.pid), 5000))) process.kill(rogue.pid, 'SIGKILL');
    }
  });

  // A gateway of its own (SQLite state, no keys) in front of one runner host.
  async function tinyGateway(name, { host = rh1.addr, cert = 'gw', ca = 'ca1' }) {
    const dir = path.join(T.dir, `tiny-${name}`);
    mkdirSync(dir, { recursive: true });
    const config = path.join(dir, 'airlock.json');
    writeFileSync(config, JSON.stringify({
      runner: {
        hosts: [host],
        tls: { ca_file: `${CERTS}/${ca}.pem`, cert_file: `${CERTS}/${cert}.pem`, key_file: `${CERTS}/${cert}.key`, server_name: T.server_name },
        health_interval_ms: 300, health_timeout_ms: 1500, connect_timeout_ms: 2000,
      },
    }));
    const s = await startHttpServer({ args: ['--config', config, '--state-dir', path.join(dir, 'state')] });
    extra.push(s);
    return s;
  }

  async function expectRefused(s, what) {
    await sleep(2000);  // several health rounds
    const base = s.url.replace(/\/mcp$/, '');
    assert.notEqual(await httpStatus(`${base}/readyz`), 200, `${what}: /readyz is 200`);
    assert.doesNotMatch(s.stderr(), /runner host \S+ is up/, `${what}: the gateway took the host in`);
    const c = await connectHttp(s.url);
    clients.push(c);
    const r = await runCode(c.client, { language: 'bash', code: 'echo must-not-run' });
    assert.equal(r.structuredContent.error_code, 'runner_unavailable', `${what}: ${show(r)}`);
    assert.ok(!r.structuredContent.stdout?.includes('must-not-run'));
  }

  it('the runner host accepts a client certificate from its CA (the control)', async () => {
    const p = await tlsProbe({ host: rh1Host, port: Number(rh1Port), cert: 'gw' });
    assert.equal(p.ok, true, JSON.stringify(p));
    assert.equal(p.alpn, 'h2');
  });

  it('the runner host refuses a client without a certificate', async () => {
    const offset = logSize(rh1.log);
    const p = await tlsProbe({ host: rh1Host, port: Number(rh1Port) });
    assert.equal(p.ok, false, 'served a client without a certificate');
    await waitFor(() => /did not return a certificate|handshake failed/i.test(logSince(rh1.log, offset)), 2000);
    assert.match(logSince(rh1.log, offset), /did not return a certificate|handshake failed/i, 'runner host 1 logs the refusal');
    // The gateway itself refuses to start without one.
    const dir = path.join(T.dir, 'tiny-nocert');
    mkdirSync(dir, { recursive: true });
    const config = path.join(dir, 'airlock.json');
    writeFileSync(config, JSON.stringify({ runner: { hosts: [rh1.addr], tls: { ca_file: `${CERTS}/ca1.pem`, server_name: T.server_name } } }));
    const out = await startHttpServer({ args: ['--config', config, '--state-dir', path.join(dir, 'state')], readyTimeoutMs: 8000 })
      .then((s) => { extra.push(s); return null; }, (e) => e);
    assert.ok(out, 'a gateway with runner hosts but no client certificate started');
    assert.match(out.message, /cert_file|certificate/i);
  });

  it('the runner host refuses a client certificate from another CA', async () => {
    const p = await tlsProbe({ host: rh1Host, port: Number(rh1Port), cert: 'gw-ca2' });
    assert.equal(p.ok, false, 'served a client whose certificate is from CA2');
    const offset = logSize(rh1.log);
    const s = await tinyGateway('client-ca2', { cert: 'gw-ca2' });
    // The runner host says so on its stderr, for operators ...
    await waitFor(() => /certificate verify failed/i.test(logSince(rh1.log, offset)), 3000);
    const log = logSince(rh1.log, offset);
    assert.match(log, /handshake failed|certificate verify failed/i, `runner host 1's log: ${log.slice(-1000)}`);
    // ... and the gateway finds no usable runner host.
    await expectRefused(s, 'gateway with a CA2 client certificate');
  });

  it('a gateway refuses a runner host whose certificate is from another CA', async () => {
    // A rogue runner host in host 1's namespace: trusts CA1 (so it would
    // accept the gateway), presents a CA2 certificate.
    const port = Number(rh1Port) + 1;
    const swap = { '--listen': `${rh1Host}:${port}`, '--tls-cert': `${CERTS}/rh-ca2.pem`, '--tls-key': `${CERTS}/rh-ca2.key`,
      '--probe': `${rh1Host}:${port + 100}`, '--state-dir': path.join(T.dir, 'rogue-state') };
    const argv = rh1.argv.map((a, i) => swap[rh1.argv[i - 1]] ?? a);
    mkdirSync(swap['--state-dir'], { recursive: true });
    const entry = { argv, log: path.join(T.dir, 'logs', 'rogue.log'), pid_file: path.join(T.dir, 'pids', 'rogue') };
    rogue = { pid: respawn(entry), addr: `${rh1Host}:${port}`, probe: swap['--probe'] };
    const up = await waitStatus(`http://${rogue.probe}/readyz`, 200, 20000);
    const listening = await waitFor(() => tcpOpen(rh1Host, port), 10000);
    assert.ok(up.ok && listening, `the rogue runner host did not start: ${logSince(entry.log, 0).slice(-1000)}`);
    // Its certificate does not verify against CA1 (the control: it is up and
    // speaks TLS; trusting CA2 the handshake works).
    const viaCa2 = await tlsProbe({ host: rh1Host, port, ca: `${CERTS}/ca2.pem`, cert: 'gw' });
    assert.equal(viaCa2.ok, true, `the rogue host speaks TLS with a CA2 chain: ${JSON.stringify(viaCa2)}`);
    const viaCa1 = await tlsProbe({ host: rh1Host, port, cert: 'gw' });
    assert.equal(viaCa1.ok, false);
    const s = await tinyGateway('rogue-host', { host: rogue.addr });
    await expectRefused(s, 'gateway in front of a CA2 runner host');
  });

  it('the same tiny gateway with the right certificates works (the control)', async () => {
    const s = await tinyGateway('control', {});
    const base = s.url.replace(/\/mcp$/, '');
    const ready = await waitStatus(`${base}/readyz`, 200, 10000);
    assert.ok(ready.ok, `control gateway /readyz ${ready.last}\n${s.stderr().slice(-2000)}`);
    const c = await connectHttp(s.url);
    clients.push(c);
    const r = await runCode(c.client, { language: 'bash', code: 'echo control' });
    assert.equal(r.structuredContent.status, 'ok', show(r));
    assert.equal(r.structuredContent.runner_host, rh1.addr);
  });
});
