// Operator package directories end to end (issue 35, docs/configuration.md
// "Operator package directories"), driven by the official MCP TypeScript SDK
// client over Streamable HTTP: a wheel built here and a node_modules tree,
// configured in languages.packages; the endpoint that may use them imports
// them in runs and sessions and lists them in list_languages, the endpoint
// with "packages": [] does neither; a config naming an unknown directory is
// refused at start-up.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { AIRLOCK_BIN, connectHttp, runCode, startHttpServer } from './helpers.mjs';

const CALL = { timeout: 90000 };

function write(file, content) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
}

// A pure-Python wheel as a build backend makes one: package + .dist-info, zipped.
function buildWheel(dir) {
  const src = path.join(dir, 'wheel-src');
  write(path.join(src, 'e2e_demo_pkg', '__init__.py'), 'VALUE = 7\n');
  write(path.join(src, 'e2e_demo_pkg-2.0.1.dist-info', 'METADATA'),
    'Metadata-Version: 2.1\nName: e2e-demo-pkg\nVersion: 2.0.1\n');
  write(path.join(src, 'e2e_demo_pkg-2.0.1.dist-info', 'WHEEL'),
    'Wheel-Version: 1.0\nGenerator: airlock-e2e\nRoot-Is-Purelib: true\nTag: py3-none-any\n');
  write(path.join(src, 'e2e_demo_pkg-2.0.1.dist-info', 'RECORD'), '');
  mkdirSync(path.join(dir, 'wheels'), { recursive: true });
  execFileSync('/usr/bin/python3', ['-m', 'zipfile', '-c', path.join(dir, 'wheels', 'e2e_demo_pkg-2.0.1-py3-none-any.whl'),
    'e2e_demo_pkg', 'e2e_demo_pkg-2.0.1.dist-info'], { cwd: src });
  rmSync(src, { recursive: true, force: true });
}

function structured(r) {
  return r.structuredContent ?? {};
}

describe('operator package directories over Streamable HTTP', () => {
  let tmp;
  let server;
  const clients = {};

  before(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'airlock-e2e-packages-'));
    chmodSync(tmp, 0o755);
    buildWheel(tmp);
    write(path.join(tmp, 'node', 'e2e-mod', 'package.json'), '{"name": "e2e-mod", "version": "3.1.4", "main": "index.js"}');
    write(path.join(tmp, 'node', 'e2e-mod', 'index.js'), 'module.exports = {pi: 3.14};\n');
    const config = {
      server: { state_dir: path.join(tmp, 'state') },
      languages: {
        packages: {
          team: { language: 'python', path: path.join(tmp, 'wheels') },
          mods: { language: 'javascript', path: path.join(tmp, 'node') },
        },
      },
      endpoints: { default: { path: '/mcp' }, bare: { path: '/bare', packages: [] } },
    };
    write(path.join(tmp, 'airlock.json'), JSON.stringify(config));
    server = await startHttpServer({ args: ['--config', path.join(tmp, 'airlock.json')] });
    for (const [name, p] of [['full', '/mcp'], ['bare', '/bare']]) {
      clients[name] = await connectHttp(`http://127.0.0.1:${server.port}${p}`);
    }
  });

  after(async () => {
    for (const c of Object.values(clients)) await c.close().catch(() => {});
    if (server) await server.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('a run imports the wheel on the endpoint that has it, and not on the other', async () => {
    const code = 'import e2e_demo_pkg\nprint(e2e_demo_pkg.VALUE * 6)\n';
    const full = await runCode(clients.full.client, { language: 'python', code }, CALL);
    assert.equal(structured(full).stdout, '42\n', JSON.stringify(full).slice(0, 2000));
    const bare = await runCode(clients.bare.client, { language: 'python', code }, CALL);
    assert.equal(structured(bare).exit_code, 1, JSON.stringify(bare).slice(0, 2000));
    assert.match(structured(bare).stderr, /No module named 'e2e_demo_pkg'/);
  });

  it('JavaScript requires the node_modules tree; the WASM tier sees no host directory', async () => {
    const full = await runCode(clients.full.client, { language: 'javascript', code: "console.log(require('e2e-mod').pi)" }, CALL);
    assert.equal(structured(full).stdout, '3.14\n', JSON.stringify(full).slice(0, 2000));
    const wasm = await runCode(clients.full.client,
      { language: 'python', isolation: 'wasm', code: 'import e2e_demo_pkg' }, CALL);
    assert.equal(structured(wasm).isolation, 'wasm');
    assert.notEqual(structured(wasm).exit_code, 0, JSON.stringify(wasm).slice(0, 2000));
  });

  it('list_languages lists the packages where runs can import them', async () => {
    const list = async (c, language) => {
      const r = await c.client.callTool({ name: 'list_languages', arguments: { packages: true, language } }, undefined, CALL);
      const lang = structured(r).languages.find((l) => l.name === language);
      assert.ok(lang, JSON.stringify(r).slice(0, 2000));
      return lang.packages.native.packages ?? [];
    };
    const has = (pkgs, name, version) => pkgs.some((p) => p.name === name && p.version === version);
    const notes = async (c, language) => {
      const r = await c.client.callTool({ name: 'list_languages', arguments: { language } }, undefined, CALL);
      return structured(r).languages.find((l) => l.name === language).notes;
    };
    assert.match(await notes(clients.full, 'python'), /packages the operator installed for this endpoint/);
    assert.doesNotMatch(await notes(clients.bare, 'python'), /operator installed/);
    assert.doesNotMatch(await notes(clients.full, 'ruby'), /operator installed/);
    assert.ok(has(await list(clients.full, 'python'), 'e2e-demo-pkg', '2.0.1'));
    assert.ok(!has(await list(clients.bare, 'python'), 'e2e-demo-pkg', '2.0.1'));
    const js = await list(clients.full, 'javascript');
    assert.ok(js.some((p) => p.name === 'e2e-mod' && p.version === '3.1.4' && p.kind === 'package'), JSON.stringify(js).slice(-600));
  });

  it('a session keeps what it imported from the directory across calls', async () => {
    const c = clients.full.client;
    const opened = await c.callTool({ name: 'open_session', arguments: { language: 'python' } }, undefined, CALL);
    const id = structured(opened).session_id;
    assert.ok(id, JSON.stringify(opened).slice(0, 2000));
    const first = await runCode(c, { session_id: id, code: 'import e2e_demo_pkg\nv = e2e_demo_pkg.VALUE' }, CALL);
    assert.equal(structured(first).status, 'ok', JSON.stringify(first).slice(0, 2000));
    const second = await runCode(c, { session_id: id, code: 'print(v + 1)' }, CALL);
    assert.equal(structured(second).stdout, '8\n', JSON.stringify(second).slice(0, 2000));
    await c.callTool({ name: 'close_session', arguments: { session_id: id } }, undefined, CALL);
  });

  it('a config that names an unknown directory is refused before serving', () => {
    const bad = path.join(tmp, 'bad.json');
    write(bad, JSON.stringify({ endpoints: { default: { packages: ['nope'] } } }));
    const r = spawnSync(AIRLOCK_BIN, ['config', 'check', '--config', bad], { encoding: 'utf8', timeout: 30000 });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr + r.stdout, /endpoints\.default\.packages\[0\]: "nope" is not a package directory/);
  });
});
