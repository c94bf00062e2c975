// Shared helpers for airlock's end-to-end tests: locate the binary, start
// `airlock serve` over stdio or Streamable HTTP, connect the official MCP
// TypeScript SDK client, and a few raw-protocol utilities.
//
//   const s = await connectStdio();              // {client, transport, stderr(), protocolVersion(), close()}
//   const h = await startHttpServer();           // {url, proc, stderr(), stop()}
//   const c = await connectHttp(h.url);          // {client, transport, protocolVersion(), close()}
//   const r = await runCode(c.client, {language: 'python', code: 'print(1)'});
//
// The binary is $AIRLOCK_BIN, else <repo>/build/airlock.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(here, '..', '..');
export const AIRLOCK_BIN = process.env.AIRLOCK_BIN || path.join(REPO, 'build', 'airlock');
export const E2E_DIR = here;

// The eight languages of the native tier, each with a hello-world program.
export const HELLO = {
  python: 'print("hello from python")',
  javascript: 'console.log("hello from javascript")',
  typescript: 'const who: string = "typescript";\nconsole.log(`hello from ${who}`);',
  c: '#include <stdio.h>\nint main(void) { printf("hello from c\\n"); return 0; }',
  cpp: '#include <iostream>\nint main() { std::cout << "hello from cpp" << std::endl; }',
  ruby: 'puts "hello from ruby"',
  php: '<?php echo "hello from php\\n";',
  bash: 'echo "hello from bash"',
};
export const LANGUAGES = Object.keys(HELLO);

export const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

// The run result keys the contract promises in structuredContent.
export const RESULT_KEYS = [
  'status', 'message', 'error_code', 'language', 'isolation', 'exit_code', 'signal',
  'stdout', 'stdout_truncated', 'stderr', 'stderr_truncated', 'compile_output',
  'compile_output_truncated', 'wall_ms', 'cpu_ms', 'compile_ms', 'peak_memory_bytes', 'files',
  'files_truncated', 'files_skipped', 'files_left', 'notes',
];

export function assertBinary() {
  if (!existsSync(AIRLOCK_BIN)) {
    throw new Error(`airlock binary not found at ${AIRLOCK_BIN} (build it, or set AIRLOCK_BIN)`);
  }
}

export function newClient(name = 'airlock-e2e') {
  return new Client({ name, version: '0.0.0' }, { capabilities: {} });
}

// Collects a child's stderr (bounded) for failure messages.
function collect(stream, limit = 64 * 1024) {
  let buf = '';
  stream?.on('data', (d) => {
    buf += d.toString();
    if (buf.length > limit) buf = buf.slice(buf.length - limit);
  });
  return () => buf;
}

// `airlock serve [...args]` over stdio through the SDK's StdioClientTransport.
export async function connectStdio({ args = [], env } = {}) {
  assertBinary();
  const transport = new StdioClientTransport({
    command: AIRLOCK_BIN,
    args: ['serve', ...args],
    env: env ?? { ...process.env },
    stderr: 'pipe',
  });
  const stderr = collect(transport.stderr);
  // The SDK hands the negotiated version to transports that take it (HTTP
  // does); give the stdio transport the same hook so tests can read it.
  let negotiated;
  transport.setProtocolVersion = (v) => { negotiated = v; };
  const client = newClient();
  try {
    await client.connect(transport);
  } catch (e) {
    await client.close().catch(() => {});
    throw new Error(`stdio connect failed: ${e.message}\n--- airlock stderr ---\n${stderr()}`);
  }
  return { client, transport, stderr, protocolVersion: () => negotiated, close: () => client.close() };
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const URL_RE = /https?:\/\/127\.0\.0\.1:(\d+)\/mcp/;  // https: server.http.tls

// Spawns `airlock serve --http 127.0.0.1:PORT [...args]` and resolves once
// it printed its URL on stderr (the agreed readiness signal). Tries port 0
// first (the server reports the port it bound), then an explicit free port.
export async function startHttpServer({ args = [], readyTimeoutMs = 20000 } = {}) {
  assertBinary();
  let lastError;
  for (const port of [0, await freePort()]) {
    try {
      return await spawnHttp(port, args, readyTimeoutMs);
    } catch (e) {
      lastError = e;
    }
  }
  throw lastError;
}

function spawnHttp(port, args, readyTimeoutMs) {
  return new Promise((resolve, reject) => {
    const proc = spawn(AIRLOCK_BIN, ['serve', '--http', `127.0.0.1:${port}`, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderrBuf = '';
    let stdoutBuf = '';
    let settled = false;
    const stderr = () => stderrBuf;
    const stop = () => stopProcess(proc);
    const fail = (msg) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stop().finally(() => reject(new Error(`${msg}\n--- airlock stderr ---\n${stderrBuf}`)));
    };
    const timer = setTimeout(() => fail(`airlock serve --http 127.0.0.1:${port} printed no URL within ${readyTimeoutMs} ms`), readyTimeoutMs);
    proc.stdout.on('data', (d) => { stdoutBuf += d.toString(); });
    proc.stderr.on('data', (d) => {
      stderrBuf += d.toString();
      if (stderrBuf.length > 256 * 1024) stderrBuf = stderrBuf.slice(-128 * 1024);
      const m = URL_RE.exec(stderrBuf);
      if (m && !settled && Number(m[1]) > 0) {
        settled = true;
        clearTimeout(timer);
        resolve({ url: m[0], port: Number(m[1]), proc, stderr, stdout: () => stdoutBuf, stop });
      }
    });
    proc.on('error', (e) => fail(`spawn failed: ${e.message}`));
    proc.on('exit', (code, sig) => fail(`airlock serve --http exited early (code ${code}, signal ${sig})`));
  });
}

// SIGTERM, then SIGKILL after 5 s; resolves when the process is gone.
export function stopProcess(proc, graceMs = 5000) {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    const t = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    proc.once('exit', () => { clearTimeout(t); resolve(); });
    proc.kill('SIGTERM');
  });
}

export async function connectHttp(url, { headers } = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(url), headers ? { requestInit: { headers } } : undefined);
  const client = newClient();
  await client.connect(transport);
  return { client, transport, protocolVersion: () => transport.protocolVersion, close: () => client.close() };
}

export function runCode(client, args, options = {}) {
  return client.callTool({ name: 'run_code', arguments: args }, undefined, { timeout: 60000, ...options });
}

// The text of every text content block, joined.
export function textOf(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// Calls `fn` expecting either a JSON-RPC error (returns {error}) or a tool
// result (returns {result}).
export async function errorOrResult(fn) {
  try {
    return { result: await fn() };
  } catch (error) {
    return { error };
  }
}

// PIDs whose command line contains `marker` (host view of /proc: jailed
// processes live in their own PID namespace but are visible here).
// Processes whose command line carries `marker`, or that live in a jail
// whose /work/main.* carries it (a pre-started interpreter's command line is
// its harness, not the run's arguments; the jail's init counts too).
export function pidsWithMarker(marker) {
  const pids = [];
  for (const ent of readdirSync('/proc')) {
    if (!/^\d+$/.test(ent) || Number(ent) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${ent}/cmdline`, 'utf8');
      if (cmdline.includes(marker)) {
        pids.push(Number(ent));
        continue;
      }
    } catch {
      continue;  // exited meanwhile
    }
    for (const main of ['main.py', 'main.js', 'main.rb', 'main.php', 'main.sh']) {
      try {
        if (readFileSync(`/proc/${ent}/root/work/${main}`, 'utf8').includes(marker)) {
          pids.push(Number(ent));
          break;
        }
      } catch {
        // not a jail, no such file, or exited meanwhile
      }
    }
  }
  return pids;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls `pred` every 50 ms until true or `timeoutMs`; returns the last value.
export async function waitFor(pred, timeoutMs) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await pred();
    if (v || Date.now() >= end) return v;
    await sleep(50);
  }
}

export function uniqueMarker(tag) {
  return `airlock-e2e-${tag}-${process.pid}-${Date.now()}-${Math.floor(Math.random() * 1e9)}`;
}
