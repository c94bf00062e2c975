// Stateful sessions end to end (issue 17, docs/sessions.md), driven by the
// official MCP TypeScript SDK client over stdio and Streamable HTTP:
//
//   * every session language: state, the working directory and files persist
//     from call to call; close_session; a closed id is E_SESSION_NOT_FOUND
//   * the "done when" scenario: CSV -> pandas -> transform -> matplotlib PNG
//   * two sessions cannot see each other; two API keys cannot see each
//     other's sessions (answered exactly like an unknown id)
//   * idle expiry, maximum lifetime, max_per_caller, max_total, the CPU
//     budget, sessions turned off (config, endpoint), every refusal; error
//     results that the SDK client accepts (status set)
//   * timeout / memory (one call or across calls) / output cap / cancel /
//     interpreter exit / runner killed -> E_SESSION_LOST; an uncaught
//     exception, sys.exit and Ruby's exit do not end the session;
//     E_SESSION_BUSY for a concurrent call
//   * background processes die when the call ends; nothing (process, cgroup)
//     is left after close, loss, expiry, runner death and server shutdown
//   * audit events (session_open/close/expire/lost) and session_call runs
//
// Host-side checks: each session gets a marker file in its /work (passed in
// `files`), so its jail's processes are the ones whose /proc/PID/root/work
// holds that file; their /proc/PID/cgroup names the session's cgroups.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

import {
  AIRLOCK_BIN, PNG_MAGIC, RESULT_KEYS, connectHttp, connectStdio, errorOrResult, sleep, startHttpServer, textOf,
  waitFor,
} from './helpers.mjs';

const SESSION_LANGUAGES = ['python', 'javascript', 'ruby', 'php', 'bash'];
const SESSION_ID_RE = /^s_[0-9a-f]{32}$/;
const CALL_TIMEOUT = { timeout: 90000 };

// ------------------------------------------------------------ small helpers

function show(r) {
  return JSON.stringify(r?.structuredContent ?? r, null, 1).slice(0, 3000);
}

function tmpConfig(tag, config) {
  const dir = mkdtempSync(path.join(tmpdir(), `airlock-sess-${tag}-`));
  const file = path.join(dir, 'airlock.json');
  const full = { ...config, server: { state_dir: path.join(dir, 'state'), ...(config.server ?? {}) } };
  writeFileSync(file, JSON.stringify(full, null, 2));
  return { dir, file };
}

function randomSessionId() {
  return `s_${randomBytes(16).toString('hex')}`;
}

function markerName() {
  return `.e2e-jail-${process.pid}-${randomBytes(6).toString('hex')}`;
}

// tools/call through the SDK client's callTool, which validates
// structuredContent against the tool's outputSchema (as agents' clients do).
function sdkCall(client, name, args, options = {}) {
  return client.callTool({ name, arguments: args }, undefined, { ...CALL_TIMEOUT, ...options });
}

// tools/call without the client-side outputSchema validation, so that an
// error result's own fields can be checked even if it does not match the
// schema (that is checked separately).
function rawCall(client, name, args, options = {}) {
  return client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema,
    { ...CALL_TIMEOUT, ...options });
}

async function openSession(client, args) {
  const r = await sdkCall(client, 'open_session', args);
  assert.notEqual(r.isError, true, `open_session ${JSON.stringify(args)} failed: ${show(r)}`);
  const sc = r.structuredContent;
  assert.ok(sc, 'open_session returns structuredContent');
  assert.match(sc.session_id, SESSION_ID_RE, show(r));
  assert.equal(sc.language, args.language);
  assert.equal(sc.isolation, args.isolation ?? 'native');
  assert.ok(Number.isInteger(sc.idle_timeout_s) && sc.idle_timeout_s > 0, show(r));
  assert.ok(!Number.isNaN(Date.parse(sc.expires_at)) && /Z$/.test(sc.expires_at), `expires_at ISO UTC: ${sc.expires_at}`);
  assert.ok(Number.isInteger(sc.max_lifetime_s) && sc.max_lifetime_s > 0, show(r));
  assert.ok(Number.isInteger(sc.memory_mb) && sc.memory_mb > 0, show(r));
  return sc;
}

function cell(client, sessionId, code, extra = {}, options = {}) {
  return sdkCall(client, 'run_code', { session_id: sessionId, code, ...extra }, options);
}

// A cell that must succeed; returns structuredContent.
async function okCell(client, sessionId, code, extra = {}) {
  const r = await cell(client, sessionId, code, extra);
  const sc = r.structuredContent;
  assert.ok(sc, `structuredContent present: ${show(r)}`);
  assert.equal(sc.status, 'ok', `cell ${JSON.stringify(code).slice(0, 200)}: ${show(r)}`);
  assert.notEqual(r.isError, true, show(r));
  assert.equal(sc.session_id, sessionId);
  return sc;
}

// A tool result with isError and this error_code; returns structuredContent.
function expectToolError(r, errorCode, sessionId, what = '') {
  assert.equal(r.isError, true, `${what}: expected isError, got ${show(r)}`);
  const sc = r.structuredContent;
  assert.ok(sc, `${what}: error results have structuredContent: ${show(r)}`);
  const codes = Array.isArray(errorCode) ? errorCode : [errorCode];
  assert.ok(codes.includes(sc.error_code), `${what}: error_code ${sc.error_code}, want ${codes.join(' or ')}: ${show(r)}`);
  assert.equal(typeof sc.message, 'string', `${what}: message: ${show(r)}`);
  assert.ok(sc.message.length > 10, `${what}: a message that says what happened: ${show(r)}`);
  if (sessionId) assert.equal(sc.session_id, sessionId, `${what}: names the session: ${show(r)}`);
  assert.ok(textOf(r).length > 0, `${what}: a text content block for the model: ${JSON.stringify(r.content)}`);
  return sc;
}

async function closeSession(client, sessionId) {
  const r = await sdkCall(client, 'close_session', { session_id: sessionId });
  assert.notEqual(r.isError, true, `close_session: ${show(r)}`);
  assert.deepEqual(r.structuredContent, { session_id: sessionId, closed: true });
}

// Best-effort cleanup (a test that failed half-way must not hold the
// per-caller limit for the next one).
async function closeQuietly(client, ...ids) {
  for (const id of ids) {
    if (id) await rawCall(client, 'close_session', { session_id: id }).catch(() => {});
  }
}

async function listSessions(client) {
  const r = await sdkCall(client, 'list_sessions', {});
  assert.notEqual(r.isError, true, show(r));
  assert.ok(Array.isArray(r.structuredContent?.sessions), show(r));
  return r.structuredContent.sessions;
}

async function toolNames(client) {
  return (await client.listTools()).tools.map((t) => t.name);
}

// ------------------------------------------------------------ host (/proc, cgroups)

function readText(file) {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

function numericDirs(dir) {
  try {
    return readdirSync(dir).filter((e) => /^\d+$/.test(e)).map(Number);
  } catch {
    return [];
  }
}

// {ppid, starttime} of a process, or null when it is gone (zombies count as gone).
function procStat(pid) {
  const stat = readText(`/proc/${pid}/stat`);
  if (!stat) return null;
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (rest[0] === 'Z' || rest[0] === 'X') return null;
  return { ppid: Number(rest[1]), starttime: rest[19] };
}

function cmdline(pid) {
  return (readText(`/proc/${pid}/cmdline`) ?? '').split('\0').join(' ');
}

// Processes of the jail whose /work holds `marker` (init, the interpreter,
// anything they started), as "pid:starttime" identities.
function jailProcs(marker) {
  const out = [];
  for (const pid of numericDirs('/proc')) {
    if (pid === process.pid) continue;
    try {
      if (!existsSync(`/proc/${pid}/root/work/${marker}`)) continue;
    } catch {
      continue;
    }
    const st = procStat(pid);
    if (st) out.push(`${pid}:${st.starttime}`);
  }
  return out;
}

function procAlive(identity) {
  const [pid, start] = identity.split(':');
  const st = procStat(Number(pid));
  return st !== null && st.starttime === start;
}

// "/sys/fs/cgroup/<hierarchy><path>" for each line of /proc/PID/cgroup.
function cgroupDirsOf(pid, { onlyAirlock = true } = {}) {
  const dirs = new Set();
  for (const line of (readText(`/proc/${pid}/cgroup`) ?? '').split('\n')) {
    const a = line.indexOf(':');
    const b = line.indexOf(':', a + 1);
    if (a < 0 || b < 0) continue;
    const controllers = line.slice(a + 1, b);
    const p = line.slice(b + 1);
    if (onlyAirlock && !p.includes('/airlock-')) continue;
    const names = controllers
      ? [controllers, ...controllers.split(',')].map((c) => c.replace(/^name=/, ''))
      : ['unified', ''];
    for (const n of names) {
      const dir = path.join('/sys/fs/cgroup', n, p);
      if (existsSync(dir)) {
        dirs.add(dir);
        break;
      }
    }
  }
  return [...dirs];
}

// What a session's jail is made of, seen from the host.
function jailFootprint(marker) {
  const procs = jailProcs(marker);
  const cgroups = new Set();
  for (const id of procs) for (const d of cgroupDirsOf(Number(id.split(':')[0]))) cgroups.add(d);
  return { marker, procs, cgroups: [...cgroups] };
}

function footprintLeft(fp) {
  return {
    markerProcs: jailProcs(fp.marker),
    procs: fp.procs.filter(procAlive),
    cgroups: fp.cgroups.filter((d) => existsSync(d)),
  };
}

function isEmptyLeft(left, cgroups = true) {
  return left.markerProcs.length === 0 && left.procs.length === 0 && (!cgroups || left.cgroups.length === 0);
}

// `cgroups: false` checks the processes only (a lost session's jail is
// killed at once, but its book, cgroup included, is kept until it is closed
// or expires).
async function assertFootprintGone(fp, what, timeoutMs = 3000, { cgroups = true } = {}) {
  await waitFor(() => isEmptyLeft(footprintLeft(fp), cgroups), timeoutMs);
  const left = footprintLeft(fp);
  assert.ok(isEmptyLeft(left, cgroups), `${what}: left behind after ${timeoutMs} ms: ${JSON.stringify(left)} ` +
    `(processes: ${left.procs.map((id) => `${id} ${cmdline(Number(id.split(':')[0])).slice(0, 80)}`).join('; ')})`);
}

function childrenOf(pid) {
  return numericDirs('/proc').filter((p) => procStat(p)?.ppid === pid);
}

// The `airlock runner` child of the server process.
function runnerPidOf(serverPid) {
  return childrenOf(serverPid).find((p) => /\brunner\b/.test(cmdline(p))) ?? null;
}

// The cgroup parents ("airlock-<pid>", "airlock-<pid>-...") that process `pid`
// (the runner, or the server) made next to its own cgroups.
function cgroupParentsOf(pid) {
  const out = new Set();
  for (const own of cgroupDirsOf(pid, { onlyAirlock: false })) {
    const base = path.basename(own).startsWith('airlock-') ? path.dirname(own) : own;
    let entries = [];
    try {
      entries = readdirSync(base);
    } catch {
      continue;
    }
    for (const e of entries) {
      if (e === `airlock-${pid}` || e.startsWith(`airlock-${pid}-`)) out.add(path.join(base, e));
    }
  }
  return [...out];
}

// Processes anywhere on the host that are in a cgroup made by process `pid`
// ("airlock-<pid>" or "airlock-<pid>-...").
function procsInCgroupsOf(pid) {
  const re = new RegExp(`/airlock-${pid}(-[^/]*)?(/|$)`, 'm');
  return numericDirs('/proc').filter((p) => p !== process.pid && re.test(readText(`/proc/${p}/cgroup`) ?? '') && procStat(p));
}

// Everything of one server (its processes and cgroup trees), to check after
// shutdown.
function serverFootprint(serverPid) {
  const runner = runnerPidOf(serverPid);
  const procs = [];
  const walk = (p) => {
    const st = procStat(p);
    if (st) procs.push(`${p}:${st.starttime}`);
    for (const c of childrenOf(p)) walk(c);
  };
  walk(serverPid);
  const cgroups = [...cgroupParentsOf(serverPid), ...(runner ? cgroupParentsOf(runner) : [])];
  return { serverPid, runner, procs, cgroups };
}

// ------------------------------------------------------------ per-language cells

// Call 1 sets state (a variable, a function; python and bash also cd into a
// new directory) and writes /work/note.txt; call 2 reads all of it back.
const CELLS = {
  python: {
    set: 'x = 41\ndef f(a):\n    return a * 2\nimport os\nos.makedirs("sub", exist_ok=True)\nos.chdir("sub")\n' +
      'with open("/work/note.txt", "w") as fh:\n    fh.write("hello")\nx + 1',
    setOut: '42\n',  // the last expression is shown
    get: 'print(x, f(x), open("/work/note.txt").read(), os.getcwd())',
    getOut: '41 82 hello /work/sub\n',
  },
  javascript: {
    set: 'var x = 41;\nfunction f(a) { return a * 2; }\nlet y = "let-kept";\n' +
      'require("fs").writeFileSync("/work/note.txt", "hello");\nx + 1',
    setOut: '42\n',
    get: 'console.log(x, f(x), y, require("fs").readFileSync("/work/note.txt", "utf8"))',
    getOut: '41 82 let-kept hello\n',
  },
  ruby: {
    set: 'x = 41\ndef f(a)\n  a * 2\nend\nFile.write("/work/note.txt", "hello")\nx + 1',
    setOut: '42\n',
    get: 'puts [x, f(x), File.read("/work/note.txt")].join(" ")',
    getOut: '41 82 hello\n',
  },
  php: {
    set: '$x = 41;\nfunction f($a) { return $a * 2; }\nfile_put_contents("/work/note.txt", "hello");',
    setOut: '',
    get: 'echo $x, " ", f($x), " ", file_get_contents("/work/note.txt"), "\\n";',
    getOut: '41 82 hello\n',
  },
  bash: {
    set: 'X=41\nf() { echo $(( $1 * 2 )); }\nmkdir -p /work/sub && cd /work/sub\necho -n hello > /work/note.txt',
    setOut: '',
    get: 'echo "$X $(f $X) $(cat /work/note.txt) $PWD"',
    getOut: '41 82 hello /work/sub\n',
  },
};

function defineLanguageTests(getClient, transport) {
  for (const language of SESSION_LANGUAGES) {
    it(`${language}: state and files persist across calls; close; a closed id is E_SESSION_NOT_FOUND; nothing left`, async () => {
      const client = getClient();
      const c = CELLS[language];
      const marker = markerName();
      const s = await openSession(client, { language });
      try {
        const r1 = await cell(client, s.session_id, c.set, { files: [{ name: marker, content: transport }] });
        const sc1 = r1.structuredContent;
        assert.equal(sc1?.status, 'ok', `call 1: ${show(r1)}`);
        assert.notEqual(r1.isError, true);
        for (const k of RESULT_KEYS) assert.ok(k in sc1, `structuredContent.${k} in a session call: ${show(r1)}`);
        assert.equal(sc1.session_id, s.session_id);
        assert.equal(sc1.language, language);
        assert.equal(sc1.isolation, 'native');
        assert.equal(sc1.exit_code, 0);
        assert.equal(sc1.stdout, c.setOut, `call 1 stdout: ${show(r1)}`);

        // Call 2: language may be given if it matches; output_files work.
        const sc2 = await okCell(client, s.session_id, c.get, { language, output_files: ['note.txt'] });
        assert.equal(sc2.stdout, c.getOut, `call 2 sees call 1's state: ${JSON.stringify(sc2)}`);
        const note = sc2.files.find((f) => f.name === 'note.txt');
        assert.ok(note, `note.txt returned: ${JSON.stringify(sc2.files)}`);
        assert.equal(note.content, 'hello');

        const listed = (await listSessions(client)).find((x) => x.session_id === s.session_id);
        assert.ok(listed, 'list_sessions shows the open session');
        assert.equal(listed.language, language);
        assert.equal(listed.calls, 2);

        const fp = jailFootprint(marker);
        assert.ok(fp.procs.length >= 2, `found the session's jail processes (init, interpreter) on the host: ${JSON.stringify(fp)}`);
        assert.ok(fp.cgroups.length >= 1, `found the session's cgroups on the host: ${JSON.stringify(fp)}`);

        await closeSession(client, s.session_id);
        await assertFootprintGone(fp, `${language} session after close_session`);

        const after = await rawCall(client, 'run_code', { session_id: s.session_id, code: c.get });
        expectToolError(after, 'E_SESSION_NOT_FOUND', s.session_id, 'run_code with a closed session');
        const again = await rawCall(client, 'close_session', { session_id: s.session_id });
        expectToolError(again, 'E_SESSION_NOT_FOUND', s.session_id, 'close_session twice');
        assert.ok(!(await listSessions(client)).some((x) => x.session_id === s.session_id), 'closed: not listed');
      } finally {
        await closeQuietly(client, s.session_id);
      }
    });
  }
}

// ------------------------------------------------------------ stdio

describe('sessions over stdio', () => {
  let cfg;
  let conn;
  let closed = false;
  const client = () => conn.client;

  before(async () => {
    cfg = tmpConfig('stdio', { sessions: { max_per_caller: 2 } });
    conn = await connectStdio({ args: ['--config', cfg.file] });
    await conn.client.listTools();  // caches the output schemas: callTool validates from now on
  });
  after(async () => {
    if (!closed) await conn?.close();
    if (cfg) rmSync(cfg.dir, { recursive: true, force: true });
  });

  it('tools/list offers open_session, close_session, list_sessions; list_languages says which languages have sessions', async () => {
    const { tools } = await client().listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const n of ['open_session', 'close_session', 'list_sessions', 'run_code']) assert.ok(byName[n], `tool ${n}`);
    assert.ok(byName.run_code.inputSchema.properties.session_id, 'run_code takes session_id');
    assert.ok(byName.open_session.inputSchema.required.includes('language'));
    const langEnum = byName.open_session.inputSchema.properties.language.enum;
    if (langEnum) assert.deepEqual([...langEnum].sort(), [...SESSION_LANGUAGES].sort(), 'open_session offers the session languages');
    const r = await sdkCall(client(), 'list_languages', {});
    const flags = Object.fromEntries(r.structuredContent.languages.map((l) => [l.name, l.sessions]));
    for (const l of SESSION_LANGUAGES) assert.equal(flags[l], true, `${l} has sessions: ${JSON.stringify(flags)}`);
    for (const l of ['c', 'cpp', 'typescript']) assert.equal(flags[l], false, `${l} has no sessions: ${JSON.stringify(flags)}`);
    const { contents } = await client().readResource({ uri: 'airlock://languages' });
    const doc = JSON.parse(contents[0].text);
    assert.deepEqual(Object.fromEntries(doc.languages.map((l) => [l.name, l.sessions])), flags, 'airlock://languages agrees');
  });

  defineLanguageTests(client, 'stdio');

  it('python: the last expression is shown (None is not) and bound to _; stdin per call; sys.exit ends only the cell', async () => {
    const s = await openSession(client(), { language: 'python' });
    try {
      assert.equal((await okCell(client(), s.session_id, 'x = 41\nx + 1')).stdout, '42\n');
      assert.equal((await okCell(client(), s.session_id, 'None')).stdout, '');
      assert.equal((await okCell(client(), s.session_id, '_ * 2')).stdout, '84\n', '_ is the last shown value');
      assert.equal((await okCell(client(), s.session_id, '[x] * 2')).stdout, '[41, 41]\n', 'repr, as in a notebook');
      const io = await okCell(client(), s.session_id, 'import sys\nprint(sys.stdin.read().upper())', { stdin: 'abc' });
      assert.equal(io.stdout, 'ABC\n');
      const io2 = await okCell(client(), s.session_id, 'print(repr(sys.stdin.read()))', { stdin: 'second' });
      assert.equal(io2.stdout, "'second'\n", 'each call has its own stdin');
      const fd0 = await okCell(client(), s.session_id, 'import os\nprint(os.read(0, 100))', { stdin: 'fd0' });
      assert.equal(fd0.stdout, "b'fd0'\n", 'stdin is fd 0 too');
      const ex = await cell(client(), s.session_id, 'print("bye")\nsys.exit(3)');
      assert.equal(ex.structuredContent.status, 'exit_nonzero', show(ex));
      assert.equal(ex.structuredContent.exit_code, 3, show(ex));
      assert.equal(ex.structuredContent.stdout, 'bye\n');
      assert.notEqual(ex.structuredContent.error_code, 'E_SESSION_LOST', show(ex));
      assert.equal((await okCell(client(), s.session_id, 'print(x)')).stdout, '41\n', 'sys.exit did not end the session');
    } finally {
      await closeQuietly(client(), s.session_id);
    }
  });

  it('an uncaught exception does not end the session: exit_nonzero, traceback naming the cell, state kept', async () => {
    const s = await openSession(client(), { language: 'python' });
    try {
      await okCell(client(), s.session_id, 'kept = "still here"');
      const r = await cell(client(), s.session_id, 'print("before")\n1/0');
      const sc = r.structuredContent;
      assert.equal(sc.status, 'exit_nonzero', show(r));
      assert.equal(sc.exit_code, 1, show(r));
      assert.equal(r.isError, true);
      assert.notEqual(sc.error_code, 'E_SESSION_LOST', show(r));
      assert.equal(sc.stdout, 'before\n');
      assert.match(sc.stderr, /ZeroDivisionError/);
      assert.match(sc.stderr, /File "<cell \d+>", line 2/, `the traceback names the cell: ${sc.stderr}`);
      assert.equal((await okCell(client(), s.session_id, 'print(kept)')).stdout, 'still here\n');
    } finally {
      await closeQuietly(client(), s.session_id);
    }
    // The same for another language: a Ruby exception keeps the session.
    const rb = await openSession(client(), { language: 'ruby' });
    try {
      await okCell(client(), rb.session_id, 'kept = 7\nnil');
      const r = await cell(client(), rb.session_id, 'raise "boom"');
      assert.equal(r.structuredContent.status, 'exit_nonzero', show(r));
      assert.match(r.structuredContent.stderr, /boom/);
      assert.equal((await okCell(client(), rb.session_id, 'puts kept')).stdout, '7\n');
    } finally {
      await closeQuietly(client(), rb.session_id);
    }
  });

  it('done when: a Python session loads a CSV with pandas, transforms it, and returns a matplotlib PNG', async () => {
    const csv = 'month,sales\n1,1200\n2,1850\n3,1600\n4,2300\n5,2100\n';
    const s = await openSession(client(), { language: 'python' });
    try {
      const load = await okCell(client(), s.session_id,
        'import pandas as pd\ndf = pd.read_csv("sales.csv")\nprint(df.shape, list(df.columns))',
        { files: [{ name: 'sales.csv', content: csv }], timeout_ms: 30000 });
      assert.equal(load.stdout, "(5, 2) ['month', 'sales']\n");
      const transform = await okCell(client(), s.session_id,
        'df["sales_k"] = df["sales"] / 1000\nprint(round(df["sales_k"].sum(), 2), len(df))', { timeout_ms: 30000 });
      assert.equal(transform.stdout, '9.05 5\n');
      const plot = await cell(client(), s.session_id, [
        'import matplotlib',
        'matplotlib.use("Agg")',
        'import matplotlib.pyplot as plt',
        'fig, ax = plt.subplots()',
        'ax.plot(df["month"], df["sales_k"], marker="o")',
        'fig.savefig("plot.png")',
        'print("saved", len(df["sales_k"]))',
      ].join('\n'), { output_files: ['*.png'], timeout_ms: 30000 });
      const sc = plot.structuredContent;
      assert.equal(sc.status, 'ok', show(plot));
      assert.equal(sc.stdout, 'saved 5\n');
      const img = plot.content.find((c) => c.type === 'image');
      const f = sc.files.find((x) => x.name === 'plot.png');
      assert.ok(img || f, `an image content item or a files entry: ${JSON.stringify(plot.content.map((c) => c.type))} ${JSON.stringify(sc.files.map((x) => x.name))}`);
      if (img) {
        assert.equal(img.mimeType, 'image/png');
        const bytes = Buffer.from(img.data, 'base64');
        assert.ok(bytes.length > 1000, 'a non-trivial PNG');
        assert.deepEqual(bytes.subarray(0, 8), PNG_MAGIC, 'PNG magic bytes');
      }
      if (f) {
        assert.equal(f.mime_type, 'image/png');
        if (f.encoding === 'base64') assert.deepEqual(Buffer.from(f.content, 'base64').subarray(0, 8), PNG_MAGIC);
      }
    } finally {
      await closeQuietly(client(), s.session_id);
    }
  });

  it('two sessions cannot see each other (variables, files, processes, cgroups); max_per_caller 2 → E_SESSION_LIMIT', async () => {
    const ma = markerName();
    const mb = markerName();
    const a = await openSession(client(), { language: 'python' });
    let b;
    try {
      b = await openSession(client(), { language: 'python' });
      assert.notEqual(a.session_id, b.session_id);
      await okCell(client(), a.session_id, 'secret = "A"\nopen("/work/a_only.txt", "w").write("A")',
        { files: [{ name: ma, content: 'a' }] });
      const inB = await okCell(client(), b.session_id,
        'import os\nprint("secret" in globals(), os.path.exists("/work/a_only.txt"))\nprint(sorted(os.listdir("/work")))',
        { files: [{ name: mb, content: 'b' }] });
      const [flags, listing] = inB.stdout.split('\n');
      assert.equal(flags, 'False False', 'B sees nothing of A');
      assert.ok(listing.includes(mb) && !listing.includes(ma) && !listing.includes('a_only'), `B's /work: ${listing}`);
      const nameErr = await cell(client(), b.session_id, 'print(secret)');
      assert.equal(nameErr.structuredContent.status, 'exit_nonzero', show(nameErr));
      assert.match(nameErr.structuredContent.stderr, /NameError/);
      await okCell(client(), b.session_id, 'b_var = 1\nopen("/work/b_only.txt", "w").write("B")');
      const inA = await okCell(client(), a.session_id,
        'import os\nprint("b_var" in globals(), os.path.exists("/work/b_only.txt"), secret)');
      assert.equal(inA.stdout, 'False False A\n');

      const fa = jailFootprint(ma);
      const fb = jailFootprint(mb);
      assert.ok(fa.procs.length > 0 && fb.procs.length > 0, `${JSON.stringify(fa)} ${JSON.stringify(fb)}`);
      assert.deepEqual(fa.procs.filter((p) => fb.procs.includes(p)), [], 'no process shared');
      assert.ok(fa.cgroups.length > 0 && fb.cgroups.length > 0);
      assert.deepEqual(fa.cgroups.filter((d) => fb.cgroups.includes(d)), [], 'no cgroup shared');

      const third = await rawCall(client(), 'open_session', { language: 'bash' });
      expectToolError(third, 'E_SESSION_LIMIT', undefined, 'a third open_session with max_per_caller 2');
      assert.match(third.structuredContent.message, /close/i, 'says what to do');
      // Closing one makes room again.
      await closeSession(client(), b.session_id);
      b = await openSession(client(), { language: 'bash' });
    } finally {
      await closeQuietly(client(), a.session_id, b?.session_id);
    }
  });

  it('list_sessions: own sessions with their fields; a call moves expires_at forward', async () => {
    const s = await openSession(client(), { language: 'javascript', timeout_s: 120 });
    try {
      assert.equal(s.idle_timeout_s, 120);
      const list = await listSessions(client());
      const e = list.find((x) => x.session_id === s.session_id);
      assert.ok(e, JSON.stringify(list));
      for (const k of ['session_id', 'language', 'isolation', 'created_at', 'last_used_at', 'expires_at', 'idle_timeout_s',
        'calls', 'memory_mb']) {
        assert.ok(k in e, `list_sessions entry has ${k}: ${JSON.stringify(e)}`);
      }
      assert.equal(e.calls, 0);
      assert.equal(e.idle_timeout_s, 120);
      const left = Date.parse(s.expires_at) - Date.now();
      assert.ok(left > 100000 && left <= 121000, `expires_at is about 120 s away: ${s.expires_at} (${left} ms)`);
      await sleep(1100);
      await okCell(client(), s.session_id, '1');
      const e2 = (await listSessions(client())).find((x) => x.session_id === s.session_id);
      assert.equal(e2.calls, 1);
      assert.ok(Date.parse(e2.expires_at) > Date.parse(s.expires_at), `expires_at moved: ${s.expires_at} -> ${e2.expires_at}`);
      assert.ok(Date.parse(e2.last_used_at) > Date.parse(e.last_used_at), 'last_used_at moved');
    } finally {
      await closeQuietly(client(), s.session_id);
    }
  });

  it('a WASM-tier python session (open_session isolation wasm): state, files, stdin and exceptions across calls', async (t) => {
    const langs = (await sdkCall(client(), 'list_languages', {})).structuredContent.languages;
    const py = langs.find((l) => l.name === 'python');
    if (!py?.session_tiers?.includes('wasm')) return t.skip('no CPython WASI build on this host (scripts/wasm/)');
    assert.deepEqual(py.session_tiers, ['native', 'wasm']);
    const s = await openSession(client(), { language: 'python', isolation: 'wasm' });
    try {
      assert.equal(s.isolation, 'wasm');
      const first = await okCell(client(), s.session_id,
        "import sys\nrows = [l.split(',') for l in open('in.csv').read().split()]\nsys.implementation._multiarch",
        { files: [{ name: 'in.csv', content: 'a,1\nb,2\n', encoding: 'text' }] });
      assert.equal(first.stdout, "'wasm32-wasi'\n");
      assert.equal(first.isolation, 'wasm');
      const second = await okCell(client(), s.session_id,
        "import sys\nopen('out.txt', 'w').write(sys.stdin.read() + str(sum(int(v) for _, v in rows)))\nlen(rows)",
        { stdin: 'total=', output_files: ['out.txt'] });
      assert.equal(second.stdout, '2\n');
      assert.equal(second.files.find((f) => f.name === 'out.txt')?.content, 'total=3');
      const err = await cell(client(), s.session_id, 'rows[5]');
      assert.equal(err.structuredContent.status, 'exit_nonzero', show(err));
      assert.match(err.structuredContent.stderr, /IndexError/);
      const still = await okCell(client(), s.session_id, 'print(rows[1][0])');
      assert.equal(still.stdout, 'b\n');
    } finally {
      await closeQuietly(client(), s.session_id);
    }
  });

  it('WASM-tier sessions of javascript, ruby and php keep their state between calls', async (t) => {
    const langs = (await sdkCall(client(), 'list_languages', {})).structuredContent.languages;
    const cases = {
      javascript: ['var x = 41; function f(v) { return v + 1; }', 'f(x)', '42\n'],
      ruby: ['x = 41\ndef f(v) = v + 1', 'puts f(x)', '42\n'],
      php: ['$x = 41; function f($v) { return $v + 1; }', 'echo f($x), "\\n";', '42\n'],
    };
    let ran = 0;
    for (const [lang, [set, get, want]] of Object.entries(cases)) {
      if (!langs.find((l) => l.name === lang)?.session_tiers?.includes('wasm')) continue;
      const s = await openSession(client(), { language: lang, isolation: 'wasm' });
      try {
        await okCell(client(), s.session_id, set, { timeout_ms: 60000 });
        const got = await okCell(client(), s.session_id, get, { timeout_ms: 60000 });
        assert.equal(got.stdout, want, lang);
        assert.equal(got.isolation, 'wasm', lang);
        ran += 1;
      } finally {
        await closeQuietly(client(), s.session_id);
      }
    }
    if (ran === 0) t.skip('no WASM-tier sessions besides python on this host');
  });

  it('refusals: languages without sessions, bad open arguments, args/memory_mb/isolation in a call, a language mismatch', async () => {
    // open_session refusals: tool results with isError (or JSON-RPC invalid params).
    const refused = async (args, codes, what) => {
      const out = await errorOrResult(() => rawCall(client(), 'open_session', args));
      if (out.error) {
        assert.ok(out.error instanceof McpError && out.error.code === -32602, `${what}: ${out.error}`);
        return;
      }
      expectToolError(out.result, codes, undefined, what);
    };
    await refused({ language: 'c' }, ['invalid_request', 'unknown_language'], 'open_session c (no sessions)');
    await refused({ language: 'typescript' }, ['invalid_request', 'unknown_language'], 'open_session typescript');
    await refused({ language: 'cobol' }, ['unknown_language', 'invalid_request'], 'open_session cobol');
    await refused({ language: 'bash', isolation: 'wasm' }, 'invalid_request', 'open_session bash in the wasm tier');
    await refused({ language: 'python', isolation: 'gvisor' }, 'invalid_request', 'open_session an unknown tier');
    await refused({ language: 'python', memory_mb: 1 << 20 }, 'invalid_request', 'open_session memory_mb too large');
    await refused({ language: 'python', timeout_s: 999999 }, 'invalid_request', 'open_session timeout_s above the maximum');
    assert.equal((await listSessions(client())).length, 0, 'no refused open left a session behind');

    const s = await openSession(client(), { language: 'python' });
    try {
      await okCell(client(), s.session_id, 'x = 5');
      for (const [extra, what] of [
        [{ memory_mb: 64 }, 'memory_mb'],
        [{ args: ['a'] }, 'args'],
        [{ isolation: 'native' }, 'isolation'],
      ]) {
        const r = await rawCall(client(), 'run_code', { session_id: s.session_id, code: 'print(x)', ...extra });
        expectToolError(r, 'invalid_request', s.session_id, `${what} in a session call`);
      }
      const mismatch = await rawCall(client(), 'run_code', { session_id: s.session_id, language: 'ruby', code: 'puts 1' });
      expectToolError(mismatch, 'invalid_request', s.session_id, 'language ruby in a python session');
      const unknownId = await rawCall(client(), 'run_code', { session_id: 'nonsense', code: 'print(1)' });
      expectToolError(unknownId, 'E_SESSION_NOT_FOUND', 'nonsense', 'a malformed session id');
      // None of the refusals touched the session.
      assert.equal((await okCell(client(), s.session_id, 'print(x)')).stdout, '5\n');
    } finally {
      await closeQuietly(client(), s.session_id);
    }

    // PHP refuses stdin (it cannot reopen fd 0); the session goes on.
    const p = await openSession(client(), { language: 'php' });
    try {
      await okCell(client(), p.session_id, '$v = 3;');
      const r = await rawCall(client(), 'run_code', { session_id: p.session_id, code: 'echo fgets(STDIN);', stdin: 'in\n' });
      assert.equal(r.isError, true, `stdin in a PHP session call is refused: ${show(r)}`);
      assert.notEqual(r.structuredContent?.error_code, 'E_SESSION_LOST', show(r));
      assert.equal((await okCell(client(), p.session_id, 'echo $v;')).stdout, '3');
    } finally {
      await closeQuietly(client(), p.session_id);
    }
  });

  it('session errors are well-formed results: status set, and valid against run_code\'s outputSchema in the SDK client', async () => {
    // Every error of the table in docs/sessions.md is a tool result with
    // isError, a status ("internal_error" unless a call ended the session)
    // and an error_code. run_code's outputSchema requires status, and the
    // SDK client's callTool validates structuredContent against it even for
    // isError results: without status the official client throws instead
    // of returning the error. All problems are collected, then reported.
    const problems = [];
    const check = async (what, name, args, errorCode) => {
      const out = await errorOrResult(() => sdkCall(client(), name, args));
      if (out.error) {
        problems.push(`${what}: the SDK client threw: ${out.error.message}`);
        return;
      }
      const sc = out.result.structuredContent ?? {};
      if (out.result.isError !== true) problems.push(`${what}: isError is ${out.result.isError}`);
      const codes = Array.isArray(errorCode) ? errorCode : [errorCode];
      if (!codes.includes(sc.error_code)) problems.push(`${what}: error_code ${sc.error_code}, want ${codes.join(' or ')}`);
      if (sc.status !== 'internal_error') problems.push(`${what}: status ${JSON.stringify(sc.status)}, want "internal_error": ${JSON.stringify(sc)}`);
    };
    const id = randomSessionId();
    await check('run_code with an unknown session_id', 'run_code', { session_id: id, code: 'print(1)' }, 'E_SESSION_NOT_FOUND');
    await check('close_session with an unknown session_id', 'close_session', { session_id: id }, 'E_SESSION_NOT_FOUND');
    await check('open_session c', 'open_session', { language: 'c' }, ['invalid_request', 'unknown_language']);
    const s = await openSession(client(), { language: 'python' });
    try {
      await check('memory_mb in a session call', 'run_code', { session_id: s.session_id, code: '1', memory_mb: 64 }, 'invalid_request');
      await check('a language mismatch', 'run_code', { session_id: s.session_id, code: '1', language: 'ruby' }, 'invalid_request');
      const s2 = await openSession(client(), { language: 'bash' });
      try {
        await check('open_session beyond max_per_caller', 'open_session', { language: 'bash' }, 'E_SESSION_LIMIT');
      } finally {
        await closeQuietly(client(), s2.session_id);
      }
    } finally {
      await closeQuietly(client(), s.session_id);
    }
    assert.deepEqual(problems, []);
  });

  it('a call while another call of the same session runs → E_SESSION_BUSY; the session is unchanged', async () => {
    const s = await openSession(client(), { language: 'python' });
    try {
      await okCell(client(), s.session_id, 'import time\nn = 1');
      const started = markerName();
      const slow = cell(client(), s.session_id, `open("/work/${started}", "w").close()\ntime.sleep(1.5)\nn += 1\nprint(n)`);
      assert.ok(await waitFor(() => jailProcs(started).length > 0, 20000), 'the first call started');
      const busy = await rawCall(client(), 'run_code', { session_id: s.session_id, code: 'n += 100\nprint(n)' });
      expectToolError(busy, 'E_SESSION_BUSY', s.session_id, 'concurrent call');
      const first = await slow;
      assert.equal(first.structuredContent.status, 'ok', show(first));
      assert.equal(first.structuredContent.stdout, '2\n');
      assert.equal((await okCell(client(), s.session_id, 'print(n)')).stdout, '2\n', 'the refused call did not run');
    } finally {
      await closeQuietly(client(), s.session_id);
    }
  });

  it('a call that times out → E_SESSION_LOST (status timeout), and so is every later call; the jail is gone', async () => {
    const marker = markerName();
    const s = await openSession(client(), { language: 'python' });
    try {
      await okCell(client(), s.session_id, 'x = 1', { files: [{ name: marker, content: 't' }] });
      const fp = jailFootprint(marker);
      assert.ok(fp.procs.length > 0, JSON.stringify(fp));
      const t0 = Date.now();
      const r = await rawCall(client(), 'run_code', { session_id: s.session_id, code: 'while True: pass', timeout_ms: 500 });
      const elapsed = Date.now() - t0;
      const sc = expectToolError(r, 'E_SESSION_LOST', s.session_id, 'infinite loop with timeout_ms 500');
      assert.equal(sc.status, 'timeout', show(r));
      assert.ok(elapsed < 5000, `the call took ${elapsed} ms`);
      const next = await rawCall(client(), 'run_code', { session_id: s.session_id, code: 'print(x)' });
      const nsc = expectToolError(next, 'E_SESSION_LOST', s.session_id, 'the call after a timeout');
      assert.ok(['timeout', 'internal_error'].includes(nsc.status), show(next));
      assert.match(nsc.message, /time/i, `the same reason: ${nsc.message}`);
      assert.equal(nsc.stdout ?? '', '', 'nothing ran');
      await assertFootprintGone(fp, 'the processes of a timed-out session', 3000, { cgroups: false });
      // A lost session is still the caller's to close; then nothing is left.
      await closeSession(client(), s.session_id);
      await assertFootprintGone(fp, 'a timed-out session after close_session');
      const rows = JSON.parse(spawnSync(AIRLOCK_BIN, ['audit', '--config', cfg.file, '--json'], { encoding: 'utf8' }).stdout);
      const kinds = rows.filter((x) => x.type === 'event' && x.target === s.session_id).map((x) => x.kind);
      assert.ok(kinds.includes('session_lost') && kinds.includes('session_close'), `audit events: ${kinds}`);
    } finally {
      await closeQuietly(client(), s.session_id);
    }
  });

  it('language semantics: JavaScript let/const/await, Ruby inspect/nil, stdin per call in JavaScript, Ruby and Bash', async () => {
    const js = await openSession(client(), { language: 'javascript' });
    try {
      assert.equal((await okCell(client(), js.session_id, 'const k = 1;\nclass C { v() { return 2; } }\n"str"')).stdout, "'str'\n",
        'util.inspect of the completion value');
      assert.equal((await okCell(client(), js.session_id, 'undefined')).stdout, '', 'undefined is not shown');
      const redeclare = await cell(client(), js.session_id, 'const k = 2;');
      assert.equal(redeclare.structuredContent.status, 'exit_nonzero', `a second const k is an error: ${show(redeclare)}`);
      assert.notEqual(redeclare.structuredContent.error_code, 'E_SESSION_LOST', show(redeclare));
      assert.equal((await okCell(client(), js.session_id, 'console.log(k, new C().v())')).stdout, '1 2\n');
      await okCell(client(), js.session_id, 'const local = await Promise.resolve(5);\nglobalThis.kept = local + 1;');
      assert.equal((await okCell(client(), js.session_id, 'console.log(typeof local, kept)')).stdout, 'undefined 6\n',
        'a top-level await cell keeps only what it assigns to globalThis');
      const io = await okCell(client(), js.session_id,
        'let got = "";\nfor await (const chunk of process.stdin) got += chunk;\nconsole.log(got.toUpperCase());', { stdin: 'js in' });
      assert.equal(io.stdout, 'JS IN\n');
    } finally {
      await closeQuietly(client(), js.session_id);
    }
    const rb = await openSession(client(), { language: 'ruby' });
    try {
      assert.equal((await okCell(client(), rb.session_id, '"str"')).stdout, '"str"\n', 'inspect');
      assert.equal((await okCell(client(), rb.session_id, 'nil')).stdout, '', 'nil is not shown');
      const io = await okCell(client(), rb.session_id, 'puts $stdin.read.upcase', { stdin: 'rb in' });
      assert.equal(io.stdout, 'RB IN\n');
      const io2 = await okCell(client(), rb.session_id, 'puts STDIN.read.reverse', { stdin: 'abc' });
      assert.equal(io2.stdout, 'cba\n', 'each call has its own stdin');
    } finally {
      await closeQuietly(client(), rb.session_id);
    }
    const sh = await openSession(client(), { language: 'bash' });
    try {
      await okCell(client(), sh.session_id, 'set -u\nA=1');
      const io = await okCell(client(), sh.session_id, 'read -r line\necho "$line/$A"', { stdin: 'sh in\n' });
      assert.equal(io.stdout, 'sh in/1\n');
      const io2 = await okCell(client(), sh.session_id, 'cat', { stdin: 'again' });
      assert.equal(io2.stdout, 'again');
      const failing = await cell(client(), sh.session_id, 'false');
      assert.equal(failing.structuredContent.status, 'exit_nonzero', show(failing));
      assert.notEqual(failing.structuredContent.error_code, 'E_SESSION_LOST', show(failing));
      assert.equal((await okCell(client(), sh.session_id, 'echo $A')).stdout, '1\n');
    } finally {
      await closeQuietly(client(), sh.session_id);
    }
  });

  it('what ends the interpreter ends the session (process.exit, exit, exit!, set -e); sys.exit and Ruby exit end the cell', async () => {
    // [language, setup, the cell that ends the interpreter, probe, status, exit_code or signal]
    const cases = [
      ['javascript', 'var v = 1;', 'process.exit(2)', 'console.log(v)', 'exit_nonzero', 2],
      ['bash', 'V=1', 'exit 3', 'echo $V', 'exit_nonzero', 3],
      ['bash', 'V=1', 'set -e\nfalse\necho not reached', 'echo $V', 'exit_nonzero', 1],
      ['php', '$v = 1;', 'exit(4);', 'echo $v;', 'exit_nonzero', 4],
      ['ruby', 'v = 1', 'exit!(5)', 'puts v', 'exit_nonzero', 5],
      ['python', 'v = 1', 'import os\nos._exit(6)', 'print(v)', 'exit_nonzero', 6],
      ['python', 'v = 1', 'import os, signal\nos.kill(os.getpid(), signal.SIGKILL)', 'print(v)', 'killed_signal', 9],
    ];
    for (const [language, setup, ender, probe, status, code] of cases) {
      const s = await openSession(client(), { language });
      try {
        await okCell(client(), s.session_id, setup);
        const r = await rawCall(client(), 'run_code', { session_id: s.session_id, code: ender });
        const sc = expectToolError(r, 'E_SESSION_LOST', s.session_id, `${language}: ${ender}`);
        // "status says which" (docs/sessions.md).
        assert.equal(sc.status, status, `${language}: ${ender}: ${show(r)}`);
        if (status === 'killed_signal') assert.equal(sc.signal, code, show(r));
        else assert.equal(sc.exit_code, code, show(r));
        const next = await rawCall(client(), 'run_code', { session_id: s.session_id, code: probe });
        expectToolError(next, 'E_SESSION_LOST', s.session_id, `${language}: the call after ${ender}`);
      } finally {
        await closeQuietly(client(), s.session_id);
      }
    }
    const rb = await openSession(client(), { language: 'ruby' });
    try {
      await okCell(client(), rb.session_id, 'v = 1\nnil');
      const r = await cell(client(), rb.session_id, 'exit 4');
      assert.equal(r.structuredContent.status, 'exit_nonzero', show(r));
      assert.equal(r.structuredContent.exit_code, 4, show(r));
      assert.equal((await cell(client(), rb.session_id, 'exit 0')).structuredContent.status, 'ok');
      assert.equal((await okCell(client(), rb.session_id, 'puts v')).stdout, '1\n', 'Ruby exit n ends only the cell');
    } finally {
      await closeQuietly(client(), rb.session_id);
    }
  });

  it('output over the cap → output_limit and E_SESSION_LOST; a cancelled call loses the session too', async () => {
    const s = await openSession(client(), { language: 'python' });
    try {
      await okCell(client(), s.session_id, 'x = 1');
      const r = await rawCall(client(), 'run_code', {
        session_id: s.session_id, code: 'import sys\nwhile True:\n    sys.stdout.write("y" * 65536)', timeout_ms: 20000,
      });
      const sc = expectToolError(r, 'E_SESSION_LOST', s.session_id, 'endless output');
      assert.equal(sc.status, 'output_limit', show(r));
      expectToolError(await rawCall(client(), 'run_code', { session_id: s.session_id, code: 'print(x)' }),
        'E_SESSION_LOST', s.session_id, 'after output_limit');
    } finally {
      await closeQuietly(client(), s.session_id);
    }
    const marker = markerName();
    const c = await openSession(client(), { language: 'python' });
    try {
      await okCell(client(), c.session_id, 'x = 1', { files: [{ name: marker, content: 'c' }] });
      const fp = jailFootprint(marker);
      const ac = new AbortController();
      const call = cell(client(), c.session_id, 'while True: pass', { timeout_ms: 30000 }, { signal: ac.signal });
      call.catch(() => {});
      await sleep(400);
      ac.abort('test cancel');
      await assert.rejects(call);
      await assertFootprintGone(fp, 'the processes of a cancelled session call', 3000, { cgroups: false });
      const next = await rawCall(client(), 'run_code', { session_id: c.session_id, code: 'print(x)' });
      expectToolError(next, 'E_SESSION_LOST', c.session_id, 'the call after a cancelled one');
    } finally {
      await closeQuietly(client(), c.session_id);
    }
  });

  it('the memory limit holds across calls: 40 MiB a call in a 128 MiB session is lost by the fourth call', async () => {
    const s = await openSession(client(), { language: 'python', memory_mb: 128 });
    try {
      await okCell(client(), s.session_id, 'blocks = []');
      let r;
      let calls = 0;
      for (; calls < 8; ++calls) {
        r = await rawCall(client(), 'run_code', {
          session_id: s.session_id, code: 'blocks.append(bytearray(b"x" * (40 << 20)))\nlen(blocks)', timeout_ms: 20000,
        });
        if (r.structuredContent?.status !== 'ok') break;
      }
      assert.ok(calls <= 3, `${calls} calls of 40 MiB each fitted in 128 MiB: ${show(r)}`);
      const sc = expectToolError(r, 'E_SESSION_LOST', s.session_id, 'the call that broke the limit');
      assert.equal(sc.status, 'memory_limit', show(r));
    } finally {
      await closeQuietly(client(), s.session_id);
    }
  });

  it('a memory bomb in a 128 MiB session → E_SESSION_LOST with status memory_limit (three times)', async () => {
    for (let attempt = 0; attempt < 3; ++attempt) await memoryBomb(attempt);
  });

  async function memoryBomb(attempt) {
    const marker = markerName();
    const s = await openSession(client(), { language: 'python', memory_mb: 128 });
    try {
      assert.equal(s.memory_mb, 128);
      await okCell(client(), s.session_id, 'blocks = []', { files: [{ name: marker, content: 'm' }] });
      const fp = jailFootprint(marker);
      assert.ok(fp.procs.length >= 2, JSON.stringify(fp));
      const r = await rawCall(client(), 'run_code', {
        session_id: s.session_id,
        code: 'while True:\n    blocks.append(bytearray(b"x" * (16 << 20)))',
        timeout_ms: 30000,
      });
      const sc = expectToolError(r, 'E_SESSION_LOST', s.session_id, 'memory bomb');
      assert.equal(sc.status, 'memory_limit', `attempt ${attempt + 1}: ${show(r)}`);
      const next = await rawCall(client(), 'run_code', { session_id: s.session_id, code: 'print(len(blocks))' });
      const nsc = expectToolError(next, 'E_SESSION_LOST', s.session_id, 'the call after the memory bomb');
      assert.match(nsc.message, /memory/i, `the same reason: ${nsc.message}`);
      await assertFootprintGone(fp, 'the processes of a session that ran out of memory', 3000, { cgroups: false });
      await closeSession(client(), s.session_id);
      await assertFootprintGone(fp, 'a session that ran out of memory, after close_session');
    } finally {
      await closeQuietly(client(), s.session_id);
    }
  }

  it('background processes a call starts are killed when the call ends; the interpreter stays', async () => {
    const tag = String(Math.floor(Math.random() * 1e8)).padStart(8, '0');
    const durations = [`300.${tag}1`, `300.${tag}2`, `300.${tag}3`];
    const sleepers = () => numericDirs('/proc').filter((p) => {
      const cl = readText(`/proc/${p}/cmdline`) ?? '';
      return durations.some((d) => cl === `sleep\0${d}\0` || cl.endsWith(`/sleep\0${d}\0`));
    });
    const s = await openSession(client(), { language: 'bash' });
    try {
      const r = await okCell(client(), s.session_id, [
        'KEEP=yes',
        `sleep ${durations[0]} &`,
        `( sleep ${durations[1]} & )`,
        `nohup sleep ${durations[2]} >/dev/null 2>&1 & disown`,
        'echo started',
      ].join('\n'));
      assert.equal(r.stdout, 'started\n');
      const left = sleepers();
      assert.deepEqual(left, [], `background sleeps still alive after the call: ${left.map((p) => `${p} ${cmdline(p)}`)}`);
      assert.equal((await okCell(client(), s.session_id, 'echo $KEEP')).stdout, 'yes\n', 'the interpreter stayed');
    } finally {
      await closeQuietly(client(), s.session_id);
    }
    // The same from Python: a child in its own session (setsid).
    const py = await openSession(client(), { language: 'python' });
    try {
      await okCell(client(), py.session_id,
        `import subprocess\np = subprocess.Popen(["sleep", "${durations[0]}"], start_new_session=True)\nkeep = p.pid`);
      assert.deepEqual(sleepers(), [], 'a start_new_session child is killed too');
      assert.match((await okCell(client(), py.session_id, 'print(keep)')).stdout, /^\d+\n$/);
    } finally {
      await closeQuietly(client(), py.session_id);
    }
  });

  it('the runner killed → E_SESSION_LOST (never a fresh interpreter); its jails are gone; a new session works', async () => {
    const serverPid = conn.transport.pid;
    assert.ok(serverPid, 'the stdio transport knows the server pid');
    const runner = runnerPidOf(serverPid);
    assert.ok(runner, `an "airlock runner" child of the server ${serverPid}: children ${childrenOf(serverPid).map((p) => `${p} ${cmdline(p)}`)}`);
    const runnerCgroups = cgroupParentsOf(runner);
    const marker = markerName();
    const s = await openSession(client(), { language: 'python' });
    try {
      await okCell(client(), s.session_id, 'x = 123', { files: [{ name: marker, content: 'r' }] });
      const fp = jailFootprint(marker);
      assert.ok(fp.procs.length > 0, JSON.stringify(fp));
      process.kill(runner, 'SIGKILL');
      let r;
      const end = Date.now() + 15000;
      for (;;) {
        r = await rawCall(client(), 'run_code', { session_id: s.session_id, code: 'print(x)' });
        if (r.structuredContent?.error_code !== 'runner_unavailable' || Date.now() > end) break;
        await sleep(250);
      }
      assert.notEqual(r.structuredContent?.stdout, '123\n', 'the old interpreter cannot answer');
      const sc = expectToolError(r, 'E_SESSION_LOST', s.session_id, 'a call after the runner was killed');
      assert.match(sc.message, /runner|restart/i, sc.message);
      const again = await rawCall(client(), 'run_code', { session_id: s.session_id, code: 'x = 1\nprint("fresh")' });
      expectToolError(again, 'E_SESSION_LOST', s.session_id, 'a second call after the runner was killed');
      await assertFootprintGone(fp, 'the jail of a session whose runner was killed', 10000);
      await waitFor(() => runnerPidOf(serverPid) && runnerPidOf(serverPid) !== runner, 10000);
      const leftCgroups = runnerCgroups.filter((d) => existsSync(d));
      assert.deepEqual(leftCgroups, [], 'the dead runner\'s cgroup trees are swept');
      assert.deepEqual(procsInCgroupsOf(runner), [], 'no process left in the dead runner\'s cgroups');
      await closeSession(client(), s.session_id);
    } finally {
      await closeQuietly(client(), s.session_id);
    }
    const n = await openSession(client(), { language: 'python' });
    try {
      await okCell(client(), n.session_id, 'y = 2');
      assert.equal((await okCell(client(), n.session_id, 'print(y * 21)')).stdout, '42\n');
    } finally {
      await closeQuietly(client(), n.session_id);
    }
  });

  it('server shutdown with open sessions leaves no process and no cgroup behind', async () => {
    const marker = markerName();
    const s = await openSession(client(), { language: 'bash' });
    await okCell(client(), s.session_id, 'V=1', { files: [{ name: marker, content: 'x' }] });
    const s2 = await openSession(client(), { language: 'javascript' });
    await okCell(client(), s2.session_id, 'var w = 1');
    const fp = jailFootprint(marker);
    assert.ok(fp.procs.length > 0 && fp.cgroups.length > 0, JSON.stringify(fp));
    const server = serverFootprint(conn.transport.pid);
    assert.ok(server.runner, 'runner found');
    assert.ok(procsInCgroupsOf(server.runner).length >= 2, 'the session jails are seen in the runner\'s cgroups');
    assert.ok(server.cgroups.length > 0, `the runner's cgroup parents were found: ${JSON.stringify(server)}`);
    closed = true;
    await conn.close();
    await assertFootprintGone(fp, 'a session jail after server shutdown', 10000);
    await waitFor(() => !server.procs.some(procAlive) && !server.cgroups.some((d) => existsSync(d)), 10000);
    assert.deepEqual(server.procs.filter(procAlive), [], 'server processes gone');
    assert.deepEqual(server.cgroups.filter((d) => existsSync(d)), [], 'cgroup trees removed');
    assert.deepEqual(procsInCgroupsOf(server.runner), [], 'no process left in the runner\'s cgroups');
  });
});

// ------------------------------------------------------------ HTTP, two API keys

describe('sessions over HTTP with two API keys', () => {
  let cfg;
  let server;
  let stopped = false;
  const keys = {};
  const conns = {};
  const clients = [];

  function cli(args) {
    const r = spawnSync(AIRLOCK_BIN, args, { encoding: 'utf8', timeout: 60000 });
    if (r.status !== 0) throw new Error(`airlock ${args.join(' ')} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
    return r;
  }

  async function connectAs(user, p = '/mcp') {
    const c = await connectHttp(`http://127.0.0.1:${server.port}${p}`, { headers: { Authorization: `Bearer ${keys[user]}` } });
    clients.push(c);
    await c.client.listTools();
    return c;
  }

  before(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'airlock-sess-http-'));
    const keysFile = path.join(dir, 'keys.json');
    cfg = tmpConfig('http', {
      server: { state_dir: path.join(dir, 'state'), http: { keys_file: keysFile }, shutdown_grace_s: 1 },
      endpoints: {
        main: { path: '/mcp', code_mode: 'off' },
        nosess: { path: '/nosess', code_mode: 'off', sessions: false },
      },
    });
    cfg.extraDir = dir;
    for (const user of ['alice', 'bob']) {
      const r = cli(['keys', 'create', '--file', keysFile, '--config', cfg.file, '--as', 'setup', '--user', user,
        '--role', 'admin', '--json']);
      keys[user] = JSON.parse(r.stdout).secret;
    }
    server = await startHttpServer({ args: ['--config', cfg.file] });
    conns.alice = await connectAs('alice');
    conns.bob = await connectAs('bob');
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    if (!stopped) await server?.stop();
    if (cfg) {
      rmSync(cfg.dir, { recursive: true, force: true });
      rmSync(cfg.extraDir, { recursive: true, force: true });
    }
  });

  defineLanguageTests(() => conns.alice.client, 'http');

  it('ownership: another key\'s session id is answered exactly like an unknown one, and is not listed', async () => {
    const alice = conns.alice.client;
    const bob = conns.bob.client;
    const s = await openSession(alice, { language: 'python' });
    try {
      await okCell(alice, s.session_id, 'owner = "alice"');
      const unknown = randomSessionId();
      const norm = (r, id) => JSON.stringify({
        isError: r.isError,
        content: r.content,
        structuredContent: r.structuredContent,
      }).split(id).join('<ID>');

      const bobRun = await rawCall(bob, 'run_code', { session_id: s.session_id, code: 'print(owner)' });
      const unkRun = await rawCall(bob, 'run_code', { session_id: unknown, code: 'print(owner)' });
      expectToolError(bobRun, 'E_SESSION_NOT_FOUND', s.session_id, 'bob runs in alice\'s session');
      expectToolError(unkRun, 'E_SESSION_NOT_FOUND', unknown, 'bob runs in an unknown session');
      assert.doesNotMatch(JSON.stringify(bobRun), /alice/, 'nothing of alice\'s session leaks');
      assert.equal(norm(bobRun, s.session_id), norm(unkRun, unknown), 'run_code: identical apart from the id');

      const bobClose = await rawCall(bob, 'close_session', { session_id: s.session_id });
      const unkClose = await rawCall(bob, 'close_session', { session_id: unknown });
      expectToolError(bobClose, 'E_SESSION_NOT_FOUND', s.session_id, 'bob closes alice\'s session');
      expectToolError(unkClose, 'E_SESSION_NOT_FOUND', unknown, 'bob closes an unknown session');
      assert.equal(norm(bobClose, s.session_id), norm(unkClose, unknown), 'close_session: identical apart from the id');

      assert.ok(!(await listSessions(bob)).some((x) => x.session_id === s.session_id), 'bob does not see alice\'s session');
      assert.ok((await listSessions(alice)).some((x) => x.session_id === s.session_id), 'alice sees hers');
      // Bob's attempts changed nothing for alice.
      assert.equal((await okCell(alice, s.session_id, 'print(owner)')).stdout, 'alice\n');
      // The owner is the key's user, not the HTTP connection: a second
      // connection with alice's key reaches the session; bob's new one does not.
      const alice2 = await connectAs('alice');
      assert.equal((await okCell(alice2.client, s.session_id, 'print(owner)')).stdout, 'alice\n');
      const bob2 = await connectAs('bob');
      expectToolError(await rawCall(bob2.client, 'run_code', { session_id: s.session_id, code: '1' }),
        'E_SESSION_NOT_FOUND', s.session_id, 'bob on a new connection');
      // Bob's own session is his alone.
      const b = await openSession(bob, { language: 'python' });
      try {
        await okCell(bob, b.session_id, 'owner = "bob"');
        expectToolError(await rawCall(alice, 'run_code', { session_id: b.session_id, code: 'print(owner)' }),
          'E_SESSION_NOT_FOUND', b.session_id, 'alice runs in bob\'s session');
        const bobList = (await listSessions(bob)).map((x) => x.session_id);
        assert.deepEqual(bobList, [b.session_id]);
      } finally {
        await closeQuietly(bob, b.session_id);
      }
    } finally {
      await closeQuietly(alice, s.session_id);
    }
  });

  it('an endpoint with "sessions": false offers no open_session and refuses session calls', async () => {
    const alice = conns.alice.client;
    const s = await openSession(alice, { language: 'python' });
    try {
      await okCell(alice, s.session_id, 'v = 1');
      const off = await connectAs('alice', '/nosess');
      const names = await toolNames(off.client);
      assert.ok(names.includes('run_code'), names.join());
      const out = await errorOrResult(() => rawCall(off.client, 'open_session', { language: 'python' }));
      if (names.includes('open_session')) {
        assert.ok(out.result, `open_session: ${out.error}`);
        expectToolError(out.result, 'E_SESSIONS_DISABLED', undefined, 'open_session on /nosess');
      } else {
        assert.ok(out.error || out.result?.isError, `open_session is not callable on /nosess: ${JSON.stringify(out.result)}`);
      }
      // Alice's session (opened on /mcp) cannot be used from /nosess.
      const r = await rawCall(off.client, 'run_code', { session_id: s.session_id, code: 'v += 1\nprint(v)' });
      expectToolError(r, 'E_SESSIONS_DISABLED', s.session_id, 'a session call on /nosess');
      assert.equal((await okCell(alice, s.session_id, 'print(v)')).stdout, '1\n', 'the refused call did not run');
      // One-shot runs still work there.
      const one = await sdkCall(off.client, 'run_code', { language: 'python', code: 'print(7)' });
      assert.equal(one.structuredContent.stdout, '7\n', show(one));
    } finally {
      await closeQuietly(alice, s.session_id);
    }
  });

  it('audit: session_open / session_close events with the owner, session calls as session_call runs naming the session', async () => {
    const alice = conns.alice.client;
    const s = await openSession(alice, { language: 'bash' });
    await okCell(alice, s.session_id, 'echo audited');
    await closeSession(alice, s.session_id);
    const rows = JSON.parse(cli(['audit', '--config', cfg.file, '--json']).stdout);
    const events = rows.filter((r) => r.type === 'event' && r.target === s.session_id);
    const kinds = events.map((e) => e.kind);
    assert.ok(kinds.includes('session_open'), JSON.stringify(events));
    assert.ok(kinds.includes('session_close'), JSON.stringify(events));
    for (const e of events) assert.match(String(e.actor), /alice/, JSON.stringify(e));
    const closeEv = events.find((e) => e.kind === 'session_close');
    assert.equal(closeEv.detail?.language, 'bash', JSON.stringify(closeEv));
    assert.equal(closeEv.detail?.calls, 1, JSON.stringify(closeEv));
    assert.ok('endpoint' in (closeEv.detail ?? {}), JSON.stringify(closeEv));
    const runs = rows.filter((r) => r.type === 'run' && r.limits?.session_id === s.session_id);
    assert.equal(runs.length, 1, JSON.stringify(rows.filter((r) => r.type === 'run').slice(-3)));
    assert.equal(runs[0].kind, 'session_call');
    assert.equal(runs[0].user, 'alice');
    assert.equal(runs[0].language, 'bash');
    assert.ok(runs[0].limits.timeout_ms > 0 && runs[0].limits.memory_mb === s.memory_mb, JSON.stringify(runs[0].limits));
  });

  it('server shutdown (SIGTERM) with open sessions, one of them in a call, leaves no process and no cgroup behind', async () => {
    const marker = markerName();
    const marker2 = markerName();
    const alice = conns.alice.client;
    const s = await openSession(alice, { language: 'ruby' });
    await okCell(alice, s.session_id, 'kept = 1', { files: [{ name: marker, content: 'x' }] });
    const s2 = await openSession(alice, { language: 'python' });
    await okCell(alice, s2.session_id, 'import time', { files: [{ name: marker2, content: 'y' }] });
    const started = markerName();
    const running = cell(alice, s2.session_id, `open("/work/${started}", "w").close()\ntime.sleep(30)`, { timeout_ms: 40000 })
      .catch((e) => e);
    assert.ok(await waitFor(() => jailProcs(started).length > 0, 20000), 'the long call started');
    const fp = jailFootprint(marker);
    const fp2 = jailFootprint(marker2);
    assert.ok(fp.procs.length > 0 && fp.cgroups.length > 0, JSON.stringify(fp));
    assert.ok(fp2.procs.length > 0 && fp2.cgroups.length > 0, JSON.stringify(fp2));
    const srv = serverFootprint(server.proc.pid);
    assert.ok(srv.runner && srv.cgroups.length > 0, JSON.stringify(srv));
    stopped = true;
    await server.stop();
    assert.equal(server.proc.signalCode === 'SIGKILL', false, 'the server stopped on SIGTERM, without SIGKILL');
    await running;
    await assertFootprintGone(fp, 'a session jail after SIGTERM', 10000);
    await assertFootprintGone(fp2, 'the jail of a session in a call after SIGTERM', 10000);
    await waitFor(() => !srv.procs.some(procAlive) && !srv.cgroups.some((d) => existsSync(d)), 10000);
    assert.deepEqual(srv.procs.filter(procAlive), [], 'server processes gone');
    assert.deepEqual(srv.cgroups.filter((d) => existsSync(d)), [], 'cgroup trees removed');
    assert.deepEqual(procsInCgroupsOf(srv.runner), [], 'no process left in the runner\'s cgroups');
  });
});

// ------------------------------------------------------------ idle expiry

describe('sessions: idle expiry and maximum lifetime (config idle_timeout_s 2, max_lifetime_s 6; open_session timeout_s 1)', () => {
  let cfg;
  let conn;

  before(async () => {
    cfg = tmpConfig('idle', { sessions: { idle_timeout_s: 2, max_lifetime_s: 6 } });
    conn = await connectStdio({ args: ['--config', cfg.file] });
    await conn.client.listTools();
  });
  after(async () => {
    await conn?.close();
    if (cfg) rmSync(cfg.dir, { recursive: true, force: true });
  });

  it('idle sessions expire: gone from list_sessions, E_SESSION_NOT_FOUND, jail destroyed, audited; a used one lives on', async () => {
    const client = conn.client;
    const ma = markerName();
    const mb = markerName();
    const a = await openSession(client, { language: 'python' });
    const b = await openSession(client, { language: 'bash', timeout_s: 1 });
    const busyOpening = Date.now();
    const busy = await openSession(client, { language: 'python' });
    const busyOpened = Date.now();
    try {
      assert.equal(a.idle_timeout_s, 2, 'the config default');
      assert.equal(a.max_lifetime_s, 6, 'the config\'s max_lifetime_s');
      assert.equal(b.idle_timeout_s, 1, 'open_session timeout_s');
      assert.ok(Date.parse(a.expires_at) - Date.now() <= 2500, `expires_at ${a.expires_at}`);
      await okCell(client, a.session_id, 'x = 1', { files: [{ name: ma, content: 'a' }] });
      await okCell(client, b.session_id, 'X=1', { files: [{ name: mb, content: 'b' }] });
      await okCell(client, busy.session_id, 'n = 0');
      const fa = jailFootprint(ma);
      const fb = jailFootprint(mb);
      assert.ok(fa.procs.length > 0 && fb.procs.length > 0, `${JSON.stringify(fa)} ${JSON.stringify(fb)}`);

      // ~3.6 s without touching a or b; `busy` gets a call every 0.9 s.
      const t0 = Date.now();
      while (Date.now() - t0 < 3600) {
        await sleep(900);
        await okCell(client, busy.session_id, 'n += 1');
      }
      const listed = (await listSessions(client)).map((x) => x.session_id);
      assert.ok(!listed.includes(a.session_id) && !listed.includes(b.session_id), `expired sessions listed: ${listed}`);
      assert.ok(listed.includes(busy.session_id), 'a session in use does not expire');

      expectToolError(await rawCall(client, 'run_code', { session_id: a.session_id, code: 'print(x)' }),
        'E_SESSION_NOT_FOUND', a.session_id, 'run_code after idle expiry');
      expectToolError(await rawCall(client, 'close_session', { session_id: b.session_id }),
        'E_SESSION_NOT_FOUND', b.session_id, 'close_session after idle expiry');
      await assertFootprintGone(fa, 'an expired python session');
      await assertFootprintGone(fb, 'an expired bash session');
      assert.match((await okCell(client, busy.session_id, 'print(n)')).stdout, /^[3-9]\n$/);

      // The reaper (not the refused call) closes and audits an expired session.
      const auditRows = () => JSON.parse(spawnSync(AIRLOCK_BIN, ['audit', '--config', cfg.file, '--json'], { encoding: 'utf8' }).stdout);
      const expireEvent = (id) => auditRows().find((x) => x.type === 'event' && x.kind === 'session_expire' && x.target === id);
      await waitFor(() => expireEvent(a.session_id) && expireEvent(b.session_id), 3000);
      const rows = auditRows();
      for (const s of [a, b]) {
        assert.ok(rows.some((r) => r.type === 'event' && r.kind === 'session_expire' && r.target === s.session_id),
          `a session_expire event for ${s.session_id}: ${JSON.stringify(rows.filter((r) => r.type === 'event').slice(-6))}`);
      }

      // The maximum lifetime ends `busy` 6 s after it opened, calls or not.
      let lastOk = Date.now();
      let r;
      for (;;) {
        await sleep(700);
        const started = Date.now();
        r = await rawCall(client, 'run_code', { session_id: busy.session_id, code: 'n += 1' });
        if (r.isError) {
          assert.ok(started >= busyOpening + 5900, `ended ${started - busyOpening} ms after open, before max_lifetime_s: ${show(r)}`);
          break;
        }
        lastOk = started;
        assert.ok(started < busyOpened + 8500, `still alive ${started - busyOpened} ms after open (max_lifetime_s 6)`);
      }
      expectToolError(r, 'E_SESSION_NOT_FOUND', busy.session_id, 'a call past the maximum lifetime');
      assert.ok(Date.now() - lastOk < 2000, 'the idle timeout did not end it');
      const ev = await waitFor(() => expireEvent(busy.session_id), 3000);
      assert.ok(ev, 'a session_expire event for the session past its lifetime');
      assert.match(JSON.stringify(ev.detail), /lifetime/, `the reason: ${JSON.stringify(ev)}`);
    } finally {
      await closeQuietly(client, a.session_id, b.session_id, busy.session_id);
    }
  });
  it('a call that runs longer than the idle timeout does not make its session expire', async () => {
    // The idle clock runs between calls ("the idle clock starts when the
    // call ends"): a session busy in a 2.5 s call is not idle.
    const client = conn.client;
    const s = await openSession(client, { language: 'python', timeout_s: 1 });
    try {
      await okCell(client, s.session_id, 'import time\nx = 1');
      const long = await okCell(client, s.session_id, 'time.sleep(2.5)\nprint("done", x)', { timeout_ms: 10000 });
      assert.equal(long.stdout, 'done 1\n');
      const next = await rawCall(client, 'run_code', { session_id: s.session_id, code: 'print(x + 1)' });
      assert.notEqual(next.isError, true, `the call right after a long call: ${show(next)}`);
      assert.equal(next.structuredContent.stdout, '2\n');
    } finally {
      await closeQuietly(client, s.session_id);
    }
  });
});

// ------------------------------------------------------------ max_total

describe('sessions: max_total 1, max_cpu_s 1', () => {
  let cfg;
  let conn;

  before(async () => {
    cfg = tmpConfig('total', { sessions: { max_total: 1, max_per_caller: 4, max_cpu_s: 1 } });
    conn = await connectStdio({ args: ['--config', cfg.file] });
    await conn.client.listTools();
  });
  after(async () => {
    await conn?.close();
    if (cfg) rmSync(cfg.dir, { recursive: true, force: true });
  });

  it('open_session beyond the total maximum → E_SESSION_LIMIT; closing makes room', async () => {
    const a = await openSession(conn.client, { language: 'bash' });
    let b;
    try {
      const r = await rawCall(conn.client, 'open_session', { language: 'python' });
      expectToolError(r, 'E_SESSION_LIMIT', undefined, 'a second session with max_total 1');
      await closeSession(conn.client, a.session_id);
      b = await openSession(conn.client, { language: 'python' });
      assert.equal((await okCell(conn.client, b.session_id, '6 * 7')).stdout, '42\n');
    } finally {
      await closeQuietly(conn.client, a.session_id, b?.session_id);
    }
  });

  it('the CPU budget (max_cpu_s 1) holds across calls: two calls of 0.7 s CPU lose the session', async () => {
    const s = await openSession(conn.client, { language: 'python' });
    try {
      const spin = 'import time\nt = time.process_time()\nwhile time.process_time() - t < 0.7:\n    pass';
      await okCell(conn.client, s.session_id, spin, { timeout_ms: 10000 });
      const r = await rawCall(conn.client, 'run_code', { session_id: s.session_id, code: spin, timeout_ms: 10000 });
      const sc = expectToolError(r, 'E_SESSION_LOST', s.session_id, 'the second 0.7 s of CPU');
      assert.ok(['timeout', 'killed_signal'].includes(sc.status), show(r));
      assert.match(sc.message, /cpu/i, sc.message);
    } finally {
      await closeQuietly(conn.client, s.session_id);
    }
  });
});

// ------------------------------------------------------------ sessions off

describe('sessions over HTTP without keys: each MCP session is its own anonymous caller', () => {
  let cfg;
  let server;
  const clients = [];

  async function connect() {
    const c = await connectHttp(`http://127.0.0.1:${server.port}/mcp`);
    clients.push(c);
    await c.client.listTools();
    return c;
  }

  before(async () => {
    // No keys, no token: every client is "anonymous". max_per_caller 2,
    // max_total 4: one client's leaked sessions must not use up another's.
    cfg = tmpConfig('anon', { server: { shutdown_grace_s: 1 }, sessions: { max_per_caller: 2, max_total: 4 } });
    server = await startHttpServer({ args: ['--config', cfg.file] });
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await server?.stop();
    if (cfg) rmSync(cfg.dir, { recursive: true, force: true });
  });

  it('client 2 can neither list nor use client 1\'s sessions, and client 1\'s leaked sessions leave client 2 its quota', async () => {
    const one = (await connect()).client;
    const two = (await connect()).client;
    // Client 1 opens its two sessions and "leaks" them (never closes them).
    const leaked = [await openSession(one, { language: 'bash' }), await openSession(one, { language: 'bash' })];
    await okCell(one, leaked[0].session_id, 'owner=one');
    expectToolError(await rawCall(one, 'open_session', { language: 'bash' }), 'E_SESSION_LIMIT', undefined,
      'client 1 past its own max_per_caller');

    // Client 2 does not see them ...
    const listed = (await listSessions(two)).map((x) => x.session_id);
    for (const s of leaked) assert.ok(!listed.includes(s.session_id), `client 2 lists ${s.session_id}`);
    // ... and is answered exactly as for an unknown id.
    const unknown = randomSessionId();
    const norm = (r, id) => JSON.stringify({ isError: r.isError, content: r.content, structuredContent: r.structuredContent })
      .split(id).join('<ID>');
    const run = await rawCall(two, 'run_code', { session_id: leaked[0].session_id, code: 'echo $owner' });
    const runUnknown = await rawCall(two, 'run_code', { session_id: unknown, code: 'echo $owner' });
    expectToolError(run, 'E_SESSION_NOT_FOUND', leaked[0].session_id, 'client 2 runs in client 1\'s session');
    assert.equal(norm(run, leaked[0].session_id), norm(runUnknown, unknown), 'run_code: identical apart from the id');
    const close = await rawCall(two, 'close_session', { session_id: leaked[1].session_id });
    const closeUnknown = await rawCall(two, 'close_session', { session_id: unknown });
    expectToolError(close, 'E_SESSION_NOT_FOUND', leaked[1].session_id, 'client 2 closes client 1\'s session');
    assert.equal(norm(close, leaked[1].session_id), norm(closeUnknown, unknown), 'close_session: identical apart from the id');

    // Client 2 still has its own quota.
    const mine = await openSession(two, { language: 'bash' });
    try {
      assert.equal((await okCell(two, mine.session_id, 'echo two')).stdout, 'two\n');
      assert.deepEqual((await listSessions(two)).map((x) => x.session_id), [mine.session_id]);
    } finally {
      await closeQuietly(two, mine.session_id);
    }
    // Client 1's sessions are untouched by all this.
    assert.equal((await okCell(one, leaked[0].session_id, 'echo $owner')).stdout, 'one\n');
    assert.equal((await listSessions(one)).length, 2);
    await closeQuietly(one, ...leaked.map((s) => s.session_id));
  });
});

describe('sessions turned off in the config', () => {
  let cfg;
  let conn;

  before(async () => {
    cfg = tmpConfig('off', { sessions: { enabled: false } });
    conn = await connectStdio({ args: ['--config', cfg.file] });
    await conn.client.listTools();
  });
  after(async () => {
    await conn?.close();
    if (cfg) rmSync(cfg.dir, { recursive: true, force: true });
  });

  it('open_session is not offered (or is refused with E_SESSIONS_DISABLED); session calls are refused', async () => {
    const names = await toolNames(conn.client);
    const out = await errorOrResult(() => rawCall(conn.client, 'open_session', { language: 'python' }));
    if (names.includes('open_session')) {
      assert.ok(out.result, String(out.error));
      expectToolError(out.result, 'E_SESSIONS_DISABLED', undefined, 'open_session with sessions off');
    } else {
      assert.ok(!names.includes('list_sessions') && !names.includes('close_session'), names.join());
      assert.ok(out.error || out.result?.isError, `open_session is not callable: ${JSON.stringify(out.result)}`);
      assert.ok(!out.result?.structuredContent?.session_id, 'no session was opened');
    }
    const r = await rawCall(conn.client, 'run_code', { session_id: randomSessionId(), code: 'print(1)' });
    expectToolError(r, 'E_SESSIONS_DISABLED', undefined, 'a session call with sessions off');
    const one = await sdkCall(conn.client, 'run_code', { language: 'python', code: 'print(1)' });
    assert.equal(one.structuredContent.stdout, '1\n', 'one-shot runs still work');
  });
});
