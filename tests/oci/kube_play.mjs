// The Kubernetes manifests under `podman kube play`, driven by the official
// MCP SDK client (tests/oci/kube_play_test.sh sets the environment): through
// the gateway pod's http port, with an API key made by `airlock keys create`
// in the gateway pod (kept in PostgreSQL), the run goes over mutual TLS to the
// runner host pod that runner.dns resolves to; a jail there contains an
// escape attempt.
//   AIRLOCK_KP_URL=http://localhost:PORT/mcp AIRLOCK_KP_KEY=... AIRLOCK_KP_RUNNER=IP:7700
//   AIRLOCK_KP_PROBES='["IP:PORT",...]' node --test tests/oci/kube_play.mjs
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { connectHttp, runCode } from '../e2e/helpers.mjs';

const URL_ = process.env.AIRLOCK_KP_URL;
const KEY = process.env.AIRLOCK_KP_KEY;
const RUNNER = process.env.AIRLOCK_KP_RUNNER;          // the runner host pod's IP:7700
const PROBES = JSON.parse(process.env.AIRLOCK_KP_PROBES || '[]');  // addresses a jail must not reach
const LONG = { timeout: 120000 };

describe('the manifests under podman kube play: gateway pod -> runner host pod', () => {
  let c;
  before(async () => { c = await connectHttp(URL_, { headers: { Authorization: `Bearer ${KEY}` } }); });
  after(async () => { await c?.close().catch(() => {}); });

  it('refuses a client without an API key (server.http.api_keys)', async () => {
    const r = await fetch(URL_, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '0' } } }),
    });
    assert.equal(r.status, 401);
  });

  it('runs python on the runner host pod (structuredContent.runner_host)', async () => {
    const r = await runCode(c.client, { language: 'python', code: 'import socket; print(6*7)' }, LONG);
    assert.equal(r.structuredContent.status, 'ok', JSON.stringify(r.structuredContent));
    assert.equal(r.structuredContent.stdout, '42\n');
    assert.equal(r.structuredContent.runner_host, RUNNER, JSON.stringify(r.structuredContent));
  });

  it('runs javascript there too', async () => {
    const r = await runCode(c.client, { language: 'javascript', code: 'console.log("kube")' }, LONG);
    assert.equal(r.structuredContent.status, 'ok', JSON.stringify(r.structuredContent));
    assert.equal(r.structuredContent.stdout, 'kube\n');
    assert.equal(r.structuredContent.runner_host, RUNNER);
  });

  it('contains an escape attempt: no network (not even the pod network or the host), no pod processes, no secrets', async () => {
    const code = [
      'import os, socket',
      `for hp in ${JSON.stringify(PROBES)}:`,
      '    h, p = hp.rsplit(":", 1)',
      '    try:',
      '        socket.create_connection((h, int(p)), timeout=3); print("NET-OPEN", hp)',
      '    except OSError as e: print("net denied", hp, e.errno)',
      'for f in ("/etc/airlock/tls/tls.key", "/etc/airlock/tls/ca.crt", "/proc/1/environ"):',
      '    try:',
      '        open(f).read(); print("READ", f)',
      '    except OSError as e: print("denied", f, e.errno)',
      'print("pids", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))',
      'print("uid", os.getuid())',
    ].join('\n');
    const r = await runCode(c.client, { language: 'python', code }, LONG);
    const out = r.structuredContent.stdout;
    assert.equal(r.structuredContent.status, 'ok', JSON.stringify(r.structuredContent));
    assert.equal(r.structuredContent.runner_host, RUNNER);
    assert.doesNotMatch(out, /NET-OPEN/, out);
    assert.equal((out.match(/net denied/g) || []).length, PROBES.length, out);
    // The runner host's private key is not in the jail's filesystem.
    assert.doesNotMatch(out, /READ \/etc\/airlock\/tls\/tls\.key/, out);
    assert.doesNotMatch(out, /uid 0\n/, out);
    // Its own PID namespace: a handful of processes, none of the pod's.
    const pids = JSON.parse(out.match(/pids (\[.*\])/)[1]);
    assert.ok(pids.length <= 4, out);
  });
});
