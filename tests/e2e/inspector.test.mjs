// A scripted session with @modelcontextprotocol/inspector-cli (the same
// commands as in docs/testing.md), against `airlock serve` over stdio and
// over Streamable HTTP; then the Inspector 2.x CLI
// (@modelcontextprotocol/inspector, `--cli`, on Node 22) in both eras of MCP.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';

import { AIRLOCK_BIN, E2E_DIR, LANGUAGES, assertBinary, startHttpServer } from './helpers.mjs';
import { node22 } from './node22.mjs';

const run = promisify(execFile);
// The package's bin (`mcp-inspector-cli`, i.e. what `npx` runs).
const INSPECTOR = path.join(E2E_DIR, 'node_modules', '.bin', 'mcp-inspector-cli');
// inspector-cli 1.0.3 finds its own package.json with
// fs.existsSync("../package.json") (relative to the *working directory*) but
// then import()s that path relative to its module, so from most directories
// it dies with "Cannot find module .../@modelcontextprotocol/package.json".
// Any working directory whose parent holds a package.json works around it;
// tests/e2e/node_modules is one (see docs/testing.md).
const INSPECTOR_CWD = path.join(E2E_DIR, 'node_modules');

async function inspector(args) {
  try {
    const { stdout, stderr } = await run(INSPECTOR, ['--cli', ...args], { cwd: INSPECTOR_CWD, timeout: 60000, maxBuffer: 16 << 20 });
    return { stdout, stderr };
  } catch (e) {
    throw new Error(`inspector-cli ${args.join(' ')} failed (${e.code}): ${e.stderr}\n${e.stdout}`);
  }
}

describe('inspector-cli over stdio', () => {
  before(() => assertBinary());

  it('--method tools/list lists run_code and list_languages', async () => {
    const { stdout } = await inspector([AIRLOCK_BIN, 'serve', '--method', 'tools/list']);
    const out = JSON.parse(stdout);
    const names = out.tools.map((t) => t.name);
    assert.ok(names.includes('run_code') && names.includes('list_languages'), names.join(','));
    const rc = out.tools.find((t) => t.name === 'run_code');
    assert.deepEqual([...rc.inputSchema.properties.language.enum].sort(), [...LANGUAGES].sort());
  });

  it('--method tools/call --tool-name run_code prints 42', async () => {
    const { stdout } = await inspector([
      AIRLOCK_BIN, 'serve', '--method', 'tools/call', '--tool-name', 'run_code',
      '--tool-arg', 'language=python', '--tool-arg', 'code=print(6*7)',
    ]);
    const out = JSON.parse(stdout);
    assert.equal(out.structuredContent?.status, 'ok', stdout);
    assert.equal(out.structuredContent.stdout, '42\n');
    assert.notEqual(out.isError, true);
    assert.ok(out.content.some((c) => c.type === 'text' && c.text.includes('42')), stdout);
  });

  it('--method resources/read --uri airlock://languages', async () => {
    const { stdout } = await inspector([AIRLOCK_BIN, 'serve', '--method', 'resources/read', '--uri', 'airlock://languages']);
    const out = JSON.parse(stdout);
    const doc = JSON.parse(out.contents[0].text);
    assert.deepEqual(doc.languages.map((l) => l.name).sort(), [...LANGUAGES].sort());
  });
});

describe('inspector-cli over Streamable HTTP', () => {
  let server;
  before(async () => { server = await startHttpServer(); });
  after(async () => { await server?.stop(); });

  it('--transport http --method tools/call runs bash', async () => {
    const { stdout } = await inspector([
      server.url, '--transport', 'http', '--method', 'tools/call', '--tool-name', 'run_code',
      '--tool-arg', 'language=bash', '--tool-arg', 'code=echo $((6*7))',
    ]);
    const out = JSON.parse(stdout);
    assert.equal(out.structuredContent?.stdout, '42\n', stdout);
  });
});

// Inspector 2.x: `mcp-inspector --cli` (its launcher), on Node >= 22.19.
const INSPECTOR2 = path.join(E2E_DIR, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher',
  'build', 'index.js');

async function inspector2(args) {
  const node = node22().path;
  try {
    const { stdout } = await run(node, [INSPECTOR2, '--cli', ...args, '--format', 'json', '-q'],
      { cwd: E2E_DIR, timeout: 60000, maxBuffer: 16 << 20 });
    return JSON.parse(stdout).result;
  } catch (e) {
    throw new Error(`inspector 2.x ${args.join(' ')} failed (${e.code}): ${e.stderr}\n${e.stdout}`);
  }
}

// A modern-era result carries the server's identity in _meta (2026-07-28
// results do; legacy ones do not). The Inspector passes resultType on only on
// some paths (through its Tasks client when the server offers Tasks), so it is
// checked only when present.
function assertEra(out, era) {
  const info = out._meta?.['io.modelcontextprotocol/serverInfo'];
  if (era === 'modern') {
    assert.equal(info?.name, 'airlock', JSON.stringify(out).slice(0, 500));
    if ('resultType' in out) assert.equal(out.resultType, 'complete');
  } else {
    assert.equal(info, undefined, JSON.stringify(out).slice(0, 500));
    assert.equal(out.resultType, undefined);
  }
}

// The modern era's results carry resultType; the legacy era's do not (the
// Inspector passes tools/call results on as they came; it pages list results).
for (const era of ['modern', 'legacy']) {
  describe(`Inspector 2.x CLI, ${era} era`, () => {
    let server;
    before(async () => { assertBinary(); server = await startHttpServer(); });
    after(async () => { await server?.stop(); });

    it('stdio: tools/list lists run_code and the session tools', async () => {
      const out = await inspector2([AIRLOCK_BIN, 'serve', '--protocol-era', era, '--method', 'tools/list']);
      const names = out.tools.map((t) => t.name);
      for (const n of ['run_code', 'list_languages', 'open_session', 'close_session']) assert.ok(names.includes(n), names.join(','));
    });

    it('stdio: tools/call run_code prints 42', async () => {
      const out = await inspector2([AIRLOCK_BIN, 'serve', '--protocol-era', era, '--method', 'tools/call',
        '--tool-name', 'run_code', '--tool-arg', 'language=python', 'code=print(6*7)']);
      assert.equal(out.structuredContent?.stdout, '42\n', JSON.stringify(out).slice(0, 500));
      assertEra(out, era);
    });

    it('HTTP: tools/call run_code in bash prints 42', async () => {
      const out = await inspector2([server.url, '--transport', 'http', '--protocol-era', era, '--method', 'tools/call',
        '--tool-name', 'run_code', '--tool-arg', 'language=bash', 'code=echo $((6*7))']);
      assert.equal(out.structuredContent?.stdout, '42\n', JSON.stringify(out).slice(0, 500));
      assertEra(out, era);
    });
  });
}
