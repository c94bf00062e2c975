// The WASM isolation tier through the official MCP TypeScript SDK client
// (airlock serve over stdio): the native tier's language suite (hello world,
// stdin, args, files in/out, exit codes, runtime errors, compile errors)
// runs in `isolation: "wasm"` for every language that has the tier, with the
// same program giving the same answer in both tiers; Python's, Ruby's and PHP's
// standard library basics; an endpoint confined to the WASM tier; a run
// without limits gets its tier's defaults and the pool's pre-started
// interpreter (read from /metrics).
//
// Languages whose WASM build is not cached on this host (python, ruby, php:
// scripts/wasm/) are reported as skipped, never silently passed.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { HELLO, connectHttp, connectStdio, runCode, startHttpServer, waitFor } from './helpers.mjs';

const WASM_LANGUAGES = ['javascript', 'c', 'cpp', 'python', 'ruby', 'php'];

// Prints its args, its stdin and in.txt, and writes in.txt upper-cased to
// out.txt. JavaScript in the WASM tier has no stdin or files (console only).
const IO = {
  python: [
    'import sys',
    'print("args=" + ",".join(sys.argv[1:]))',
    'print("stdin=" + sys.stdin.read())',
    'text = open("in.txt").read()',
    'print("in=" + text)',
    'open("out.txt", "w").write(text.upper())',
  ].join('\n'),
  c: [
    '#include <ctype.h>',
    '#include <stdio.h>',
    'int main(int argc, char** argv) {',
    '  printf("args=");',
    '  for (int i = 1; i < argc; ++i) printf("%s%s", i > 1 ? "," : "", argv[i]);',
    '  char buf[256];',
    '  size_t n = fread(buf, 1, sizeof buf - 1, stdin);',
    '  buf[n] = 0;',
    '  printf("\\nstdin=%s\\n", buf);',
    '  FILE* f = fopen("in.txt", "r");',
    '  if (!f) { perror("in.txt"); return 1; }',
    '  n = fread(buf, 1, sizeof buf - 1, f);',
    '  buf[n] = 0;',
    '  fclose(f);',
    '  printf("in=%s\\n", buf);',
    '  FILE* o = fopen("out.txt", "w");',
    '  for (size_t i = 0; i < n; ++i) fputc(toupper((unsigned char)buf[i]), o);',
    '  fclose(o);',
    '  return 0;',
    '}',
  ].join('\n'),
  cpp: [
    '#include <algorithm>',
    '#include <cctype>',
    '#include <fstream>',
    '#include <iostream>',
    '#include <iterator>',
    '#include <string>',
    'int main(int argc, char** argv) {',
    '  std::string args;',
    '  for (int i = 1; i < argc; ++i) args += (i > 1 ? "," : "") + std::string(argv[i]);',
    '  std::string in((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());',
    '  std::ifstream f("in.txt");',
    '  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());',
    '  std::cout << "args=" << args << "\\nstdin=" << in << "\\nin=" << text << "\\n";',
    '  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::toupper(c); });',
    '  std::ofstream("out.txt") << text;',
    '}',
  ].join('\n'),
  ruby: [
    'puts "args=#{ARGV.join(",")}"',
    'puts "stdin=#{$stdin.read}"',
    'text = File.read("in.txt")',
    'puts "in=#{text}"',
    'File.write("out.txt", text.upcase)',
  ].join('\n'),
  php: [
    '<?php',
    'echo "args=" . implode(",", array_slice($argv, 1)) . "\\n";',
    'echo "stdin=" . stream_get_contents(STDIN) . "\\n";',
    '$text = file_get_contents("in.txt");',
    'echo "in=$text\\n";',
    'file_put_contents("out.txt", strtoupper($text));',
  ].join('\n'),
};

const EXIT3 = {
  python: 'import sys\nprint("bye")\nsys.exit(3)',
  c: '#include <stdio.h>\nint main(void) { puts("bye"); return 3; }',
  cpp: '#include <cstdio>\n#include <cstdlib>\nint main() { std::puts("bye"); std::exit(3); }',
  ruby: 'puts "bye"\nexit 3',
  php: '<?php\nfunction leave() { echo "bye\\n"; exit(3); }\nleave();\necho "after\\n";',
};

// An uncaught error: a non-zero exit with the language's own message.
const RUNTIME_ERROR = {
  javascript: ['function f() { throw new TypeError("boom"); }\nf();', /TypeError: boom/],
  python: ['def f():\n    raise ValueError("boom")\nf()', /ValueError: boom/],
  ruby: ['def f\n  raise ArgumentError, "boom"\nend\nf', /boom \(ArgumentError\)/],
  php: ['<?php\nfunction f() { throw new InvalidArgumentException("boom"); }\nf();',
    /Uncaught InvalidArgumentException: boom/],
  c: ['#include <assert.h>\nint main(void) { int x = 1; assert(x == 2); return 0; }', /Assertion failed|x == 2/],
  cpp: ['#include <cassert>\nint main() { int x = 1; assert(x == 2); }', /Assertion failed|x == 2/],
};

const COMPILE_ERROR = {
  c: 'int main(void) { return undefined_symbol_xyz + ; }',
  cpp: 'int main() { return undefined_symbol_xyz + ; }',
};

const STDLIB = {
  python: [
    'import json, re, math, datetime',
    'print(json.dumps({"a": [1, 2]}), re.sub(r"\\d+", "#", "a1b22"), math.isqrt(17),',
    '      datetime.date(2024, 2, 29).isoformat(), json.loads("[1.5]")[0] * 2)',
  ].join('\n'),
  ruby: [
    'require "json"',
    'require "date"',
    'puts [JSON.generate({"a" => [1, 2]}), "a1b22".gsub(/\\d+/, "#"), Integer.sqrt(17),',
    '      Date.new(2024, 2, 29).iso8601, JSON.parse("[1.5]")[0] * 2].join(" ")',
  ].join('\n'),
  php: [
    '<?php',
    'echo implode(" ", [json_encode(["a" => [1, 2]]), preg_replace("/\\d+/", "#", "a1b22"), intdiv(17, 4),',
    '  (new DateTime("2024-02-29"))->format("Y-m-d"), number_format(json_decode("[1.5]")[0] * 2, 1)]), "\\n";',
  ].join('\n'),
};
const STDLIB_OUT = {
  python: '{"a": [1, 2]} a#b# 4 2024-02-29 3.0\n',
  ruby: '{"a":[1,2]} a#b# 4 2024-02-29 3.0\n',
  php: '{"a":[1,2]} a#b# 4 2024-02-29 3.0\n',
};

function describeResult(r) {
  const sc = r.structuredContent ?? {};
  return JSON.stringify({ status: sc.status, message: sc.message, exit_code: sc.exit_code,
    stdout: sc.stdout?.slice(0, 400), stderr: sc.stderr?.slice(0, 800), compile: sc.compile_output?.slice(0, 400) });
}

function run(client, language, isolation, code, extra = {}) {
  return runCode(client, { language, code, isolation, timeout_ms: 30000, memory_mb: 512, ...extra });
}

describe('WASM tier through the MCP SDK client', () => {
  let conn;
  let tiers = {};  // language -> its tiers
  before(async () => {
    conn = await connectStdio();
    const r = await conn.client.callTool({ name: 'list_languages', arguments: {} });
    for (const l of r.structuredContent.languages) tiers[l.name] = l.tiers ?? ['native'];
  });
  after(async () => { await conn?.close(); });

  it('list_languages shows the WASM tier for javascript, c and cpp (python, ruby and php when cached)', () => {
    for (const lang of ['javascript', 'c', 'cpp']) {
      assert.ok(tiers[lang]?.includes('wasm'), `${lang}: ${JSON.stringify(tiers[lang])}`);
      assert.ok(tiers[lang]?.includes('native'), `${lang}: ${JSON.stringify(tiers[lang])}`);
    }
    assert.deepEqual(tiers.bash, ['native'], 'bash has no WASM tier');
  });

  for (const lang of WASM_LANGUAGES) {
    const skip = () => (tiers[lang]?.includes('wasm') ? false : `${lang} has no WASM build on this host (scripts/wasm/)`);

    it(`${lang}: hello world in both tiers`, async (t) => {
      if (skip()) return t.skip(skip());
      for (const isolation of ['wasm', 'native']) {
        const r = await run(conn.client, lang, isolation, HELLO[lang]);
        const sc = r.structuredContent;
        assert.equal(sc.status, 'ok', `${isolation}: ${describeResult(r)}`);
        assert.equal(sc.stdout, `hello from ${lang}\n`, isolation);
        assert.equal(sc.isolation, isolation);
        assert.equal(sc.language, lang);
      }
    });

    if (IO[lang]) {
      it(`${lang}: args, stdin and files in and out give the same answer in both tiers`, async (t) => {
        if (skip()) return t.skip(skip());
        const results = {};
        for (const isolation of ['wasm', 'native']) {
          const r = await run(conn.client, lang, isolation, IO[lang], {
            args: ['a', 'b c'],
            stdin: 'from-stdin',
            files: [{ name: 'in.txt', content: 'hello', encoding: 'text' }],
            output_files: ['out.txt'],
          });
          const sc = r.structuredContent;
          assert.equal(sc.status, 'ok', `${isolation}: ${describeResult(r)}`);
          assert.equal(sc.stdout, 'args=a,b c\nstdin=from-stdin\nin=hello\n', isolation);
          const out = sc.files.find((f) => f.name === 'out.txt');
          assert.ok(out, `${isolation}: files ${JSON.stringify(sc.files.map((f) => f.name))}`);
          assert.equal(out.content, 'HELLO', isolation);
          results[isolation] = sc.stdout;
        }
        assert.equal(results.wasm, results.native);
      });
    }

    if (EXIT3[lang]) {
      it(`${lang}: an exit code comes back as exit_nonzero in both tiers`, async (t) => {
        if (skip()) return t.skip(skip());
        for (const isolation of ['wasm', 'native']) {
          const r = await run(conn.client, lang, isolation, EXIT3[lang]);
          assert.equal(r.structuredContent.status, 'exit_nonzero', `${isolation}: ${describeResult(r)}`);
          assert.equal(r.structuredContent.exit_code, 3, isolation);
          assert.equal(r.structuredContent.stdout, 'bye\n', isolation);
          assert.equal(r.isError, true);
        }
      });
    }

    it(`${lang}: an uncaught runtime error is a failed run with the language's message`, async (t) => {
      if (skip()) return t.skip(skip());
      const [code, pattern] = RUNTIME_ERROR[lang];
      const r = await run(conn.client, lang, 'wasm', code);
      const sc = r.structuredContent;
      assert.notEqual(sc.status, 'ok', describeResult(r));
      assert.equal(r.isError, true);
      assert.match(sc.stderr, pattern, describeResult(r));
    });

    if (COMPILE_ERROR[lang]) {
      it(`${lang}: a compile error comes back as compile_error with diagnostics`, async (t) => {
        if (skip()) return t.skip(skip());
        const r = await run(conn.client, lang, 'wasm', COMPILE_ERROR[lang]);
        assert.equal(r.structuredContent.status, 'compile_error', describeResult(r));
        assert.match(r.structuredContent.compile_output, /error/);
        assert.match(r.structuredContent.compile_output, /undefined_symbol_xyz/);
      });
    }

    if (STDLIB[lang]) {
      it(`${lang}: standard library basics (json, re, math, datetime) in the WASM tier`, async (t) => {
        if (skip()) return t.skip(skip());
        const r = await run(conn.client, lang, 'wasm', STDLIB[lang]);
        assert.equal(r.structuredContent.status, 'ok', describeResult(r));
        assert.equal(r.structuredContent.stdout, STDLIB_OUT[lang]);
      });
    }
  }

  it('an infinite loop in the WASM tier is a timeout, promptly', async () => {
    const t0 = Date.now();
    const r = await run(conn.client, 'c', 'wasm', 'int main(void) { volatile int x = 0; for (;;) ++x; }',
      { timeout_ms: 1000 });
    assert.equal(r.structuredContent.status, 'timeout', describeResult(r));
    assert.ok(Date.now() - t0 < 10000, `took ${Date.now() - t0} ms`);
  });

  // The soak found WASI programs' output capped inside the engine, so a
  // flood ran on to its deadline with status ok/timeout: now the jail's
  // supervisor sees the output as it is written and ends the run at the
  // limit, as for a native program.
  it('an output flood in the WASM tier ends at the output limit, not the deadline', async () => {
    const t0 = Date.now();
    const r = await run(conn.client, 'c', 'wasm',
      '#include <stdio.h>\nint main(void) { for (;;) fputs("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\n", stdout); }',
      { timeout_ms: 20000 });
    assert.equal(r.structuredContent.status, 'output_limit', describeResult(r));
    assert.equal(r.structuredContent.stdout_truncated, true, describeResult(r));
    assert.ok(Date.now() - t0 < 15000, `took ${Date.now() - t0} ms`);
    const small = await run(conn.client, 'c', 'wasm', '#include <stdio.h>\nint main(void) { puts("just this"); }');
    assert.equal(small.structuredContent.stdout, 'just this\n', describeResult(small));
  });

  it('a tier the language lacks is a clear tool error', async () => {
    const r = await runCode(conn.client, { language: 'bash', code: 'echo hi', isolation: 'wasm' });
    assert.equal(r.isError, true);
    assert.match(r.content[0].text, /isolation "wasm" is not available for bash; available: native/);
  });
});

describe('an endpoint confined to the WASM tier', () => {
  let conn;
  let tmp;
  before(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'airlock-e2e-wasm-'));
    const config = path.join(tmp, 'airlock.json');
    writeFileSync(config, JSON.stringify({
      server: { state_dir: path.join(tmp, 'state') },
      languages: { default_isolation: 'wasm' },
      endpoints: { default: { path: '/mcp', isolation: ['wasm'] } },
    }));
    conn = await connectStdio({ args: ['--config', config] });
  });
  after(async () => {
    await conn?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('offers only languages with the WASM tier and runs them there by default', async () => {
    const list = await conn.client.callTool({ name: 'list_languages', arguments: {} });
    const names = list.structuredContent.languages.map((l) => l.name);
    assert.ok(names.includes('c') && names.includes('javascript'), `languages: ${names}`);
    assert.ok(!names.includes('bash') && !names.includes('typescript'), `languages: ${names}`);
    for (const l of list.structuredContent.languages) assert.deepEqual(l.tiers, ['wasm'], l.name);
    assert.deepEqual(list.structuredContent.sandbox.isolation, ['wasm']);

    const { tools } = await conn.client.listTools();
    const rc = tools.find((t) => t.name === 'run_code');
    assert.deepEqual(rc.inputSchema.properties.isolation.enum, ['wasm']);

    const r = await runCode(conn.client, { language: 'c', code: HELLO.c });
    assert.equal(r.structuredContent.status, 'ok', describeResult(r));
    assert.equal(r.structuredContent.isolation, 'wasm');
  });

  it('refuses the native tier with a clear error and runs nothing', async () => {
    const r = await runCode(conn.client, { language: 'c', code: HELLO.c, isolation: 'native' });
    assert.equal(r.isError, true);
    assert.equal(r.content[0].text, 'isolation "native" is not allowed on this endpoint; allowed: wasm');
    const bash = await runCode(conn.client, { language: 'bash', code: 'echo hi' });
    assert.equal(bash.isError, true);
    assert.match(bash.content[0].text, /unknown language "bash"/);
  });
});

describe('a WASM run without limits gets its tier\'s defaults and the pooled interpreter', () => {
  let server;
  let conn;
  let tmp;
  before(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'airlock-wasm-pool-'));
    const config = path.join(tmp, 'config.json');
    writeFileSync(config, JSON.stringify({ pool: { warm: ['ruby:wasm', 'php:wasm'] } }));
    server = await startHttpServer({ args: ['--config', config] });
    conn = await connectHttp(server.url);
  });
  after(async () => {
    await conn?.close();
    await server?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  // The pool's counters for the WASM shapes of `lang`, from /metrics.
  async function poolCounts(lang) {
    const text = await (await fetch(new URL('/metrics', server.url))).text();
    const count = (name) => [...text.matchAll(new RegExp(`^airlock_pool_shape_${name}\\{shape="${lang}/wasm/[^"]*/prestarted"\\} (\\d+)$`, 'gm'))]
      .reduce((sum, m) => sum + Number(m[1]), 0);
    return { ready: count('ready'), hits: count('hits_total'), misses: count('misses_total') };
  }

  for (const lang of ['ruby', 'php']) {
    it(`${lang}: list_languages gives the WASM tier its own defaults, and a run with none is a pool hit`, async (t) => {
      const list = await conn.client.callTool({ name: 'list_languages', arguments: { language: lang } });
      const info = list.structuredContent.languages.find((l) => l.name === lang);
      if (!info?.tiers?.includes('wasm')) return t.skip(`${lang} has no WASM build on this host (scripts/wasm/)`);
      const wasm = info.tier_defaults?.wasm;
      assert.ok(wasm?.default_memory_mb > 0 && wasm?.default_timeout_ms > 0, JSON.stringify(info));
      assert.equal(info.tier_defaults.native?.default_memory_mb, info.default_memory_mb, JSON.stringify(info));
      if (lang === 'ruby') assert.equal(wasm.default_memory_mb, 512, 'WASM Ruby needs 512 MiB (docs/wasm.md)');

      assert.ok(await waitFor(async () => (await poolCounts(lang)).ready > 0, 60000), `no pre-started ${lang} in the pool`);
      const before = await poolCounts(lang);
      const r = await runCode(conn.client, { language: lang, isolation: 'wasm', code: HELLO[lang] });
      assert.equal(r.structuredContent.status, 'ok', describeResult(r));
      assert.equal(r.structuredContent.stdout, `hello from ${lang}\n`);
      const now = await poolCounts(lang);
      assert.equal(now.hits, before.hits + 1, `the run did not take the pre-started ${lang}: ${JSON.stringify({ before, now })}`);
      assert.equal(now.misses, before.misses);
    });
  }
});
