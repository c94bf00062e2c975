// Median round-trip of run_code python `print(1)` through the official SDK
// client (stdio and Streamable HTTP), next to the same run through
// `airlock run --lang python -`. Not a test; `npm run roundtrip [-- N]`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { AIRLOCK_BIN, connectHttp, connectStdio, runCode, startHttpServer } from './helpers.mjs';

const n = Number(process.argv[2] ?? 20);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

async function viaClient(client) {
  const times = [];
  await runCode(client, { language: 'python', code: 'print(1)' }); // warm-up
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await runCode(client, { language: 'python', code: 'print(1)' });
    times.push(performance.now() - t0);
    if (r.structuredContent?.stdout !== '1\n') throw new Error(`unexpected result ${JSON.stringify(r.structuredContent)}`);
  }
  return median(times);
}

// The program is passed as a file: `airlock run ... -` opens /dev/stdin,
// which fails when stdin is a socket (Node's child stdio pipes are).
function viaCli() {
  const dir = mkdtempSync(path.join(tmpdir(), 'airlock-roundtrip-'));
  const file = path.join(dir, 'one.py');
  writeFileSync(file, 'print(1)\n');
  const once = () => {
    const t0 = performance.now();
    const p = spawnSync(AIRLOCK_BIN, ['run', '--lang', 'python', file]);
    const ms = performance.now() - t0;
    if (p.stdout.toString() !== '1\n') throw new Error(`airlock run: ${p.stderr}`);
    return ms;
  };
  try {
    once();
    return median(Array.from({ length: n }, once));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const stdio = await connectStdio();
const stdioMs = await viaClient(stdio.client);
await stdio.close();
const server = await startHttpServer();
const http = await connectHttp(server.url);
const httpMs = await viaClient(http.client);
await http.close();
await server.stop();
const cliMs = viaCli();
console.log(`median of ${n} runs, python print(1):`);
console.log(`  SDK client over stdio : ${stdioMs.toFixed(1)} ms`);
console.log(`  SDK client over HTTP  : ${httpMs.toFixed(1)} ms`);
console.log(`  airlock run (CLI)     : ${cliMs.toFixed(1)} ms`);
