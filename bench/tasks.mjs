#!/usr/bin/env node
// The Tasks extension's cost (docs/mcp.md "Tasks"): python `print(1)` through
// run_code as a blocking modern call against the same call made a task
// (timeout_ms at tasks.min_timeout_ms, client declaring
// io.modelcontextprotocol/tasks), as raw Streamable HTTP POSTs with an API
// key against one `airlock serve --http`, interleaved round by round. For the
// task: the CreateTaskResult alone, create + first tasks/get, and create +
// tasks/get every 5 ms until completed (time to the result).
//
//   node bench/tasks.mjs [--runs N]     (default 20)
//
// Needs build/airlock (or $AIRLOCK_BIN). Prints medians and p90; asserts nothing.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const AIRLOCK = process.env.AIRLOCK_BIN || path.join(REPO, 'build', 'airlock');
const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const i = process.argv.indexOf('--runs');
const RUNS = i > 0 ? Number(process.argv[i + 1]) : 20;

const tmp = mkdtempSync(path.join(os.tmpdir(), 'airlock-bench-tasks-'));
const configFile = path.join(tmp, 'airlock.json');
const keysFile = path.join(tmp, 'keys.json');
writeFileSync(configFile, JSON.stringify({
  server: { state_dir: path.join(tmp, 'state'), http: { keys_file: keysFile } },
  tasks: { mode: 'long', min_timeout_ms: 20000 },
}));
const k = spawnSync(AIRLOCK, ['keys', 'create', '--file', keysFile, '--config', configFile, '--as', 'bench',
  '--user', 'bench', '--role', 'admin', '--json'], { encoding: 'utf8' });
if (k.status !== 0) throw new Error(k.stderr);
const secret = JSON.parse(k.stdout).secret;

const proc = spawn(AIRLOCK, ['serve', '--http', '127.0.0.1:0', '--config', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
const url = await new Promise((resolve, reject) => {
  let err = '';
  proc.stderr.on('data', (d) => {
    err += d;
    const m = /http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err);
    if (m && Number(m[1]) > 0) resolve(m[0]);
  });
  proc.on('exit', () => reject(new Error(err)));
});

let id = 1;
async function post(method, params, name) {
  params._meta = { 'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } };
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${secret}`, 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method, 'Mcp-Name': name },
    body: JSON.stringify({ jsonrpc: '2.0', id: id++, method, params }),
  });
  const j = await res.json();
  if (!j.result) throw new Error(JSON.stringify(j));
  return j.result;
}
const runCode = (timeout_ms) => post('tools/call',
  { name: 'run_code', arguments: { language: 'python', code: 'print(1)', timeout_ms } }, 'run_code');

const t = { blocking: [], create: [], createFirstPoll: [], toResult: [] };
await runCode(1000);  // warm-up
for (let r = 0; r < RUNS; ++r) {
  let t0 = performance.now();
  const b = await runCode(1000);
  if (b.resultType !== 'complete' || b.structuredContent.stdout !== '1\n') throw new Error(JSON.stringify(b));
  t.blocking.push(performance.now() - t0);

  t0 = performance.now();
  const c = await runCode(20000);
  if (c.resultType !== 'task') throw new Error(JSON.stringify(c));
  t.create.push(performance.now() - t0);
  let g = await post('tasks/get', { taskId: c.taskId }, c.taskId);
  t.createFirstPoll.push(performance.now() - t0);
  while (g.status === 'working') {
    await new Promise((res) => setTimeout(res, 5));
    g = await post('tasks/get', { taskId: c.taskId }, c.taskId);
  }
  if (g.status !== 'completed' || g.result.structuredContent.stdout !== '1\n') throw new Error(JSON.stringify(g));
  t.toResult.push(performance.now() - t0);
}
proc.kill('SIGTERM');
rmSync(tmp, { recursive: true, force: true });

const q = (a, p) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(p * a.length))];
console.log(`runs: ${RUNS} (python print(1), HTTP, API key)`);
for (const [name, a] of Object.entries(t)) {
  console.log(`${name.padEnd(16)} median ${q(a, 0.5).toFixed(1)} ms   p90 ${q(a, 0.9).toFixed(1)} ms`);
}
