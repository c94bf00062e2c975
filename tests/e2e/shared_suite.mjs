// The transport-independent end-to-end checks, run once over stdio and once
// over Streamable HTTP. `ctx()` returns {client} of a connected SDK client.
import assert from 'node:assert/strict';
import { it } from 'node:test';

import { McpError } from '@modelcontextprotocol/sdk/types.js';

import {
  HELLO, LANGUAGES, PNG_MAGIC, RESULT_KEYS, errorOrResult, pidsWithMarker, runCode, sleep, textOf,
  uniqueMarker, waitFor,
} from './helpers.mjs';

function describeResult(r) {
  return JSON.stringify(r?.structuredContent ?? r, null, 1).slice(0, 2000);
}

// Accepts a JSON-RPC error with one of `codes`, or a tool result with
// isError; returns the error text for further checks.
function expectErrorText(outcome, codes, what) {
  if (outcome.error) {
    assert.ok(outcome.error instanceof McpError, `${what}: expected McpError, got ${outcome.error}`);
    assert.ok(codes.includes(outcome.error.code), `${what}: JSON-RPC error code ${outcome.error.code}, want one of ${codes}`);
    return outcome.error.message;
  }
  assert.equal(outcome.result.isError, true, `${what}: expected isError: true, got ${describeResult(outcome.result)}`);
  const text = textOf(outcome.result) + JSON.stringify(outcome.result.structuredContent ?? {});
  return text;
}

export function defineSharedTests(ctx) {
  it('initialize: server info, tools and logging capabilities, instructions', () => {
    const { client } = ctx();
    const info = client.getServerVersion();
    assert.ok(info?.name, 'serverInfo.name');
    assert.ok(info?.version, 'serverInfo.version');
    const caps = client.getServerCapabilities();
    assert.ok(caps?.tools, 'tools capability');
    assert.ok(caps?.logging, 'logging capability (issue 3)');
  });

  it('ping', async () => {
    const { client } = ctx();
    assert.deepEqual(await client.ping(), {});
  });

  it('tools/list: run_code with language enum, outputSchema, annotations; list_languages', async () => {
    const { client } = ctx();
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    assert.ok(names.includes('run_code'), `tools: ${names}`);
    assert.ok(names.includes('list_languages'), `tools: ${names}`);
    const rc = tools.find((t) => t.name === 'run_code');
    assert.equal(rc.inputSchema.type, 'object');
    const lang = rc.inputSchema.properties?.language;
    assert.ok(lang, 'inputSchema.properties.language');
    assert.deepEqual([...lang.enum].sort(), [...LANGUAGES].sort(), 'language enum lists the 8 installed languages');
    for (const p of ['code', 'stdin', 'args', 'files', 'output_files', 'timeout_ms', 'memory_mb']) {
      assert.ok(rc.inputSchema.properties[p], `inputSchema.properties.${p}`);
    }
    // language may be left out in a session (session_id): the schema must
    // not require what a valid call omits; the server checks it instead.
    assert.deepEqual(rc.inputSchema.required, ['code'], 'code required; language required only without session_id');
    assert.match(lang.description, /session_id/, 'language says when it may be left out');
    assert.equal(rc.outputSchema?.type, 'object', 'run_code has an outputSchema');
    for (const k of ['status', 'stdout', 'stderr', 'exit_code', 'files']) {
      assert.ok(rc.outputSchema.properties?.[k], `outputSchema.properties.${k}`);
    }
    assert.ok(rc.description && rc.description.length > 20, 'description');
    assert.match(rc.description, /network/i, 'description says what about the network');
    assert.ok(rc.annotations, 'run_code annotations');
    assert.equal(rc.annotations.openWorldHint, false, 'no network: openWorldHint false');
    assert.equal(rc.annotations.destructiveHint, false, 'ephemeral jail: destructiveHint false');
    assert.equal(typeof rc.annotations.readOnlyHint, 'boolean');
  });

  for (const language of LANGUAGES) {
    it(`run_code hello world: ${language}`, async () => {
      const { client } = ctx();
      const r = await runCode(client, { language, code: HELLO[language] });
      const sc = r.structuredContent;
      assert.ok(sc, 'structuredContent present');
      assert.equal(sc.status, 'ok', describeResult(r));
      assert.equal(sc.stdout, `hello from ${language}\n`);
      assert.equal(sc.exit_code, 0);
      assert.equal(sc.language, language);
      assert.equal(r.isError ?? false, false);
      for (const k of RESULT_KEYS) assert.ok(k in sc, `structuredContent.${k}`);
      assert.ok(textOf(r).includes(`hello from ${language}`), 'text block shows stdout');
    });
  }

  it('run_code: stdin and args reach the program', async () => {
    const { client } = ctx();
    const r = await runCode(client, {
      language: 'python',
      code: 'import sys\nprint(sys.stdin.read().upper())\nprint(sys.argv[1:])',
      stdin: 'abc def',
      args: ['x', 'y z'],
    });
    assert.equal(r.structuredContent.status, 'ok', describeResult(r));
    assert.equal(r.structuredContent.stdout, "ABC DEF\n['x', 'y z']\n");
  });

  it('run_code: text and base64 input files, text and binary output files', async () => {
    const { client } = ctx();
    const binIn = Buffer.from([0, 1, 2, 0xff, 0xfe]);
    const code = [
      'data = open("data/in.txt").read()',
      'raw = open("blob.bin", "rb").read()',
      'print(data.strip(), list(raw))',
      'open("out.txt", "w").write(data.upper())',
      'open("out.bin", "wb").write(bytes(reversed(raw)))',
      'open("ignored.log", "w").write("not requested")',
    ].join('\n');
    const r = await runCode(client, {
      language: 'python',
      code,
      files: [
        { name: 'data/in.txt', content: 'hello file\n', encoding: 'text' },
        { name: 'blob.bin', content: binIn.toString('base64'), encoding: 'base64' },
      ],
      output_files: ['out.txt', '*.bin'],
    });
    const sc = r.structuredContent;
    assert.equal(sc.status, 'ok', describeResult(r));
    assert.equal(sc.stdout, 'hello file [0, 1, 2, 255, 254]\n');
    const byName = Object.fromEntries(sc.files.map((f) => [f.name, f]));
    assert.ok(!byName['ignored.log'], 'only requested files are returned');
    assert.ok(byName['out.txt'], `files: ${sc.files.map((f) => f.name)}`);
    assert.equal(byName['out.txt'].encoding, 'text');
    assert.equal(byName['out.txt'].content, 'HELLO FILE\n');
    assert.equal(byName['out.txt'].size, 11);
    assert.ok(byName['out.bin'], `files: ${sc.files.map((f) => f.name)}`);
    const binOut = byName['out.bin'].encoding === 'base64'
      ? Buffer.from(byName['out.bin'].content, 'base64')
      : Buffer.from(byName['out.bin'].content, 'utf8');
    assert.equal(byName['out.bin'].encoding, 'base64', 'non-UTF-8 bytes come back as base64');
    assert.deepEqual([...binOut], [...binIn].reverse());
    // Non-image files are embedded resources.
    const resources = r.content.filter((c) => c.type === 'resource');
    const txt = resources.find((c) => c.resource.uri.endsWith('out.txt'));
    assert.ok(txt, `embedded resource for out.txt in ${JSON.stringify(r.content.map((c) => c.type))}`);
    assert.equal(txt.resource.text, 'HELLO FILE\n');
    const bin = resources.find((c) => c.resource.uri.endsWith('out.bin'));
    assert.ok(bin, 'embedded resource for out.bin');
    assert.deepEqual([...Buffer.from(bin.resource.blob, 'base64')], [...binIn].reverse());
  });

  it('run_code: matplotlib PNG comes back as image content', async () => {
    const { client } = ctx();
    const code = [
      'import matplotlib',
      'matplotlib.use("Agg")',
      'import matplotlib.pyplot as plt',
      'plt.plot([1, 2, 3], [4, 1, 9])',
      'plt.savefig("plot.png")',
      'print("saved")',
    ].join('\n');
    const r = await runCode(client, { language: 'python', code, output_files: ['*.png'], timeout_ms: 30000 });
    assert.equal(r.structuredContent.status, 'ok', describeResult(r));
    const img = r.content.find((c) => c.type === 'image');
    assert.ok(img, `image content in ${JSON.stringify(r.content.map((c) => c.type))}`);
    assert.equal(img.mimeType, 'image/png');
    const bytes = Buffer.from(img.data, 'base64');
    assert.ok(bytes.length > 100, 'non-trivial PNG');
    assert.deepEqual(bytes.subarray(0, 8), PNG_MAGIC, 'PNG magic bytes');
    const f = r.structuredContent.files.find((x) => x.name === 'plot.png');
    assert.ok(f, 'plot.png in structuredContent.files');
    assert.equal(f.mime_type, 'image/png');
    assert.equal(f.size, bytes.length);
  });

  it('run_code: compile_error for bad C, with compile_output', async () => {
    const { client } = ctx();
    const r = await runCode(client, { language: 'c', code: 'int main(void) { return undefined_symbol_xyz + ; }' });
    assert.equal(r.structuredContent.status, 'compile_error', describeResult(r));
    assert.equal(r.isError, true);
    assert.ok(r.structuredContent.compile_output.length > 0, 'compile_output non-empty');
    assert.match(r.structuredContent.compile_output, /error/);
  });

  it('run_code: exit_nonzero sets isError and exit_code', async () => {
    const { client } = ctx();
    const r = await runCode(client, { language: 'python', code: 'import sys\nprint("bye")\nsys.exit(3)' });
    assert.equal(r.structuredContent.status, 'exit_nonzero', describeResult(r));
    assert.equal(r.structuredContent.exit_code, 3);
    assert.equal(r.structuredContent.stdout, 'bye\n');
    assert.equal(r.isError, true);
  });

  it('run_code: timeout_ms 500 on an infinite loop → status timeout, promptly', async () => {
    const { client } = ctx();
    const t0 = Date.now();
    const r = await runCode(client, { language: 'python', code: 'while True:\n    pass', timeout_ms: 500 });
    const elapsed = Date.now() - t0;
    assert.equal(r.structuredContent.status, 'timeout', describeResult(r));
    assert.equal(r.isError, true);
    assert.ok(elapsed < 5000, `call took ${elapsed} ms`);
  });

  it('run_code: invalid UTF-8 on stdout is handled', async () => {
    const { client } = ctx();
    const r = await runCode(client, { language: 'python', code: 'import sys\nsys.stdout.buffer.write(b"ok\\xff\\xfe!\\n")' });
    assert.equal(r.structuredContent.status, 'ok', describeResult(r));
    assert.ok(r.structuredContent.stdout.startsWith('ok'), r.structuredContent.stdout);
    assert.ok(r.structuredContent.stdout.endsWith('!\n'), r.structuredContent.stdout);
  });

  it('run_code: unknown language → error listing the known languages', async () => {
    const { client } = ctx();
    const out = await errorOrResult(() => runCode(client, { language: 'cobol', code: 'DISPLAY "HI".' }));
    const text = expectErrorText(out, [-32602], 'unknown language');
    for (const l of LANGUAGES) assert.ok(text.includes(l), `error lists ${l}: ${text}`);
  });

  it('run_code: wrong argument type (code: number) → invalid params naming the field', async () => {
    const { client } = ctx();
    const out = await errorOrResult(() => runCode(client, { language: 'python', code: 42 }));
    const text = expectErrorText(out, [-32602], 'code as number');
    assert.match(text, /code/, `message names the field: ${text}`);
  });

  it('run_code: missing required argument → invalid params', async () => {
    const { client } = ctx();
    const out = await errorOrResult(() => runCode(client, { language: 'python' }));
    const text = expectErrorText(out, [-32602], 'missing code');
    assert.match(text, /code/, `message names the field: ${text}`);
  });

  it('run_code: neither language nor session_id → invalid params naming language', async () => {
    const { client } = ctx();
    const out = await errorOrResult(() => runCode(client, { code: 'print(1)' }));
    const text = expectErrorText(out, [-32602], 'missing language');
    assert.match(text, /language/, `message names the field: ${text}`);
    assert.match(text, /session_id/, `message says when it may be left out: ${text}`);
  });

  it('tools/call of an unknown tool → error', async () => {
    const { client } = ctx();
    const out = await errorOrResult(() => client.callTool({ name: 'no_such_tool', arguments: {} }));
    const text = expectErrorText(out, [-32602], 'unknown tool');
    assert.match(text, /no_such_tool/);
  });

  it('progress notifications: increasing progress while compiling and running C', async () => {
    const { client } = ctx();
    const events = [];
    const r = await runCode(
      client,
      // It runs for 300 ms: the SDK client drops progress notifications that
      // arrive in the same read as the response (they are dispatched in a
      // microtask, after the response has removed the handler), and a
      // pre-started or cached run can answer within a few milliseconds.
      { language: 'c', code: '#include <stdio.h>\n#include <unistd.h>\nint main(void){usleep(300000);puts("p");return 0;}' },
      { onprogress: (p) => events.push(p) },
    );
    assert.equal(r.structuredContent.status, 'ok', describeResult(r));
    assert.ok(events.length >= 2, `got ${events.length} progress notifications: ${JSON.stringify(events)}`);
    for (let i = 1; i < events.length; i++) {
      assert.ok(events[i].progress > events[i - 1].progress, `progress increases: ${JSON.stringify(events)}`);
    }
    for (const e of events) {
      if (e.total !== undefined) assert.ok(e.progress <= e.total, `progress <= total: ${JSON.stringify(e)}`);
    }
    const messages = events.map((e) => e.message ?? '').join(' ');
    assert.match(messages, /running/i, `phases: ${messages}`);
  });

  it('cancellation: aborting a `while True: pass` run rejects quickly and kills it', async () => {
    const { client } = ctx();
    const marker = uniqueMarker('cancel');
    const ac = new AbortController();
    const call = runCode(client, { language: 'python', code: `# ${marker}\nwhile True:\n    pass`, args: [marker], timeout_ms: 30000 }, { signal: ac.signal });
    call.catch(() => {}); // observed below
    const started = await waitFor(() => pidsWithMarker(marker).length > 0, 15000);
    assert.ok(started, 'the jailed program started (its argv carries the marker)');
    const t0 = Date.now();
    ac.abort('test cancel');
    await assert.rejects(call);
    assert.ok(Date.now() - t0 < 1000, `rejected after ${Date.now() - t0} ms`);
    const gone = await waitFor(() => pidsWithMarker(marker).length === 0, 5000);
    assert.ok(gone, `run still alive 5 s after cancel: pids ${pidsWithMarker(marker)}`);
    const r = await runCode(client, { language: 'python', code: 'print("after cancel")' });
    assert.equal(r.structuredContent.status, 'ok', describeResult(r));
    assert.equal(r.structuredContent.stdout, 'after cancel\n');
  });

  it('concurrency: 4 parallel run_code calls all succeed with their own output', async () => {
    const { client } = ctx();
    const calls = [0, 1, 2, 3].map((i) => runCode(client, {
      language: 'python',
      code: `import time\ntime.sleep(0.3)\nprint("call ${i}")`,
    }));
    const results = await Promise.all(calls);
    results.forEach((r, i) => {
      assert.equal(r.structuredContent.status, 'ok', describeResult(r));
      assert.equal(r.structuredContent.stdout, `call ${i}\n`);
    });
  });

  it('list_languages tool lists all 8 languages and the limits', async () => {
    const { client } = ctx();
    const r = await client.callTool({ name: 'list_languages', arguments: {} });
    assert.notEqual(r.isError, true);
    const doc = r.structuredContent ?? JSON.parse(textOf(r));
    const names = (doc.languages ?? []).map((l) => l.name);
    assert.deepEqual([...names].sort(), [...LANGUAGES].sort(), `languages: ${JSON.stringify(doc).slice(0, 500)}`);
    assert.ok(doc.limits?.max_timeout_ms > 0, 'limits.max_timeout_ms');
    for (const l of LANGUAGES) assert.ok(textOf(r).includes(l), `text block mentions ${l}`);
  });

  it('resources: airlock://languages is listed and readable', async () => {
    const { client } = ctx();
    const { resources } = await client.listResources();
    const entry = resources.find((x) => x.uri === 'airlock://languages');
    assert.ok(entry, `resources: ${JSON.stringify(resources)}`);
    const { contents } = await client.readResource({ uri: 'airlock://languages' });
    assert.equal(contents.length, 1);
    assert.equal(contents[0].uri, 'airlock://languages');
    const doc = JSON.parse(contents[0].text);
    assert.deepEqual(doc.languages.map((l) => l.name).sort(), [...LANGUAGES].sort());
  });

  it('resources/read of an unknown URI → error', async () => {
    const { client } = ctx();
    await assert.rejects(client.readResource({ uri: 'airlock://nope' }), (e) => e instanceof McpError);
  });

  it('logging/setLevel is accepted', async () => {
    const { client } = ctx();
    assert.deepEqual(await client.setLoggingLevel('warning'), {});
  });

  it('the connection still works after all of the above', async () => {
    const { client } = ctx();
    await sleep(10);
    const r = await runCode(client, { language: 'bash', code: 'echo still alive' });
    assert.equal(r.structuredContent.stdout, 'still alive\n');
  });
}
