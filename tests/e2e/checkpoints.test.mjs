// Session checkpoints end to end (docs/sessions.md, "Pause, resume and
// fork"): pause_session, resume_session and fork_session driven by both
// official MCP TypeScript SDK clients, over Streamable HTTP with two API keys:
//
//   * the v1 client (@modelcontextprotocol/sdk, legacy era) and the v2 client
//     (@modelcontextprotocol/client, pinned to the modern era 2026-07-28);
//   * a WASM-tier Python session's variables, imports and /work files come
//     back after pause_session, transparently on the next run_code; its jail
//     is really gone while paused (host view of /proc) and a new one runs it
//     afterwards; resume_session on a live session is fine;
//   * fork_session: a new session_id, forked_from the source, the two
//     independent both ways (variables and files), both listed, both
//     closable, a closed id is E_SESSION_NOT_FOUND; a paused source forks
//     from its image and stays paused;
//   * a native Python session refuses pause/fork with E_SESSION_NOT_PAUSABLE
//     and goes on;
//   * another API key cannot pause, resume or fork your session: answered
//     exactly like an unknown id, and nothing changes for the owner;
//   * audit events session_pause / session_fork (forked_from).
//
// The WASM parts are skipped (with the reason) on a host without the WASM
// tier's CPython, or whose CPython cache predates python-session.wasm (the
// reactor build that checkpoints need; scripts/wasm/build_python.sh).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Client as ClientV2, StreamableHTTPClientTransport as StreamableHTTPClientTransportV2 } from '@modelcontextprotocol/client';

import { AIRLOCK_BIN, connectHttp, startHttpServer, textOf, waitFor } from './helpers.mjs';

const MODERN = '2026-07-28';
const SESSION_ID_RE = /^s_[0-9a-f]{32}$/;
const CALL_TIMEOUT_MS = 90000;

const show = (r) => JSON.stringify(r?.structuredContent ?? r, null, 1).slice(0, 3000);
const rand = () => randomBytes(6).toString('hex');

// Where the WASM tier's CPython may be cached (src/runtimes/wasm_languages.cc):
// $AIRLOCK_WASM_CACHE, and the default, which `airlock serve`'s runner uses
// whatever the variable says (it is spawned with PATH only).
function wasmPythonDirs() {
  const env = process.env.AIRLOCK_WASM_CACHE;
  const dirs = env && env.startsWith('/') ? [env] : [];
  return [...dirs, '/var/cache/airlock/wasm'].map((d) => path.join(d, 'python'));
}

// Host PIDs of the processes whose jail's /work holds `name` (a file a cell
// wrote): the session's jail, seen from outside through /proc/PID/root.
function jailPids(name) {
  const pids = [];
  for (const ent of readdirSync('/proc')) {
    if (!/^\d+$/.test(ent) || Number(ent) === process.pid) continue;
    try {
      if (existsSync(`/proc/${ent}/root/work/${name}`)) pids.push(Number(ent));
    } catch {
      // exited meanwhile, or not ours to see
    }
  }
  return pids.sort((a, b) => a - b);
}

// ------------------------------------------------------------ the two clients
//
// Each connects with an API key and offers call(name, args): tools/call
// through the SDK's own callTool (which checks structuredContent against a
// tool's outputSchema, as agents' clients do).

async function connectV1(url, key) {
  const c = await connectHttp(url, { headers: { Authorization: `Bearer ${key}` } });
  return {
    client: c.client,
    call: (name, args) => c.client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS }),
    listTools: () => c.client.listTools(),
    era: () => c.protocolVersion(),
    close: () => c.close(),
  };
}

async function connectV2(url, key) {
  const client = new ClientV2({ name: 'airlock-e2e-checkpoints-v2', version: '0.0.0' },
    { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } });
  try {
    await client.connect(new StreamableHTTPClientTransportV2(new URL(url),
      { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  } catch (e) {
    await client.close().catch(() => {});
    throw new Error(`SDK v2 connect (pin ${MODERN}) to ${url} failed: ${e.message}`);
  }
  assert.equal(client.getProtocolEra(), 'modern');
  return {
    client,
    call: (name, args) => client.callTool({ name, arguments: args }, { timeout: CALL_TIMEOUT_MS }),
    listTools: () => client.listTools(),
    era: () => client.getNegotiatedProtocolVersion(),
    close: () => client.close(),
  };
}

const CLIENTS = [
  { label: 'SDK v1 client (@modelcontextprotocol/sdk)', connect: connectV1 },
  { label: `SDK v2 client (@modelcontextprotocol/client, modern era ${MODERN})`, connect: connectV2 },
];

// ------------------------------------------------------------ assertions

async function openSession(c, args) {
  const r = await c.call('open_session', args);
  assert.notEqual(r.isError, true, `open_session ${JSON.stringify(args)}: ${show(r)}`);
  const sc = r.structuredContent;
  assert.match(sc?.session_id ?? '', SESSION_ID_RE, show(r));
  assert.equal(sc.language, args.language, show(r));
  assert.equal(sc.isolation, args.isolation ?? 'native', show(r));
  return sc.session_id;
}

// A cell that must succeed; returns structuredContent.
async function okCell(c, id, code) {
  const r = await c.call('run_code', { session_id: id, code });
  const sc = r.structuredContent;
  assert.ok(sc, `structuredContent: ${show(r)}`);
  assert.equal(sc.status, 'ok', `cell ${JSON.stringify(code).slice(0, 300)}: ${show(r)}`);
  assert.notEqual(r.isError, true, show(r));
  assert.equal(sc.session_id, id, show(r));
  return sc;
}

// A tool error (isError) with this error_code, naming the session, whose text
// says the code too; returns structuredContent.
function expectToolError(r, errorCode, id, what) {
  assert.equal(r.isError, true, `${what}: expected isError, got ${show(r)}`);
  const sc = r.structuredContent;
  assert.ok(sc, `${what}: structuredContent on the error: ${show(r)}`);
  assert.equal(sc.error_code, errorCode, `${what}: ${show(r)}`);
  assert.equal(typeof sc.message, 'string', `${what}: ${show(r)}`);
  assert.ok(sc.message.length > 10, `${what}: a message that says what happened: ${show(r)}`);
  assert.equal(sc.session_id, id, `${what}: names the session: ${show(r)}`);
  assert.ok(textOf(r).length > 0, `${what}: a text block for the model: ${JSON.stringify(r.content)}`);
  return sc;
}

async function pause(c, id) {
  const r = await c.call('pause_session', { session_id: id });
  assert.notEqual(r.isError, true, `pause_session: ${show(r)}`);
  assert.deepEqual(r.structuredContent, { session_id: id, paused: true }, show(r));
  assert.match(textOf(r), new RegExp(`Paused session ${id}`));
}

async function resume(c, id) {
  const r = await c.call('resume_session', { session_id: id });
  assert.notEqual(r.isError, true, `resume_session: ${show(r)}`);
  assert.deepEqual(r.structuredContent, { session_id: id, paused: false }, show(r));
}

async function fork(c, id) {
  const r = await c.call('fork_session', { session_id: id });
  assert.notEqual(r.isError, true, `fork_session: ${show(r)}`);
  const sc = r.structuredContent;
  assert.match(sc?.session_id ?? '', SESSION_ID_RE, show(r));
  assert.notEqual(sc.session_id, id, 'the copy has a new session_id');
  assert.equal(sc.forked_from, id, show(r));
  assert.equal(sc.language, 'python', show(r));
  assert.equal(sc.isolation, 'wasm', show(r));
  assert.equal(sc.calls, 0, show(r));
  assert.ok(!Number.isNaN(Date.parse(sc.expires_at)), show(r));
  assert.ok(textOf(r).includes(sc.session_id), `the text names the copy: ${textOf(r)}`);
  return sc.session_id;
}

async function listIds(c) {
  const r = await c.call('list_sessions', {});
  assert.notEqual(r.isError, true, show(r));
  assert.ok(Array.isArray(r.structuredContent?.sessions), show(r));
  return r.structuredContent.sessions.map((s) => s.session_id);
}

async function closeSession(c, id) {
  const r = await c.call('close_session', { session_id: id });
  assert.notEqual(r.isError, true, `close_session: ${show(r)}`);
  assert.deepEqual(r.structuredContent, { session_id: id, closed: true });
}

// Best-effort cleanup: a test that failed half-way must not hold the
// per-caller limit for the next one.
async function closeQuietly(c, ...ids) {
  for (const id of ids) if (id) await c.call('close_session', { session_id: id }).catch(() => {});
}

// ------------------------------------------------------------ the tests

describe('session checkpoints (pause_session, resume_session, fork_session) over HTTP, two API keys', () => {
  let dir;
  let cfgFile;
  let server;
  let url;
  const keys = {};
  let wasmSkip = 'not probed';  // false when WASM Python sessions can be checkpointed here

  function cli(args) {
    const r = spawnSync(AIRLOCK_BIN, args, { encoding: 'utf8', timeout: 60000 });
    if (r.status !== 0) throw new Error(`airlock ${args.join(' ')} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
    return r;
  }

  const auditEvents = (target) => JSON.parse(cli(['audit', '--config', cfgFile, '--json']).stdout)
    .filter((row) => row.type === 'event' && row.target === target);

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'airlock-ckpt-'));
    const keysFile = path.join(dir, 'keys.json');
    cfgFile = path.join(dir, 'airlock.json');
    writeFileSync(cfgFile, JSON.stringify({
      server: { state_dir: path.join(dir, 'state'), http: { keys_file: keysFile }, shutdown_grace_s: 1 },
      endpoints: { main: { path: '/mcp', code_mode: 'off' } },
    }, null, 2));
    for (const user of ['alice', 'bob']) {
      const r = cli(['keys', 'create', '--file', keysFile, '--config', cfgFile, '--as', 'setup', '--user', user,
        '--role', 'admin', '--json']);
      keys[user] = JSON.parse(r.stdout).secret;
      assert.ok(keys[user], `a key for ${user}`);
    }
    server = await startHttpServer({ args: ['--config', cfgFile] });
    url = `http://127.0.0.1:${server.port}/mcp`;

    // What this host offers: WASM Python sessions (list_languages
    // session_tiers), and the reactor build that checkpoints them.
    const probe = await connectV1(url, keys.alice);
    try {
      const r = await probe.call('list_languages', {});
      const py = r.structuredContent?.languages?.find((l) => l.name === 'python');
      const reactors = wasmPythonDirs().map((d) => path.join(d, 'python-session.wasm'));
      if (!py?.session_tiers?.includes('wasm')) {
        wasmSkip = `no WASM-tier Python sessions on this host (list_languages python session_tiers: ${JSON.stringify(py?.session_tiers)}; no CPython WASI build, scripts/wasm/build_python.sh)`;
      } else if (!reactors.some((f) => existsSync(f))) {
        wasmSkip = `the WASM CPython cache has no python-session.wasm (${reactors.join(', ')}): built before checkpoints; rerun scripts/wasm/build_python.sh`;
      } else {
        wasmSkip = false;
      }
    } finally {
      await probe.close();
    }
  });

  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const flavor of CLIENTS) {
    describe(flavor.label, () => {
      let alice;
      let bob;

      before(async () => {
        alice = await flavor.connect(url, keys.alice);
        bob = await flavor.connect(url, keys.bob);
      });
      after(async () => {
        await alice?.close().catch(() => {});
        await bob?.close().catch(() => {});
      });

      it('tools/list offers pause_session, resume_session and fork_session, each taking a session_id', async () => {
        const { tools } = await alice.listTools();
        for (const name of ['pause_session', 'resume_session', 'fork_session']) {
          const tool = tools.find((t) => t.name === name);
          assert.ok(tool, `${name} in ${tools.map((t) => t.name)}`);
          assert.deepEqual(tool.inputSchema.required, ['session_id'], name);
          assert.equal(tool.inputSchema.properties.session_id.type, 'string', name);
          assert.match(tool.description, /WASM/, `${name}'s description says which sessions can be checkpointed`);
        }
      });

      it('pause_session: variables, imports and /work files come back on the next run_code; resume_session on a live session is fine', async (t) => {
        if (wasmSkip) return t.skip(wasmSkip);
        const secret = `alpha-${rand()}`;
        const note = `note-${rand()}`;
        const file = `ckpt-${process.pid}-${rand()}.txt`;
        const id = await openSession(alice, { language: 'python', isolation: 'wasm' });
        try {
          await okCell(alice, id, [
            'import json',
            `secret = ${JSON.stringify(secret)}`,
            `with open("/work/${file}", "w") as f:`,
            `    f.write(${JSON.stringify(note)})`,
            'counter = 1',
            'print("ready")',
          ].join('\n'));
          const live = jailPids(file);
          assert.ok(live.length > 0, `the session's jail is seen from the host (its /work holds ${file})`);

          await pause(alice, id);
          // Paused: the jail is destroyed, nothing of it runs.
          assert.ok(await waitFor(() => jailPids(file).length === 0, 10000),
            `no process of the paused session's jail is left: ${jailPids(file)}`);
          // Pausing a paused session again is fine, and it stays listed.
          await pause(alice, id);
          assert.ok((await listIds(alice)).includes(id), 'a paused session is still listed');

          // The next run_code brings it back, transparently.
          const sc = await okCell(alice, id, [
            'print(secret)',
            `print(open("/work/${file}").read())`,
            'print(json.dumps({"counter": counter}))',
            'counter += 1',
          ].join('\n'));
          assert.equal(sc.stdout, `${secret}\n${note}\n{"counter": 1}\n`, show(sc));
          assert.equal(sc.isolation, 'wasm');
          const restored = jailPids(file);
          assert.ok(restored.length > 0, 'the restored session runs in a jail again');
          assert.ok(!restored.some((p) => live.includes(p)), `a new jail (pids ${restored}, before ${live})`);

          // resume_session on a live session leaves it as it is.
          await resume(alice, id);
          assert.deepEqual(jailPids(file), restored, 'resume_session on a live session changed nothing');
          assert.equal((await okCell(alice, id, 'print(counter, secret)')).stdout, `2 ${secret}\n`);

          // resume_session on a paused one brings it back before the next call.
          await pause(alice, id);
          assert.ok(await waitFor(() => jailPids(file).length === 0, 10000), 'paused again');
          await resume(alice, id);
          assert.ok(jailPids(file).length > 0, 'resume_session restored the jail at once');
          assert.equal((await okCell(alice, id, 'print(counter, json.loads("[7]")[0])')).stdout, '2 7\n');

          const kinds = auditEvents(id).map((e) => e.kind);
          assert.ok(kinds.includes('session_pause'), `audit: ${kinds}`);
          assert.ok(kinds.includes('session_resume'), `audit: ${kinds}`);
          for (const e of auditEvents(id)) assert.match(String(e.actor), /alice/, JSON.stringify(e));
        } finally {
          await closeQuietly(alice, id);
        }
      });

      it('fork_session: a new session_id forked_from the source, independent both ways, both listed and closable', async (t) => {
        if (wasmSkip) return t.skip(wasmSkip);
        const file = `fork-${process.pid}-${rand()}.txt`;
        let src;
        let copy;
        let copy2;
        try {
          src = await openSession(alice, { language: 'python', isolation: 'wasm' });
          await okCell(alice, src, [
            'import json',
            'x = 1',
            'items = ["a"]',
            `open("/work/${file}", "w").write("shared")`,
          ].join('\n'));
          const srcPids = jailPids(file);
          assert.ok(srcPids.length > 0, 'the source\'s jail is seen from the host');

          copy = await fork(alice, src);
          assert.ok(jailPids(file).length > srcPids.length, `the copy runs in a jail of its own: ${jailPids(file)} vs ${srcPids}`);
          assert.equal((await okCell(alice, copy, `print(x, items, open("/work/${file}").read(), json.dumps(x))`)).stdout,
            '1 [\'a\'] shared 1\n', 'the copy starts with the source\'s variables, imports and files');

          // A change in the source is not seen in the copy...
          await okCell(alice, src, [
            'x = 100',
            'items.append("src")',
            `open("/work/${file}", "w").write("changed-in-source")`,
            'open("/work/only-source.txt", "w").write("s")',
          ].join('\n'));
          assert.equal((await okCell(alice, copy, [
            'import os',
            `print(x, items, open("/work/${file}").read(), os.path.exists("/work/only-source.txt"))`,
          ].join('\n'))).stdout, '1 [\'a\'] shared False\n', 'the copy does not see the source\'s changes');
          // ...and vice versa.
          await okCell(alice, copy, [
            'x = -5',
            'items.append("copy")',
            'y_only_in_copy = True',
            'open("/work/only-copy.txt", "w").write("c")',
          ].join('\n'));
          assert.equal((await okCell(alice, src, [
            'import os',
            `print(x, items, "y_only_in_copy" in globals(), open("/work/${file}").read(), os.path.exists("/work/only-copy.txt"))`,
          ].join('\n'))).stdout, '100 [\'a\', \'src\'] False changed-in-source False\n', 'the source does not see the copy\'s changes');
          assert.equal((await okCell(alice, copy, 'print(x, items)')).stdout, '-5 [\'a\', \'copy\']\n');

          // A paused source forks from its image and stays paused.
          await pause(alice, src);
          assert.ok(await waitFor(() => jailPids('only-source.txt').length === 0, 10000), 'the source is paused');
          copy2 = await fork(alice, src);
          assert.notEqual(copy2, copy);
          assert.equal((await okCell(alice, copy2, 'print(x, items)')).stdout, '100 [\'a\', \'src\']\n');
          const onlySource = jailPids('only-source.txt');
          assert.ok(onlySource.length > 0, 'the second copy holds the source\'s files');
          await okCell(alice, copy2, 'x = 7');
          assert.equal((await okCell(alice, src, 'print(x)')).stdout, '100\n', 'the paused source came back unchanged');

          const ids = await listIds(alice);
          for (const id of [src, copy, copy2]) assert.ok(ids.includes(id), `list_sessions shows ${id}: ${ids}`);

          const forkEvents = auditEvents(copy).filter((e) => e.kind === 'session_fork');
          assert.equal(forkEvents.length, 1, JSON.stringify(auditEvents(copy)));
          assert.match(JSON.stringify(forkEvents[0]), new RegExp(`"forked_from":"${src}"`), JSON.stringify(forkEvents[0]));

          for (const id of [src, copy, copy2]) await closeSession(alice, id);
          const left = await listIds(alice);
          for (const id of [src, copy, copy2]) assert.ok(!left.includes(id), `${id} closed: ${left}`);
          assert.ok(await waitFor(() => jailPids(file).length === 0, 10000), `no jail left after close: ${jailPids(file)}`);
          for (const id of [src, copy]) {
            const r = await alice.call('run_code', { session_id: id, code: 'print(x)' });
            expectToolError(r, 'E_SESSION_NOT_FOUND', id, 'run_code in a closed session');
            expectToolError(await alice.call('fork_session', { session_id: id }), 'E_SESSION_NOT_FOUND', id,
              'fork_session of a closed session');
            expectToolError(await alice.call('pause_session', { session_id: id }), 'E_SESSION_NOT_FOUND', id,
              'pause_session of a closed session');
          }
        } finally {
          await closeQuietly(alice, src, copy, copy2);
        }
      });

      it('a native Python session refuses pause_session and fork_session with E_SESSION_NOT_PAUSABLE and goes on', async () => {
        const id = await openSession(alice, { language: 'python', isolation: 'native' });
        try {
          await okCell(alice, id, 'kept = 41');
          const before = await listIds(alice);
          for (const tool of ['pause_session', 'fork_session']) {
            const r = await alice.call(tool, { session_id: id });
            const sc = expectToolError(r, 'E_SESSION_NOT_PAUSABLE', id, `${tool} of a native session`);
            assert.match(textOf(r), /E_SESSION_NOT_PAUSABLE/, `${tool}: the text names the code`);
            assert.match(sc.message, /WASM/, `${tool}: the message says which sessions can: ${sc.message}`);
          }
          assert.deepEqual((await listIds(alice)).sort(), before.sort(), 'the refused fork opened nothing');
          const sc = await okCell(alice, id, 'kept += 1\nprint(kept)');
          assert.equal(sc.stdout, '42\n', 'the session still runs, with its state');
          assert.equal(sc.isolation, 'native');
        } finally {
          await closeQuietly(alice, id);
        }
      });

      it('another API key cannot pause, resume or fork your session: answered like an unknown id', async (t) => {
        if (wasmSkip) return t.skip(wasmSkip);
        const file = `owner-${process.pid}-${rand()}.txt`;
        const id = await openSession(alice, { language: 'python', isolation: 'wasm' });
        try {
          await okCell(alice, id, `owner = "alice"\nopen("/work/${file}", "w").write("a")`);
          const live = jailPids(file);
          assert.ok(live.length > 0, 'alice\'s jail is seen from the host');
          const aliceBefore = (await listIds(alice)).sort();
          const unknown = `s_${randomBytes(16).toString('hex')}`;
          const norm = (r, sid) => JSON.stringify({ isError: r.isError, content: r.content, structuredContent: r.structuredContent })
            .split(sid).join('<ID>');
          for (const tool of ['pause_session', 'resume_session', 'fork_session']) {
            const theirs = await bob.call(tool, { session_id: id });
            const none = await bob.call(tool, { session_id: unknown });
            expectToolError(theirs, 'E_SESSION_NOT_FOUND', id, `bob's ${tool} of alice's session`);
            expectToolError(none, 'E_SESSION_NOT_FOUND', unknown, `bob's ${tool} of an unknown session`);
            assert.equal(norm(theirs, id), norm(none, unknown), `${tool}: identical to an unknown id apart from the id`);
            assert.doesNotMatch(JSON.stringify(theirs), /alice|wasm|python/i, `${tool}: nothing of alice's session leaks`);
          }
          // Nothing changed for alice: the jail is the same one (not paused),
          // no copy was made for anyone.
          assert.deepEqual(jailPids(file), live, 'bob\'s pause did not pause alice\'s session');
          assert.ok(!(await listIds(bob)).length, `bob has no session: ${await listIds(bob)}`);
          assert.deepEqual((await listIds(alice)).sort(), aliceBefore, 'no copy was made');
          assert.equal((await okCell(alice, id, 'print(owner)')).stdout, 'alice\n');
          const kinds = auditEvents(id).map((e) => e.kind);
          assert.ok(!kinds.includes('session_pause') && !kinds.includes('session_fork'), `audit: ${kinds}`);
        } finally {
          await closeQuietly(alice, id);
        }
      });
    });
  }
});
