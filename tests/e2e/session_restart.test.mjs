// Paused sessions across a runner restart (docs/sessions.md, "Across a
// runner restart"; config key sessions.image_dir): `airlock serve` over
// stdio, driven by the official v1 SDK client (@modelcontextprotocol/sdk),
// with sessions.image_dir set to a fresh absolute path and
// sessions.pause_after_s 0 (nothing is paused by the idle timer).
//
//   * the runner makes the image directory, mode 0700;
//   * two WASM-tier Python sessions get state (variables, an import, a /work
//     file); one is paused: its image and manifest (<name>.image +
//     <name>.json, naming the session) are in the directory, the other
//     (live) leaves nothing there;
//   * the runner child of `airlock serve` is SIGKILLed; the server starts a
//     new one (another pid), which takes the paused session back;
//   * run_code in the paused session's id restores it: the variables and
//     the /work file are intact, and it goes on (a new cell sees the old
//     state); its image is consumed;
//   * the session that was live when the runner died is lost: run_code in
//     it is a tool error E_SESSION_LOST (the gateway's mapping of the new
//     runner's E_SESSION_NOT_FOUND), and stays so;
//   * close_session of both: the directory holds no .image/.json file; the
//     closed id is E_SESSION_NOT_FOUND.
//
// Skipped (with the reason) on a host without WASM-tier Python sessions
// (no CPython WASI build, or one that predates python-session.wasm).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { connectStdio, textOf, waitFor } from './helpers.mjs';

const SESSION_ID_RE = /^s_[0-9a-f]{32}$/;
const CALL_TIMEOUT_MS = 90000;

const show = (r) => JSON.stringify(r?.structuredContent ?? r, null, 1).slice(0, 3000);

// Where the WASM tier's CPython may be cached (src/runtimes/wasm_languages.cc):
// $AIRLOCK_WASM_CACHE, and the default, which `airlock serve`'s runner uses
// whatever the variable says (it is spawned with PATH only).
function wasmPythonDirs() {
  const env = process.env.AIRLOCK_WASM_CACHE;
  const dirs = env && env.startsWith('/') ? [env] : [];
  return [...dirs, '/var/cache/airlock/wasm'].map((d) => path.join(d, 'python'));
}

// ------------------------------------------------------------ processes
// (as in faults.test.mjs)

function isLive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
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

// ------------------------------------------------------------ the image dir

// The .image and .json files in `dir` (sorted), and anything else in it.
function imageFiles(dir) {
  const all = existsSync(dir) ? readdirSync(dir).sort() : [];
  return {
    images: all.filter((f) => f.endsWith('.image')),
    manifests: all.filter((f) => f.endsWith('.json')),
    all,
  };
}

// ------------------------------------------------------------ the test

describe('sessions.image_dir: a paused WASM Python session survives a SIGKILLed runner; a live one is lost', () => {
  let tmp;
  let imageDir;
  let conn;
  let serverPid;
  let skip = 'not probed';  // false when WASM Python sessions can be paused here
  // Shared between the steps below (each checks what it needs is there).
  let paused;       // the session paused before the kill
  let live;         // the session live at the kill
  let oldRunner;
  let newRunner;
  const token = randomBytes(8).toString('hex');

  const call = (name, args) => conn.client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS });
  const serverStderr = () => conn?.stderr() ?? '';

  async function openSession() {
    const r = await call('open_session', { language: 'python', isolation: 'wasm' });
    assert.notEqual(r.isError, true, `open_session: ${show(r)}`);
    const sc = r.structuredContent;
    assert.match(sc?.session_id ?? '', SESSION_ID_RE, show(r));
    assert.equal(sc.language, 'python', show(r));
    assert.equal(sc.isolation, 'wasm', show(r));
    return sc.session_id;
  }

  // A cell that must succeed; returns structuredContent.
  async function okCell(id, code) {
    const r = await call('run_code', { session_id: id, code });
    const sc = r.structuredContent;
    assert.ok(sc, `structuredContent: ${show(r)}`);
    assert.equal(sc.status, 'ok', `cell ${JSON.stringify(code).slice(0, 300)}: ${show(r)}\n--- airlock stderr ---\n${serverStderr().slice(-4000)}`);
    assert.notEqual(r.isError, true, show(r));
    assert.equal(sc.session_id, id, show(r));
    return sc;
  }

  // A tool error (isError) with this error_code, naming the session.
  function expectToolError(r, errorCode, id, what) {
    assert.equal(r.isError, true, `${what}: expected isError, got ${show(r)}`);
    const sc = r.structuredContent;
    assert.ok(sc, `${what}: structuredContent on the error: ${show(r)}`);
    assert.equal(sc.error_code, errorCode, `${what}: ${show(r)}`);
    assert.equal(typeof sc.message, 'string', `${what}: ${show(r)}`);
    assert.equal(sc.session_id, id, `${what}: names the session: ${show(r)}`);
    assert.ok(textOf(r).length > 0, `${what}: a text block for the model: ${JSON.stringify(r.content)}`);
    return sc;
  }

  before(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'airlock-e2e-session-restart-'));
    imageDir = path.join(tmp, 'images');  // absent: the runner makes it
    const config = path.join(tmp, 'config.json');
    writeFileSync(config, JSON.stringify({
      server: { state_dir: path.join(tmp, 'state') },
      sessions: { pause_after_s: 0, image_dir: imageDir },
    }, null, 2));
    conn = await connectStdio({ args: ['--config', config] });
    serverPid = conn.transport.pid;
    assert.ok(serverPid, 'the pid of airlock serve');

    const r = await call('list_languages', {});
    const py = r.structuredContent?.languages?.find((l) => l.name === 'python');
    const reactors = wasmPythonDirs().map((d) => path.join(d, 'python-session.wasm'));
    if (!py?.session_tiers?.includes('wasm')) {
      skip = `no WASM-tier Python sessions on this host (list_languages python session_tiers: ${JSON.stringify(py?.session_tiers)}; no CPython WASI build, scripts/wasm/build_python.sh)`;
    } else if (!reactors.some((f) => existsSync(f))) {
      skip = `the WASM CPython cache has no python-session.wasm (${reactors.join(', ')}): built before checkpoints; rerun scripts/wasm/build_python.sh`;
    } else {
      const names = (await conn.client.listTools()).tools.map((t) => t.name);
      const missing = ['open_session', 'pause_session', 'close_session'].filter((n) => !names.includes(n));
      skip = missing.length > 0 ? `tools/list lacks ${missing.join(', ')}` : false;
    }
  });

  after(async () => {
    // Close what a failed step left open, so that the stopping runner pauses
    // nothing into the directory; then stop the server and remove it all.
    for (const id of [paused, live]) {
      if (id && conn) await call('close_session', { session_id: id }).catch(() => {});
    }
    await conn?.close().catch(() => {});
    if (serverPid) await waitFor(() => !isLive(serverPid), 10000);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('opens two WASM Python sessions, pauses one: its image and manifest are in sessions.image_dir (made 0700)', async (t) => {
    if (skip) return t.skip(skip);
    paused = await openSession();
    live = await openSession();
    assert.notEqual(paused, live);

    // The runner made the directory (it did not exist), closed to others.
    assert.ok(existsSync(imageDir), `the runner made ${imageDir}\n--- airlock stderr ---\n${serverStderr()}`);
    const st = statSync(imageDir);
    assert.ok(st.isDirectory());
    assert.equal(st.mode & 0o777, 0o700, `mode of ${imageDir}: ${(st.mode & 0o777).toString(8)}`);
    assert.equal(st.uid, process.getuid(), 'owned by the runner\'s user (ours)');

    for (const [id, tag] of [[paused, 'paused'], [live, 'live']]) {
      const sc = await okCell(id, [
        'import json, os, sys',
        `token = ${JSON.stringify(`${tag}-${token}`)}`,
        'counter = 41',
        'data = {"xs": [1, 2, 3], "nested": {"k": "v"}}',
        'def twice(v):',
        '    return 2 * v',
        `with open("/work/note.txt", "w") as f: f.write("note " + token)`,
        'os.makedirs("/work/sub", exist_ok=True)',
        'with open("/work/sub/data.json", "w") as f: json.dump(data, f)',
        'print(sys.platform, token)',
      ].join('\n'));
      assert.equal(sc.stdout, `wasi ${tag}-${token}\n`, show({ structuredContent: sc }));
    }
    // Nothing paused yet (pause_after_s 0): the directory is empty.
    assert.deepEqual(imageFiles(imageDir).all, [], 'no image before pause_session');

    const r = await call('pause_session', { session_id: paused });
    assert.notEqual(r.isError, true, `pause_session: ${show(r)}`);
    assert.deepEqual(r.structuredContent, { session_id: paused, paused: true }, show(r));

    const files = imageFiles(imageDir);
    t.diagnostic(`after pause_session: ${JSON.stringify(files.all)}`);
    assert.equal(files.images.length, 1, `one image after the pause: ${JSON.stringify(files.all)}`);
    assert.equal(files.manifests.length, 1, `one manifest after the pause: ${JSON.stringify(files.all)}`);
    const base = files.images[0].slice(0, -'.image'.length);
    assert.equal(files.manifests[0], `${base}.json`, 'the manifest sits beside its image');
    const image = path.join(imageDir, files.images[0]);
    assert.ok(statSync(image).size > 0, 'the image is not empty');
    assert.equal(statSync(image).mode & 0o077, 0, 'the image is closed to others');
    const manifest = JSON.parse(readFileSync(path.join(imageDir, files.manifests[0]), 'utf8'));
    assert.equal(manifest.image, files.images[0], JSON.stringify(manifest));
    assert.ok(JSON.stringify(manifest.session).includes(paused), `the manifest names the paused session: ${JSON.stringify(manifest)}`);
    assert.ok(!JSON.stringify(manifest).includes(live), 'nothing of the live session');
    assert.equal(typeof manifest.paused_at, 'number');
    assert.ok(Math.abs(manifest.paused_at - Date.now() / 1000) < 300, `paused_at ${manifest.paused_at}`);
  });

  it('the runner SIGKILLed with the image (and manifest) in place: airlock serve starts another runner', async (t) => {
    if (skip) return t.skip(skip);
    assert.ok(paused && live, 'the sessions of the previous step');
    oldRunner = runnerOf(serverPid);
    assert.ok(oldRunner, `no runner child of airlock serve (${serverPid}): ${childrenOf(serverPid)}`);
    // Just before the kill: the image and manifest are there.
    const before = imageFiles(imageDir);
    assert.equal(before.images.length, 1, `the image before the kill: ${JSON.stringify(before.all)}`);
    assert.equal(before.manifests.length, 1, `the manifest before the kill: ${JSON.stringify(before.all)}`);

    process.kill(oldRunner, 'SIGKILL');
    assert.ok(await waitFor(() => !isLive(oldRunner), 10000), `the runner ${oldRunner} died`);
    // A SIGKILLed runner pauses nothing: the directory is as it was.
    assert.deepEqual(imageFiles(imageDir).all, before.all, 'the kill changed nothing in the image directory');

    // The server restarts its runner (at once, or at the next call: the
    // next step's run_code; wait a little for the former).
    newRunner = await waitFor(() => {
      const r = runnerOf(serverPid);
      return r && r !== oldRunner ? r : undefined;
    }, 10000);
    t.diagnostic(`old runner ${oldRunner}, new runner ${newRunner ?? '(not yet: started by the next call)'}`);
    assert.ok(isLive(serverPid), 'airlock serve is still up');
  });

  it('run_code in the paused session restores it in the new runner: variables and /work files intact', async (t) => {
    if (skip) return t.skip(skip);
    assert.ok(paused && oldRunner, 'the previous steps');
    const sc = await okCell(paused, [
      'import json',
      'print(token)',
      'print(counter + 1, twice(counter))',
      'print(json.dumps(data, sort_keys=True))',
      'print(open("/work/note.txt").read())',
      'print(json.load(open("/work/sub/data.json")) == data)',
      'print(sorted(n for n in ("json", "os", "sys") if n in globals()))',
      'counter += 100',
    ].join('\n'));
    assert.equal(sc.stdout, [
      `paused-${token}`,
      '42 82',
      '{"nested": {"k": "v"}, "xs": [1, 2, 3]}',
      `note paused-${token}`,
      'True',
      "['json', 'os', 'sys']",
      '',
    ].join('\n'), `the restored state: ${show({ structuredContent: sc })}`);

    // It is served by a new runner, not the killed one.
    newRunner = runnerOf(serverPid);
    assert.ok(newRunner, `a runner child of airlock serve (${serverPid}) after the restore`);
    assert.notEqual(newRunner, oldRunner, `a new runner (old ${oldRunner}, now ${newRunner})`);
    assert.ok(!isLive(oldRunner), 'the old runner is gone');
    assert.match(serverStderr(), /took back 1 paused session\(s\) from /, 'the new runner says it adopted the session');

    // The image was consumed by the restore; the session goes on, live.
    assert.deepEqual(imageFiles(imageDir).all, [], 'the restore consumed the image and its manifest');
    const next = await okCell(paused, 'print(counter, token)');
    assert.equal(next.stdout, `141 paused-${token}\n`);

    const listed = await call('list_sessions', {});
    assert.ok(listed.structuredContent.sessions.some((s) => s.session_id === paused), show(listed));
  });

  it('the session that was live at the kill is lost: E_SESSION_LOST, on every later call', async (t) => {
    if (skip) return t.skip(skip);
    assert.ok(live && oldRunner, 'the previous steps');
    const r = await call('run_code', { session_id: live, code: 'print(token)' });
    const sc = expectToolError(r, 'E_SESSION_LOST', live, 'run_code in the session live at the kill');
    assert.match(sc.message, /runner/, show(r));
    t.diagnostic(`the lost session's answer: ${sc.error_code}: ${sc.message}`);
    assert.doesNotMatch(sc.stdout ?? '', new RegExp(token), 'none of its state came back');
    const again = await call('run_code', { session_id: live, code: 'print(1)' });
    expectToolError(again, 'E_SESSION_LOST', live, 'a second run_code in the lost session');
    // The runner did not restart again (the lost session is not a crash).
    assert.equal(runnerOf(serverPid), newRunner, 'the same (new) runner');
  });

  it('close_session of both: no .image/.json left in the directory; the closed id is unknown', async (t) => {
    if (skip) return t.skip(skip);
    assert.ok(paused && live, 'the previous steps');
    // Paused again first, so that close_session must delete an image.
    const p = await call('pause_session', { session_id: paused });
    assert.deepEqual(p.structuredContent, { session_id: paused, paused: true }, show(p));
    const mid = imageFiles(imageDir);
    assert.equal(mid.images.length, 1, `the re-paused session's image: ${JSON.stringify(mid.all)}`);
    assert.equal(mid.manifests.length, 1, `the re-paused session's manifest: ${JSON.stringify(mid.all)}`);

    for (const id of [paused, live]) {
      const r = await call('close_session', { session_id: id });
      assert.notEqual(r.isError, true, `close_session ${id}: ${show(r)}`);
      assert.deepEqual(r.structuredContent, { session_id: id, closed: true }, show(r));
    }
    const closedId = paused;
    paused = undefined;
    live = undefined;
    // The image goes with the session (a retired jail may take a moment).
    const gone = await waitFor(() => {
      const f = imageFiles(imageDir);
      return f.images.length === 0 && f.manifests.length === 0;
    }, 5000);
    assert.ok(gone, `left in ${imageDir}: ${JSON.stringify(imageFiles(imageDir).all)}`);

    const r = await call('run_code', { session_id: closedId, code: 'print(1)' });
    expectToolError(r, 'E_SESSION_NOT_FOUND', closedId, 'run_code in the closed session');
  });
});
