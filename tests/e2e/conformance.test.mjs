// The official MCP conformance suite (@modelcontextprotocol/conformance
// 0.2.0-alpha.12, server mode, run under Node 22: see node22.mjs) against
// `airlock serve --http`, once per requirement set: 2025-11-25 (the legacy
// era: initialize, sessions, ping, logging/setLevel) and 2026-07-28 (the
// modern era: no initialize, _meta on every request, server/discover,
// stateless HTTP, caching hints, header validation).
//
// Each run uses conformance-baseline.yml as the expected-failures baseline
// (whole scenarios or single `scenario:check` entries that do not apply to a
// tools-only server): the CLI exits non-zero on any unexpected failure or
// warning, and on a baseline entry that started passing. Every scenario's
// checks.json is also reported as its own subtest, where a FAILURE or WARNING
// check not covered by the baseline fails with the check's message. The suite
// tests HTTP servers only (`conformance server --url`); it has no stdio mode.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { E2E_DIR, startHttpServer } from './helpers.mjs';
import { node22 } from './node22.mjs';

const CLI = path.join(E2E_DIR, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const BASELINE = path.join(E2E_DIR, 'conformance-baseline.yml');

// Scenarios that apply to airlock and must run and pass, per requirement set
// (besides these, every scenario the set runs is checked against the baseline).
export const APPLICABLE = {
  '2025-11-25': [
    'server-initialize', 'ping', 'logging-set-level', 'tools-list', 'resources-list',
    'server-sse-multiple-streams', 'dns-rebinding-protection', 'server-session-lifecycle',
  ],
  '2026-07-28': [
    'server-stateless', 'tools-list', 'resources-list', 'server-sse-multiple-streams',
    'sep-2164-resource-not-found', 'dns-rebinding-protection', 'caching', 'http-header-validation',
  ],
};

// baseline entries: scenario → true (whole scenario) | Set of check ids
function readBaseline() {
  const out = new Map();
  for (const line of readFileSync(BASELINE, 'utf8').split('\n')) {
    const m = /^\s+-\s+([\w.-]+)(?::([\w.-]+))?\s*$/.exec(line);
    if (!m) continue;
    if (!m[2]) out.set(m[1], true);
    else if (out.get(m[1]) !== true) out.set(m[1], (out.get(m[1]) ?? new Set()).add(m[2]));
  }
  return out;
}

function runCli(args) {
  return new Promise((resolve) => {
    execFile(node22().path, [CLI, ...args], { cwd: E2E_DIR, timeout: 600000, maxBuffer: 32 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr });
    });
  });
}

// scenario name → checks, from <outDir>/server-<scenario>-<timestamp>/checks.json
function readResults(outDir) {
  const results = new Map();
  for (const d of readdirSync(outDir)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T.*$/.exec(d);
    if (!m) continue;
    try {
      results.set(m[1], JSON.parse(readFileSync(path.join(outDir, d, 'checks.json'), 'utf8')));
    } catch {
      // a scenario that crashed before writing results shows up as missing
    }
  }
  return results;
}

const tail = (cli) => `${cli.stdout.slice(-6000)}\n${cli.stderr.slice(-2000)}`;

describe('MCP conformance suite 0.2.0-alpha.12 (server scenarios, Node 22)', () => {
  let server;
  const runs = {};
  const baseline = readBaseline();

  before(async () => {
    server = await startHttpServer();
    for (const set of Object.keys(APPLICABLE)) {
      const outDir = mkdtempSync(path.join(tmpdir(), `airlock-conformance-${set}-`));
      const cli = await runCli(['server', '--url', server.url, '--requirements', set,
        '--expected-failures', BASELINE, '-o', outDir]);
      runs[set] = { outDir, cli, results: readResults(outDir) };
    }
  });
  after(async () => {
    await server?.stop();
    for (const r of Object.values(runs)) rmSync(r.outDir, { recursive: true, force: true });
  });

  it('runs under Node >= 22', () => {
    assert.match(node22().version, /^v(2[2-9]|[3-9]\d)\./);
  });

  it('the baseline never lists an applicable scenario as a whole', () => {
    for (const [set, list] of Object.entries(APPLICABLE)) {
      for (const s of list) assert.notEqual(baseline.get(s), true, `${s} (${set}) must not be a whole-scenario baseline entry`);
    }
    assert.ok(baseline.size > 0);
  });

  for (const [set, applicable] of Object.entries(APPLICABLE)) {
    describe(`requirement set ${set}`, () => {
      for (const scenario of applicable) {
        it(`${scenario} ran and passed at least one check`, () => {
          const checks = runs[set].results.get(scenario);
          assert.ok(checks, `no results for ${scenario}; CLI output:\n${tail(runs[set].cli)}`);
          assert.ok(checks.some((c) => c.status === 'SUCCESS'), 'at least one SUCCESS check');
        });
      }

      it('every scenario: no FAILURE or WARNING check outside the baseline', (t) => {
        const { results } = runs[set];
        assert.ok(results.size > 0, `no results at all; CLI output:\n${tail(runs[set].cli)}`);
        const unexpected = [];
        for (const [scenario, checks] of results) {
          const expected = baseline.get(scenario);
          for (const c of checks) {
            if (c.status !== 'FAILURE' && c.status !== 'WARNING') continue;
            const inBaseline = expected === true || expected?.has(c.id);
            t.diagnostic(`${inBaseline ? 'expected' : 'UNEXPECTED'} ${c.status} ${scenario}:${c.id}${c.errorMessage ? `: ${c.errorMessage}` : ''}`);
            if (!inBaseline) unexpected.push(`${c.status} ${scenario}:${c.id}: ${c.errorMessage ?? ''}`);
          }
        }
        assert.deepEqual(unexpected, []);
      });

      it('the CLI run with the baseline exits 0 (no unexpected failures, no stale entries)', () => {
        const { cli } = runs[set];
        assert.equal(cli.code, 0, `conformance --requirements ${set} exited ${cli.code}:\n${tail(cli)}`);
      });
    });
  }
});
