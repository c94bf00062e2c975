// The OCI image driven by the official MCP SDK client (tests/oci/image_test.sh):
// stdio through `podman run -i ... airlock:<version> serve` (every native
// language, every WASM-tier language, direct escape probes), and Streamable
// HTTP against a container started by image_test.sh with a published port.
//   AIRLOCK_OCI_RUN='["podman","run","-i",...,"ghcr.io/airlock/airlock:0.1.0"]' AIRLOCK_OCI_HTTP=http://127.0.0.1:PORT/mcp node --test tests/oci/smoke.mjs
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import { HELLO, LANGUAGES, connectHttp, newClient, runCode } from '../e2e/helpers.mjs';

const { StdioClientTransport } = await import(
  new URL('../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js', import.meta.url));

const RUN = JSON.parse(process.env.AIRLOCK_OCI_RUN);
const HTTP_URL = process.env.AIRLOCK_OCI_HTTP;
const WASM_HELLO = {
  javascript: HELLO.javascript,
  python: HELLO.python,
  ruby: HELLO.ruby,
  php: HELLO.php,
};  // C and C++ in the WASM tier need clang and wasi-libc, which the image leaves out
const LONG = { timeout: 180000 };

describe(`the image through ${RUN.slice(0, 2).join(' ')}`, () => {
  const closers = [];
  after(async () => { for (const c of closers.reverse()) await c().catch(() => {}); });

  let client;
  it('connects over stdio (podman run -i ... serve)', async () => {
    const transport = new StdioClientTransport({
      command: RUN[0], args: [...RUN.slice(1), 'serve'], env: { ...process.env }, stderr: 'inherit',
    });
    client = newClient('airlock-oci');
    await client.connect(transport);
    closers.push(() => client.close());
  });

  for (const lang of LANGUAGES) {
    it(`runs ${lang} natively`, async () => {
      const r = await runCode(client, { language: lang, code: HELLO[lang] }, LONG);
      assert.equal(r.structuredContent.status, 'ok', JSON.stringify(r.structuredContent));
      assert.equal(r.structuredContent.stdout, `hello from ${lang}\n`);
    });
  }
  for (const lang of Object.keys(WASM_HELLO)) {
    it(`runs ${lang} in the WASM tier`, async () => {
      const r = await runCode(client, { language: lang, code: WASM_HELLO[lang], isolation: 'wasm' }, LONG);
      assert.equal(r.structuredContent.status, 'ok', JSON.stringify(r.structuredContent));
      assert.equal(r.structuredContent.stdout, `hello from ${lang}\n`);
    });
  }

  it('contains a jail inside the container: no /proc/1/environ, no network, no container processes', async () => {
    const code = [
      'import os, socket',
      'try:',
      '    print("environ of pid 1:", open("/proc/1/environ").read())',
      'except OSError as e: print("environ denied", e.errno)',
      'print("own env:", dict(os.environ))',
      'print("pids", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))',
      'try:',
      '    socket.create_connection(("10.0.2.2", 22), timeout=3); print("NET-OPEN")',
      'except OSError as e: print("net denied", e.errno)',
      'try:',
      '    socket.create_connection(("deb.debian.org", 80), timeout=3); print("NET-OPEN")',
      'except OSError as e: print("dns/net denied", e.errno)',
    ].join('\n');
    const r = await runCode(client, { language: 'python', code }, LONG);
    const out = r.structuredContent.stdout;
    assert.equal(r.structuredContent.status, 'ok', JSON.stringify(r.structuredContent));
    assert.doesNotMatch(out, /NET-OPEN/);
    assert.match(out, /net denied/);
    // The container's environment (image_test.sh sets a marker in it) reaches
    // neither the jail's PID 1 (airlock-init) nor the program.
    assert.doesNotMatch(out, /oci-secret-marker/);
  });
});

describe('the image over Streamable HTTP (published port)', { skip: !HTTP_URL && 'no AIRLOCK_OCI_HTTP' }, () => {
  it('runs python and reports health', async () => {
    const c = await connectHttp(HTTP_URL);
    try {
      const r = await runCode(c.client, { language: 'python', code: 'print(6*7)' }, LONG);
      assert.equal(r.structuredContent.status, 'ok', JSON.stringify(r.structuredContent));
      assert.equal(r.structuredContent.stdout, '42\n');
      const js = await runCode(c.client, { language: 'javascript', code: 'console.log("wasm-http")', isolation: 'wasm' }, LONG);
      assert.equal(js.structuredContent.stdout, 'wasm-http\n');
    } finally {
      await c.close();
    }
    assert.equal((await fetch(new URL('/healthz', HTTP_URL))).status, 200);
  });
});
