// `airlock serve` over stdio as a normal user, the way a desktop client
// (Claude Desktop, Cursor) starts it from the README's config: the run
// result itself must say why code cannot run and what fixes it (the client
// never shows airlock's stderr), and --allow-degraded must then run code.
//
// Runs as root only (it drops to uid 65534 with setpriv). The binaries are
// copied to a world-readable temp dir, since the checkout may not be.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { AIRLOCK_BIN, newClient, runCode } from './helpers.mjs';

const NOBODY = 65534;
const hasSetpriv = (() => {
  try { execFileSync('setpriv', ['--version'], { stdio: 'ignore' }); return true; } catch { return false; }
})();
const skip = process.getuid() !== 0 ? 'needs root to drop to uid 65534' : !hasSetpriv ? 'no setpriv' : false;

describe('stdio as an unprivileged user', { skip }, () => {
  let dir;
  let bin;
  let state;

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'airlock-e2e-unpriv-'));
    chmodSync(dir, 0o755);
    for (const name of ['airlock', 'airlock-init', 'airlock-js']) {
      copyFileSync(path.join(path.dirname(AIRLOCK_BIN), name), path.join(dir, name));
      chmodSync(path.join(dir, name), 0o755);
    }
    bin = path.join(dir, 'airlock');
    state = path.join(dir, 'state');
    mkdirSync(state);
    chownSync(state, NOBODY, NOBODY);
  });
  after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

  async function connectAsNobody(extra = []) {
    const transport = new StdioClientTransport({
      command: 'setpriv',
      args: [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', bin, 'serve', '--state-dir', state, ...extra],
      env: { PATH: process.env.PATH, HOME: state },
      stderr: 'pipe',
    });
    const client = newClient();
    await client.connect(transport);
    return client;
  }

  // Whether this host lets uid 65534 use cgroups at all (then there is
  // nothing to report): asked of the same binary, as that user.
  function cgroupsUsableByNobody() {
    try {
      const out = execFileSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', bin, 'doctor', '--json'],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      return JSON.parse(out).layers.find((l) => l.layer.startsWith('cgroups')).available;
    } catch (e) {
      return JSON.parse(e.stdout).layers.find((l) => l.layer.startsWith('cgroups')).available;
    }
  }

  it('run_code says why it cannot run (the cgroup layer) and what fixes it', async (t) => {
    if (cgroupsUsableByNobody()) return t.skip('uid 65534 can use cgroups on this host');
    const client = await connectAsNobody();
    try {
      const r = await runCode(client, { language: 'bash', code: 'echo hi' });
      assert.equal(r.isError, true);
      const sc = r.structuredContent;
      assert.equal(sc.error_code, 'runner_unavailable', JSON.stringify(sc));
      for (const re of [/cgroup memory\/pids controllers are not usable by uid 65534/, /run airlock as root/,
        /delegated/, /docs\/deploy\.md/, /--allow-degraded/]) {
        assert.match(sc.message, re, `the result names the cause and the fixes: ${sc.message}`);
      }
      assert.doesNotMatch(sc.message, /none answered/);
    } finally {
      await client.close();
    }
  });

  it('--allow-degraded runs code as that user, still jailed', async () => {
    const client = await connectAsNobody(['--allow-degraded']);
    try {
      const r = await runCode(client, { language: 'bash', code: 'echo hi; id -u; cat /etc/shadow 2>&1 | head -c 80' });
      assert.equal(r.structuredContent.status, 'ok', JSON.stringify(r.structuredContent));
      assert.match(r.structuredContent.stdout, /^hi\n65534\n/);
      assert.doesNotMatch(r.structuredContent.stdout, /root:/, 'the host has no /etc/shadow inside the jail');
    } finally {
      await client.close();
    }
  });
});
