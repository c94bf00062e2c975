// The multi-host test, round-robin part (issue 30): the two gateways of
// tests/multihost/run.sh behind a round-robin proxy (round_robin.mjs: each
// request to the next gateway, no stickiness), driven in the modern era
// (2026-07-28, stateless) by the SDK v2 client (@modelcontextprotocol/client,
// pinned) with a bearer API key. Every call alternates gateways (the proxy
// records where each request went): a code session opened through one
// gateway keeps its state through both; a task started through one gateway
// is polled through both to its result; a gateway SIGKILLed mid-task leaves
// its task `failed` (its lease in PostgreSQL runs out), never `working`.
//
// Tasks go over raw fetch (the SDK v2 client refuses resultType "task" on
// tools/call; tests/e2e/modern.test.mjs). The gateways' config has
// tasks.lease_s 3 and tasks.min_timeout_ms 20000 (run.sh).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

// The SDK lives in tests/e2e/node_modules (run.sh checks it is installed).
import { Client, StreamableHTTPClientTransport } from '../e2e/node_modules/@modelcontextprotocol/client/dist/index.mjs';

import { pidsWithMarker, sleep, uniqueMarker, waitFor } from '../e2e/helpers.mjs';
import { startRoundRobin } from './round_robin.mjs';
import { alive, readPid, respawn } from './processes.mjs';

const TOPOLOGY = process.env.MH_TOPOLOGY;
const T = TOPOLOGY ? JSON.parse(readFileSync(TOPOLOGY, 'utf8')) : null;
const skip = T ? false : 'no $MH_TOPOLOGY: run tests/multihost/run.sh';

const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPS = 'io.modelcontextprotocol/clientCapabilities';
const META_CLIENT = 'io.modelcontextprotocol/clientInfo';

const GWS = T ? T.gateways : [];
const base = (g) => g.url.replace(/\/mcp$/, '');
const gwOf = (upstream) => GWS.find((g) => base(g) === upstream);
const nameOf = (upstream) => gwOf(upstream)?.name ?? upstream;
const LEASE_S = T ? (JSON.parse(readFileSync(GWS[0].config, 'utf8')).tasks?.lease_s ?? 30) : 30;

const show = (r) => JSON.stringify(r?.structuredContent ?? r, null, 1).slice(0, 1500);


async function readyz(g) {
  try {
    const res = await fetch(`${base(g)}/readyz`, { signal: AbortSignal.timeout(1500) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

describe('round-robin: two gateways behind a round-robin proxy, modern era', { skip }, () => {
  const secret = T?.keys.user.secret;
  let rr;
  let client;
  let nextId = 1;

  before(async () => {
    for (const g of GWS) assert.equal(await readyz(g), 200, `gateway ${g.name} is not ready`);
    rr = await startRoundRobin(GWS.map(base));
    client = new Client({ name: 'airlock-multihost-rr', version: '0.0.0' },
      { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${rr.url}/mcp`),
      { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }));
  });
  after(async () => {
    await client?.close().catch(() => {});
    await rr?.close();
  });

  // A tools/call through the SDK client; which gateway served it.
  async function callVia(name, args) {
    const mark = rr.log.length;
    const r = await client.callTool({ name, arguments: args }, { timeout: 60000 });
    const calls = rr.log.slice(mark).filter((e) => e.mcpMethod === 'tools/call');
    assert.equal(calls.length, 1, `one tools/call request per call: ${JSON.stringify(rr.log.slice(mark))}`);
    return { r, gw: nameOf(calls[0].upstream) };
  }

  // A raw modern JSON-RPC request (tasks need it); to the proxy unless `url`.
  async function rpc(method, params, { url = `${rr.url}/mcp`, name } = {}) {
    const mark = rr.log.length;
    const body = {
      jsonrpc: '2.0', id: nextId++, method,
      params: {
        ...params,
        _meta: { [META_VERSION]: MODERN, [META_CAPS]: { extensions: { [TASKS]: {} } }, [META_CLIENT]: { name: 'airlock-multihost-rr', version: '0' } },
      },
    };
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${secret}`,
        'MCP-Protocol-Version': MODERN, 'Mcp-Method': method, ...(name ? { 'Mcp-Name': name } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30000),
    });
    const text = await res.text();
    const sse = /^data: (.*)$/m.exec(text);
    let j;
    try { j = JSON.parse(sse ? sse[1] : text); } catch { j = undefined; }
    assert.ok(j && (j.result || j.error), `${method}: HTTP ${res.status}: ${text.slice(0, 1000)}`);
    const via = url.startsWith(rr.url) ? rr.log.slice(mark).map((e) => nameOf(e.upstream)).pop() : GWS.find((g) => url === g.url)?.name;
    return { ...j, gw: via };
  }
  const startTask = (args) => rpc('tools/call', { name: 'run_code', arguments: args }, { name: 'run_code' });
  const getTask = (taskId, opts = {}) => rpc('tasks/get', { taskId }, { ...opts, name: taskId });

  it('round-robin: the modern client\'s requests alternate between the two gateways', async () => {
    assert.equal(client.getProtocolEra(), 'modern');
    const mark = rr.log.length;
    // (Not tools/list: the SDK v2 client caches its answer.)
    for (let i = 0; i < 4; i++) {
      const r = await client.callTool({ name: 'list_languages', arguments: {} });
      assert.notEqual(r.isError, true, show(r));
    }
    const served = rr.log.slice(mark).map((e) => nameOf(e.upstream));
    assert.equal(served.length, 4, JSON.stringify(rr.log.slice(mark)));
    for (let i = 1; i < served.length; i++) assert.notEqual(served[i], served[i - 1], `alternates: ${served}`);
    assert.deepEqual(new Set(served), new Set(GWS.map((g) => g.name)));
    for (const e of rr.log) assert.notEqual(e.status, 502, `upstream error: ${JSON.stringify(e)}`);
  });

  it('round-robin: a code session works whichever gateway serves each call (cells keep state, list_sessions, close_session)', async (t) => {
    const trail = [];  // [tool, gateway, outcome]
    const step = async (name, args) => {
      const { r, gw } = await callVia(name, args);
      trail.push([name, gw, r.isError ? `ERROR ${r.structuredContent?.error_code ?? ''}` : 'ok']);
      return { r, gw };
    };
    let sid;
    try {
      const o = await step('open_session', { language: 'python' });
      assert.notEqual(o.r.isError, true, show(o.r));
      sid = o.r.structuredContent.session_id;
      assert.ok(sid, show(o.r));
      const first = await step('run_code', { session_id: sid, code: 'x = 1' });
      assert.equal(first.r.structuredContent?.status, 'ok', `cell 1 through ${first.gw} (opened through ${o.gw}): ${show(first.r)}`);
      const hosts = new Set([first.r.structuredContent.runner_host]);
      for (let i = 2; i <= 6; i++) {
        const c = await step('run_code', { session_id: sid, code: 'x += 1\nprint(x)' });
        assert.equal(c.r.structuredContent?.status, 'ok', `cell ${i} through ${c.gw} (opened through ${o.gw}): ${show(c.r)}`);
        assert.equal(c.r.structuredContent.stdout, `${i}\n`, `cell ${i} through ${c.gw}: state kept`);
        hosts.add(c.r.structuredContent.runner_host);
      }
      assert.equal(hosts.size, 1, `every cell on the session's runner host: ${[...hosts]}`);
      for (let i = 0; i < 2; i++) {
        const l = await step('list_sessions', {});
        assert.notEqual(l.r.isError, true, show(l.r));
        const ids = (l.r.structuredContent?.sessions ?? []).map((s) => s.session_id);
        assert.ok(ids.includes(sid), `list_sessions through ${l.gw} lists ${sid}: ${show(l.r)}`);
      }
      const cl = await step('close_session', { session_id: sid });
      assert.notEqual(cl.r.isError, true, `close_session through ${cl.gw}: ${show(cl.r)}`);
      sid = null;
      // Closed, through either gateway.
      for (let i = 0; i < 2; i++) {
        const after = await step('run_code', { session_id: o.r.structuredContent.session_id, code: 'print(x)' });
        assert.equal(after.r.isError, true, `run_code on a closed session through ${after.gw}: ${show(after.r)}`);
      }
      // Every kind of call reached both gateways.
      const by = (tool) => new Set(trail.filter(([n]) => n === tool).map(([, g]) => g));
      for (const tool of ['run_code', 'list_sessions']) assert.equal(by(tool).size, 2, `${tool} through ${[...by(tool)]}`);
    } finally {
      t.diagnostic(`calls: ${trail.map((x) => x.join(' ')).join('; ')}`);
      // Not closed by the test: through each gateway (one of them holds it).
      for (const g of sid ? GWS : []) await rpc('tools/call', { name: 'close_session', arguments: { session_id: sid } }, { url: g.url, name: 'close_session' }).catch(() => {});
    }
    for (let i = 1; i < trail.length; i++) assert.notEqual(trail[i][1], trail[i - 1][1], 'consecutive calls alternate gateways');
  });

  it('round-robin: a task started through one gateway is polled through both to completed with the run\'s result', async (t) => {
    const created = await startTask({ language: 'python', code: 'import time\ntime.sleep(3)\nprint("task done")', timeout_ms: 30000 });
    assert.equal(created.result?.resultType, 'task', JSON.stringify(created));
    assert.equal(created.result.status, 'working');
    const { taskId } = created.result;
    const polls = [];
    const end = Date.now() + 60000;
    let last;
    do {
      await sleep(250);
      last = await getTask(taskId);
      assert.ok(last.result, `tasks/get through ${last.gw}: ${JSON.stringify(last.error)}`);
      polls.push([last.gw, last.result.status]);
    } while (last.result.status === 'working' && Date.now() < end);
    t.diagnostic(`created through ${created.gw}; polls: ${polls.map((p) => p.join(':')).join(' ')}`);
    assert.equal(last.result.status, 'completed', JSON.stringify(last.result).slice(0, 1500));
    assert.equal(last.result.taskId, taskId);
    assert.equal(last.result.result?.structuredContent?.status, 'ok', JSON.stringify(last.result).slice(0, 1500));
    assert.equal(last.result.result.structuredContent.stdout, 'task done\n');
    const working = new Set(polls.filter(([, s]) => s === 'working').map(([g]) => g));
    assert.equal(working.size, 2, `both gateways answered 'working' while it ran: ${JSON.stringify(polls)}`);
    // Once completed, both gateways give the same result.
    const again = [await getTask(taskId), await getTask(taskId)];
    assert.notEqual(again[0].gw, again[1].gw);
    for (const a of again) assert.equal(a.result?.result?.structuredContent?.stdout, 'task done\n', `through ${a.gw}`);
  });

  it('round-robin: the gateway running a task SIGKILLed: the task reads failed through the survivor within lease_s, never working', async (t) => {
    const marker = uniqueMarker('rr-task-kill');
    const created = await startTask({ language: 'python', code: `# ${marker}\nimport time\ntime.sleep(40)\nprint("must not finish")`, timeout_ms: 50000 });
    assert.equal(created.result?.resultType, 'task', JSON.stringify(created));
    const { taskId } = created.result;
    const victim = GWS.find((g) => g.name === created.gw);
    assert.ok(victim, `the gateway that took the task: ${created.gw}`);
    const survivor = GWS.find((g) => g !== victim);
    assert.ok(await waitFor(() => pidsWithMarker(marker).length > 0, 20000), 'the task\'s run started');
    // Working through both first.
    for (const g of GWS) assert.equal((await getTask(taskId, { url: g.url })).result?.status, 'working', `through ${g.name}`);

    const pid = readPid(victim.pid_file);
    process.kill(pid, 'SIGKILL');
    const tKill = Date.now();
    assert.ok(await waitFor(() => !alive(pid), 5000), `gateway ${victim.name} (pid ${pid}) is gone`);

    const limit = LEASE_S * 1000 + 4000;
    let last;
    const seen = [];
    for (;;) {
      last = await getTask(taskId, { url: survivor.url });
      assert.ok(last.result, `tasks/get through ${survivor.name}: ${JSON.stringify(last.error)}`);
      seen.push(last.result.status);
      if (last.result.status !== 'working' || Date.now() - tKill > limit + 10000) break;
      await sleep(200);
    }
    const took = Date.now() - tKill;
    t.diagnostic(`task created through ${victim.name}, killed it; ${survivor.name} read ${last.result.status} ${took} ms later `
      + `(lease_s ${LEASE_S}; ${seen.length} polls)`);
    assert.equal(last.result.status, 'failed', JSON.stringify(last.result).slice(0, 1500));
    assert.ok(took <= limit, `failed only ${took} ms after the kill (lease_s ${LEASE_S})`);
    const err = last.result.error;
    assert.equal(err?.code, -32603, JSON.stringify(last.result));
    assert.match(err.message, /gateway.*(stopped|lease)/i, JSON.stringify(err));
    assert.ok(!JSON.stringify(last.result).includes('must not finish'));
    // It stays failed.
    await sleep(1000);
    assert.equal((await getTask(taskId, { url: survivor.url })).result?.status, 'failed');
    // The dead gateway's run does not go on (its gRPC stream broke).
    assert.ok(await waitFor(() => pidsWithMarker(marker).length === 0, 20000), 'the killed gateway\'s run is gone');

    // Restarted, the gateway serves again and reads the task failed too.
    respawn(victim);
    assert.ok(await waitFor(async () => (await readyz(victim)) === 200, 30000), `restarted ${victim.name} not ready`);
    const back = await getTask(taskId, { url: victim.url });
    assert.equal(back.result?.status, 'failed', JSON.stringify(back));
    // ... and the pair behind the proxy works again.
    const r = [await client.callTool({ name: 'run_code', arguments: { language: 'bash', code: 'echo back' } }),
      await client.callTool({ name: 'run_code', arguments: { language: 'bash', code: 'echo back' } })];
    for (const x of r) assert.equal(x.structuredContent?.stdout, 'back\n', show(x));
  });
});
