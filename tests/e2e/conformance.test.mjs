// The official MCP conformance suite (@modelcontextprotocol/conformance,
// server mode) against `airlock serve --http`.
//
// One CLI run of the active suite with conformance-baseline.yml as the
// expected-failures baseline: the CLI exits non-zero on any unexpected
// failure or warning, and on a baseline entry that started passing. Each
// scenario's checks.json is then reported as its own subtest, and the
// applicable scenarios (those not in the baseline) must have no FAILURE or
// WARNING check.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { E2E_DIR, startHttpServer } from './helpers.mjs';

const CLI = path.join(E2E_DIR, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const BASELINE = path.join(E2E_DIR, 'conformance-baseline.yml');

// The scenarios that apply to a tools-only server and must pass.
export const APPLICABLE = [
  'server-initialize',
  'ping',
  'logging-set-level',
  'tools-list',
  'resources-list',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];

function baselineScenarios() {
  return readFileSync(BASELINE, 'utf8').split('\n')
    .map((l) => /^\s+-\s+([\w.-]+)\s*$/.exec(l)?.[1]).filter(Boolean);
}

function runCli(args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: E2E_DIR, timeout: 120000, maxBuffer: 32 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr });
    });
  });
}

// scenario name → checks, from <outDir>/server-<scenario>-<timestamp>/checks.json
function readResults(outDir) {
  const results = new Map();
  for (const d of readdirSync(outDir)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T.*$/.exec(d) ?? /^server-(.+?)-\d+$/.exec(d);
    if (!m) continue;
    try {
      results.set(m[1], JSON.parse(readFileSync(path.join(outDir, d, 'checks.json'), 'utf8')));
    } catch {
      // a scenario that crashed before writing results shows up as missing
    }
  }
  return results;
}

describe('MCP conformance suite (server scenarios)', () => {
  let server;
  let outDir;
  let cli;
  let results;

  before(async () => {
    server = await startHttpServer();
    outDir = mkdtempSync(path.join(tmpdir(), 'airlock-conformance-'));
    cli = await runCli(['server', '--url', server.url, '--suite', 'active', '--expected-failures', BASELINE, '-o', outDir]);
    results = readResults(outDir);
  });
  after(async () => {
    await server?.stop();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it('the baseline lists exactly the non-applicable scenarios', () => {
    const baseline = baselineScenarios();
    for (const s of APPLICABLE) assert.ok(!baseline.includes(s), `${s} must not be in the baseline`);
    assert.ok(baseline.length > 0);
  });

  for (const scenario of APPLICABLE) {
    it(`${scenario} passes`, (t) => {
      const checks = results.get(scenario);
      assert.ok(checks, `no results for ${scenario}; CLI output:\n${cli.stdout.slice(-4000)}\n${cli.stderr.slice(-2000)}`);
      const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
      for (const c of checks) t.diagnostic(`${c.status} ${c.id}${c.errorMessage ? `: ${c.errorMessage}` : ''}`);
      assert.deepEqual(bad.map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? ''}`), []);
      assert.ok(checks.some((c) => c.status === 'SUCCESS'), 'at least one SUCCESS check');
    });
  }

  it('the CLI run of the active suite with the baseline exits 0 (no unexpected failures, no stale entries)', () => {
    assert.equal(cli.code, 0, `conformance exited ${cli.code}:\n${cli.stdout.slice(-6000)}\n${cli.stderr.slice(-2000)}`);
  });
});
