// The installed package, driven by the official MCP SDK client: stdio and
// Streamable HTTP against /usr/bin/airlock with /etc/airlock/airlock.json,
// a native run, a WASM-tier run where its interpreter is there, and a
// code-mode program (airlock-js from /usr/lib/airlock). Run by
// tests/package/package_test.sh with AIRLOCK_BIN=/usr/bin/airlock.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import { AIRLOCK_BIN, connectHttp, connectStdio, runCode, startHttpServer } from '../e2e/helpers.mjs';

const CONFIG = ['--config', '/etc/airlock/airlock.json'];

describe(`the installed ${AIRLOCK_BIN}`, () => {
  const closers = [];
  after(async () => { for (const c of closers.reverse()) await c(); });

  it('serves MCP over stdio and runs code in the jail', async () => {
    assert.equal(AIRLOCK_BIN, '/usr/bin/airlock');
    const s = await connectStdio({ args: CONFIG });
    closers.push(() => s.close());
    const r = await runCode(s.client, { language: 'python', code: 'import os; print(os.getuid(), "hello")' });
    assert.equal(r.structuredContent.status, 'ok', JSON.stringify(r.structuredContent));
    assert.match(r.structuredContent.stdout, /hello/);
    const js = await runCode(s.client, { language: 'javascript', code: 'console.log(6*7)', isolation: 'wasm' });
    assert.equal(js.structuredContent.status, 'ok', JSON.stringify(js.structuredContent));
    assert.equal(js.structuredContent.stdout, '42\n');
  });

  it('serves Streamable HTTP with health and metrics', async () => {
    const h = await startHttpServer({ args: CONFIG });
    closers.push(() => h.stop());
    const c = await connectHttp(h.url);
    closers.push(() => c.close());
    const r = await runCode(c.client, { language: 'bash', code: 'echo packaged' });
    assert.equal(r.structuredContent.stdout, 'packaged\n');
    const base = new URL(h.url).origin;
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, /airlock_runs_total\{language="bash",tier="native",mode="run",status="ok"\} 1/);
  });
});
