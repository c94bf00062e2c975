// The soak test's workload: every program it submits, what each one must
// answer, and the seeded plan that mixes them (see README.md).
//
// Every run carries a unique tag `soak-<token>-<idx>`: in a comment at the
// start of its code, or (C and C++, whose code stays fixed so the build cache
// is hit) at the start of its stdin. The audit log keeps both (the tool_call
// event's redacted arguments keep the first 256 bytes of each string), which
// lets the checker find exactly one run row per run.
//
// Expectations were found by running each program against this build; the
// ones that are surprising say why (and README.md lists them).

// ------------------------------------------------------------- randomness

export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = (rng, arr) => arr[Math.floor(rng() * arr.length)];
const int = (rng, lo, hi) => lo + Math.floor(rng() * (hi - lo + 1));

function weighted(rng, entries) { // [[value, weight], ...]
  const total = entries.reduce((s, [, w]) => s + w, 0);
  let r = rng() * total;
  for (const [v, w] of entries) {
    r -= w;
    if (r < 0) return v;
  }
  return entries[entries.length - 1][0];
}

const triangle = (x) => (x * (x + 1)) / 2;

// ------------------------------------------------------------ C and C++

// Fixed sources (the tag and the input come on stdin), so after the first
// compile of each every run is a build-cache hit.
const C_SUM = `#include <stdio.h>
int main(void) {
  char tag[96]; long x;
  if (scanf("%95s %ld", tag, &x) != 2) return 2;
  long s = 0;
  for (long i = 0; i <= x; i++) s += i;
  printf("%s %ld\\n", tag, s);
  return 0;
}
`;
const C_SQUARE = `#include <stdio.h>
#include <string.h>
static long square(long v) { return v * v; }
int main(void) {
  char tag[96]; long x;
  if (scanf("%95s %ld", tag, &x) != 2) return 2;
  printf("%s %ld\\n", tag, square(x) % 1000003);
  return 0;
}
`;
const CPP_SUM = `#include <iostream>
#include <numeric>
#include <string>
#include <vector>
int main() {
  std::string tag; long x;
  if (!(std::cin >> tag >> x)) return 2;
  std::vector<long> v(x + 1);
  std::iota(v.begin(), v.end(), 0L);
  std::cout << tag << " " << std::accumulate(v.begin(), v.end(), 0L) << std::endl;
}
`;
const CPP_SQUARE = `#include <iostream>
#include <string>
#include <map>
int main() {
  std::string tag; long x;
  if (!(std::cin >> tag >> x)) return 2;
  std::map<std::string, long> m{{tag, (x * x) % 1000003}};
  for (const auto& [k, v] : m) std::cout << k << " " << v << "\\n";
}
`;
const COMPILED = {
  c: [{ code: C_SUM, f: triangle }, { code: C_SQUARE, f: (x) => (x * x) % 1000003 }],
  cpp: [{ code: CPP_SUM, f: triangle }, { code: CPP_SQUARE, f: (x) => (x * x) % 1000003 }],
};

// Abusive C/C++ programs: fixed code too (the tag is on stdin, ignored).
const C_FORK = '#include <unistd.h>\nint main(void) { for (;;) fork(); }\n';
const C_MEM = `#include <stdlib.h>
#include <string.h>
static char* volatile sink;
int main(void) { for (;;) { char* p = malloc(1 << 24); if (!p) abort(); memset(p, 1, 1 << 24); sink = p; } }
`;
const CPP_MEM = `#include <cstdlib>
#include <cstring>
static char* volatile sink;
int main() { for (;;) { char* p = static_cast<char*>(std::malloc(1 << 24)); if (!p) std::abort(); std::memset(p, 1, 1 << 24); sink = p; } }
`;
const C_FLOOD = '#include <stdio.h>\nint main(void) { static char b[65536]; for (int i = 0; i < 65536; i++) b[i] = \'x\'; for (;;) fwrite(b, 1, sizeof b, stdout); }\n';
const CPP_FLOOD = '#include <iostream>\n#include <string>\nint main() { std::string s(65536, \'x\'); for (;;) std::cout << s; }\n';
const C_LOOP = 'int main(void) { volatile unsigned long x = 0; for (;;) x++; }\n';
const CPP_LOOP = 'int main() { volatile unsigned long x = 0; for (;;) x = x + 1; }\n';
const C_DISK = `#include <stdio.h>
int main(void) {
  static char b[1 << 20];
  FILE* f = fopen("/work/fill", "wb");
  if (!f) return 4;
  for (;;) { if (fwrite(b, 1, sizeof b, f) != sizeof b) return 5; if (fflush(f)) return 6; }
}
`;

// ---------------------------------------------------------- normal runs

// One-shot programs per (language, tier): {args, expect}.
function normalOneShot(rng, lang, tier, tag, coldShare) {
  const x = int(rng, 1, 2000);
  const sum = triangle(x);
  const iso = tier === 'wasm' ? { isolation: 'wasm' } : {};
  const out = (v) => ({ status: 'ok', exitCode: 0, stdout: `${v}\n` });
  switch (lang) {
    case 'python': {
      const v = int(rng, 0, 2);
      if (v === 0) return { args: { language: lang, code: `# ${tag}\nx = ${x}\nprint(sum(range(x + 1)))\n`, ...iso }, expect: out(sum) };
      if (v === 1) {
        return { args: { language: lang, code: `# ${tag}\nimport sys\nx = int(sys.stdin.read())\nprint(sum(range(x + 1)))\n`, stdin: `${x}\n`, ...iso },
          expect: out(sum) };
      }
      return {
        args: { language: lang, code: `# ${tag}\nx = int(open('in.txt').read())\nopen('out.txt', 'w').write(str(sum(range(x + 1))))\n`,
          files: [{ name: 'in.txt', content: `${x}` }], output_files: ['out.txt'], ...iso },
        expect: { status: 'ok', exitCode: 0, stdout: '', files: { 'out.txt': `${sum}` } },
      };
    }
    case 'javascript': {
      if (tier === 'wasm') {
        if (rng() < 0.5) {
          return { args: { language: lang, code: `// ${tag}\nconst x = Number(scriptArgs[0]);\nlet s = 0;\nfor (let i = 0; i <= x; i++) s += i;\nconsole.log(s);\n`, args: [`${x}`], ...iso },
            expect: out(sum) };
        }
        return { args: { language: lang, code: `// ${tag}\nconst x = ${x};\nlet s = 0;\nfor (let i = 0; i <= x; i++) s += i;\nconsole.log(s);\n`, ...iso }, expect: out(sum) };
      }
      if (rng() < 0.5) {
        return { args: { language: lang, code: `// ${tag}\nconst x = Number(require('fs').readFileSync(0, 'utf8'));\nlet s = 0;\nfor (let i = 0; i <= x; i++) s += i;\nconsole.log(s);\n`, stdin: `${x}` },
          expect: out(sum) };
      }
      return { args: { language: lang, code: `// ${tag}\nconst x = ${x};\nlet s = 0;\nfor (let i = 0; i <= x; i++) s += i;\nconsole.log(s);\n` }, expect: out(sum) };
    }
    case 'typescript':
      return { args: { language: lang, code: `// ${tag}\nconst x: number = ${x};\nlet s: number = 0;\nfor (let i: number = 0; i <= x; i++) s += i;\nconsole.log(s);\n` },
        expect: out(sum) };
    case 'c':
    case 'cpp': {
      const prog = pick(rng, COMPILED[lang]);
      // A small share is compiled cold (a unique source); the rest hit the build cache.
      const cold = rng() < coldShare;
      const code = cold ? `/* ${tag} */\n${prog.code}` : prog.code;
      return { args: { language: lang, code, stdin: `${tag} ${x}\n`, ...iso }, expect: out(`${tag} ${prog.f(x)}`), cold };
    }
    case 'ruby':
      if (rng() < 0.5) return { args: { language: lang, code: `# ${tag}\nx = ${x}\nputs (0..x).sum\n`, ...iso }, expect: out(sum) };
      return { args: { language: lang, code: `# ${tag}\nx = STDIN.read.to_i\nputs (0..x).sum\n`, stdin: `${x}\n`, ...iso }, expect: out(sum) };
    case 'php':
      if (rng() < 0.5) return { args: { language: lang, code: `<?php // ${tag}\n$x = ${x};\necho array_sum(range(0, $x)), "\\n";\n` }, expect: out(sum) };
      return { args: { language: lang, code: `<?php // ${tag}\n$x = (int) stream_get_contents(STDIN);\necho array_sum(range(0, $x)), "\\n";\n`, stdin: `${x}` },
        expect: out(sum) };
    case 'bash':
      if (rng() < 0.5) return { args: { language: lang, code: `# ${tag}\nx=${x}\necho $(( x * (x + 1) / 2 ))\n` }, expect: out(sum) };
      return { args: { language: lang, code: `# ${tag}\nx=$1\necho $(( x * (x + 1) / 2 ))\n`, args: [`${x}`] }, expect: out(sum) };
    default:
      throw new Error(`no program for ${lang}`);
  }
}

// Programs that fail in an ordinary way (not abusive): their status is not ok.
const ERRORS = [
  ['python', (tag) => ({ args: { language: 'python', code: `# ${tag}\nraise ValueError("soak")\n` }, expect: { status: 'exit_nonzero', exitCode: 1 } })],
  ['javascript', (tag) => ({ args: { language: 'javascript', code: `// ${tag}\nthrow new Error("soak");\n` }, expect: { status: 'exit_nonzero', exitCode: 1 } })],
  ['ruby', (tag) => ({ args: { language: 'ruby', code: `# ${tag}\nraise "soak"\n` }, expect: { status: 'exit_nonzero', exitCode: 1 } })],
  ['bash', (tag) => ({ args: { language: 'bash', code: `# ${tag}\necho failing >&2\nexit 3\n` }, expect: { status: 'exit_nonzero', exitCode: 3 } })],
  ['c', (tag) => ({ args: { language: 'c', code: `/* ${tag} */\nint main(void) { return undefined_symbol; }\n` }, expect: { status: 'compile_error' } })],
];

// ------------------------------------------------------------ code mode

// execute programs against the fixture connector `test`: {args, expect}.
// expect: {ok, result?|resultPrefix?, errorCode?, calls}
function codeModeProgram(rng, lang, tag) {
  const w = `w${int(rng, 0, 99999)}`;
  const x = int(rng, 1, 1000);
  const k = int(rng, 2, 6);
  const variant = weighted(rng, [['echo', 3], ['fan', 3], ['structured', 2], ['fail', 1], ['search', 1], ['write', 1]]);
  const fan = Array.from({ length: k }, (_, i) => `${w}${i}`).join(',');
  if (lang === 'javascript') {
    const c = `// ${tag}\n`;
    switch (variant) {
      case 'echo': return { v: variant, code: `${c}return await tools.call("test.echo", {text: "${w}"});`, expect: { ok: true, result: w, calls: 1 } };
      case 'fan': return { v: variant, code: `${c}const rs = await Promise.all(Array.from({length: ${k}}, (_, i) => tools.call("test.echo", {text: "${w}" + i})));\nreturn rs.join(",");`,
        expect: { ok: true, result: fan, calls: k } };
      case 'structured': return { v: variant, code: `${c}const r = await tools.call("test.structured", {});\nreturn r.answer + ${x};`, expect: { ok: true, result: 42 + x, calls: 1 } };
      case 'fail': return { v: variant, code: `${c}try { await tools.call("test.fail", {message: "m${x}"}); return "no"; } catch (e) { return e.code + ":" + e.message; }`,
        expect: { ok: true, result: `E_TOOL_ERROR:m${x}`, calls: 1 } };
      case 'search': return { v: variant, code: `${c}const f = await tools.search("echo");\nconst d = await tools.describe("test.echo");\nreturn [f.tools.some((t) => t.name === "test.echo"), typeof d.signature];`,
        expect: { ok: true, result: [true, 'string'], calls: 2 } };
      default: return { v: variant, code: `${c}try { await tools.call("test.write_note", {key: "k", text: "${w}"}); return "written"; } catch (e) { return e.code; }`,
        expect: { ok: true, result: 'E_WRITE_NOT_ALLOWED', calls: 1, denied: 1 } };
    }
  }
  const c = `# ${tag}\n`;
  switch (variant) {
    case 'echo': return { v: variant, code: `${c}result = tools.call("test.echo", {"text": "${w}"})\n`, expect: { ok: true, result: w, calls: 1 } };
    case 'fan': return { v: variant, code: `${c}import asyncio\nrs = await asyncio.gather(*[tools.acall("test.echo", {"text": "${w}" + str(i)}) for i in range(${k})])\nresult = ",".join(rs)\n`,
      expect: { ok: true, result: fan, calls: k } };
    case 'structured': return { v: variant, code: `${c}result = tools.call("test.structured", {})["answer"] + ${x}\n`, expect: { ok: true, result: 42 + x, calls: 1 } };
    case 'fail': return { v: variant, code: `${c}try:\n    tools.call("test.fail", {"message": "m${x}"})\n    result = "no"\nexcept ToolError as e:\n    result = e.code + ":" + e.message\n`,
      expect: { ok: true, result: `E_TOOL_ERROR:m${x}`, calls: 1 } };
    case 'search': return { v: variant, code: `${c}f = tools.search("echo")\nd = tools.describe("test.echo")\nresult = [any(t["name"] == "test.echo" for t in f["tools"]), type(d["signature"]).__name__]\n`,
      expect: { ok: true, result: [true, 'str'], calls: 2 } };
    default: return { v: variant, code: `${c}try:\n    tools.call("test.write_note", {"key": "k", "text": "${w}"})\n    result = "written"\nexcept ToolError as e:\n    result = e.code\n`,
      expect: { ok: true, result: 'E_WRITE_NOT_ALLOWED', calls: 1, denied: 1 } };
  }
}

// --------------------------------------------------------------- sessions

export const SESSION_LANGUAGES = ['python', 'javascript', 'ruby', 'php', 'bash'];

// Cell i of a session: keeps a running sum in the interpreter and prints it.
function sessionCell(lang, tag, first, d) {
  switch (lang) {
    case 'python': return first ? `# ${tag}\nacc = ${d}\nprint(acc)\n` : `# ${tag}\nacc += ${d}\nprint(acc)\n`;
    case 'javascript': return first ? `// ${tag}\nvar acc = ${d};\nconsole.log(acc);\n` : `// ${tag}\nacc += ${d};\nconsole.log(acc);\n`;
    case 'ruby': return first ? `# ${tag}\nacc = ${d}\nputs acc\n` : `# ${tag}\nacc += ${d}\nputs acc\n`;
    case 'php': return first ? `/* ${tag} */ $acc = ${d};\necho $acc, "\\n";\n` : `/* ${tag} */ $acc += ${d};\necho $acc, "\\n";\n`;
    case 'bash': return first ? `# ${tag}\nacc=${d}\necho $acc\n` : `# ${tag}\nacc=$((acc + ${d}))\necho $acc\n`;
    default: throw new Error(lang);
  }
}

const SESSION_LOOP = {
  python: (tag) => `# ${tag}\nwhile True:\n    pass\n`,
  javascript: (tag) => `// ${tag}\nfor (;;) {}\n`,
  ruby: (tag) => `# ${tag}\nloop {}\n`,
  php: (tag) => `/* ${tag} */ while (true) {}\n`,
  bash: (tag) => `# ${tag}\nwhile :; do :; done\n`,
};

// ---------------------------------------------------------- abusive runs

// Each entry: [abuse kind, label, weight, (tag) => {mode, lang, tier, args, expect}].
// Statuses: what this build answers (verified one by one).
const LOOP_MS = 1000;
const FORK_MS = 1500;
const BOMB_MB = 128;

function oneShot(lang, tier, code, extra, expect, stdinTag) {
  return (tag) => {
    const args = { language: lang, code: stdinTag ? code : code.replace('@TAG@', tag), ...extra };
    if (tier === 'wasm') args.isolation = 'wasm';
    if (stdinTag) args.stdin = `${tag}\n`;
    return { mode: 'run', lang, tier, args, expect };
  };
}

const T = (ms) => ({ timeout_ms: ms });
const M = (mb) => ({ memory_mb: mb });
const TIMEOUT = { status: 'timeout' };
const MEMORY = { status: 'memory_limit' };
const OUTPUT = { status: 'output_limit' };

export const ABUSIVE = [
  // fork bombs: the pids cgroup (64) stops the growth; the wall clock ends them.
  ['fork_bomb', 'bash/native', 2, oneShot('bash', 'native', '# @TAG@\n:(){ :|:& };:\nsleep 30\n', T(FORK_MS), TIMEOUT)],
  ['fork_bomb', 'bash/native#2', 1, oneShot('bash', 'native', '# @TAG@\nwhile true; do sleep 100 & done\n', T(FORK_MS), TIMEOUT)],
  ['fork_bomb', 'python/native', 2, oneShot('python', 'native', '# @TAG@\nimport os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n', T(FORK_MS), TIMEOUT)],
  ['fork_bomb', 'c/native', 2, oneShot('c', 'native', C_FORK, T(FORK_MS), TIMEOUT, true)],
  ['fork_bomb', 'ruby/native', 1, oneShot('ruby', 'native', '# @TAG@\nloop { begin; fork { sleep 100 }; rescue; end }\n', T(FORK_MS), TIMEOUT)],
  ['fork_bomb', 'php/native', 1, oneShot('php', 'native', '<?php /* @TAG@ */ while (true) { @pcntl_fork(); }\n', T(FORK_MS), TIMEOUT)],
  ['fork_bomb', 'javascript/native', 1, oneShot('javascript', 'native', "// @TAG@\nconst cp = require('child_process');\nfor (;;) { try { cp.spawn('/bin/sleep', ['100']); } catch (e) {} }\n", T(FORK_MS), TIMEOUT)],

  // memory bombs: the cgroup kills natively; the engine's limits in the WASM tier.
  ['memory_bomb', 'python/native', 2, oneShot('python', 'native', '# @TAG@\na = []\nwhile True:\n    a.append(bytearray(10**7))\n', M(BOMB_MB), MEMORY)],
  ['memory_bomb', 'javascript/native', 1, oneShot('javascript', 'native', '// @TAG@\nconst a = [];\nfor (;;) a.push(new Array(1e6).fill(1));\n', M(BOMB_MB), MEMORY)],
  ['memory_bomb', 'typescript/native', 1, oneShot('typescript', 'native', '// @TAG@\nconst a: number[][] = [];\nfor (;;) a.push(new Array(1e6).fill(1));\n', M(BOMB_MB), MEMORY)],
  ['memory_bomb', 'ruby/native', 1, oneShot('ruby', 'native', "# @TAG@\na = []\nloop { a << ('x' * 10_000_000) }\n", M(BOMB_MB), MEMORY)],
  ['memory_bomb', 'php/native', 1, oneShot('php', 'native', "<?php /* @TAG@ */ $a = []; while (true) { $a[] = str_repeat('x', 10000000); }\n", M(BOMB_MB), MEMORY)],
  ['memory_bomb', 'bash/native', 1, oneShot('bash', 'native', '# @TAG@\nx=y; while true; do x=$x$x; done\n', M(64), MEMORY)],
  ['memory_bomb', 'c/native', 1, oneShot('c', 'native', C_MEM, M(BOMB_MB), MEMORY, true)],
  ['memory_bomb', 'cpp/native', 1, oneShot('cpp', 'native', CPP_MEM, M(BOMB_MB), MEMORY, true)],
  ['memory_bomb', 'javascript/wasm', 1, oneShot('javascript', 'wasm', '// @TAG@\nconst a = [];\nfor (;;) a.push(new Array(1e6).fill(1));\n', M(BOMB_MB), MEMORY)],
  ['memory_bomb', 'python/wasm', 1, oneShot('python', 'wasm', '# @TAG@\na = []\nwhile True:\n    a.append(bytearray(10**7))\n', M(BOMB_MB), MEMORY)],
  ['memory_bomb', 'ruby/wasm', 1, oneShot('ruby', 'wasm', "# @TAG@\na = []\nloop { a << ('x' * 10_000_000) }\n", M(BOMB_MB), MEMORY)],
  // WASI C/C++: memory.grow fails past the cap, malloc returns NULL, the program aborts (a trap: exit 134).
  ['memory_bomb', 'c/wasm', 1, oneShot('c', 'wasm', C_MEM, M(BOMB_MB), MEMORY, true)],
  ['memory_bomb', 'cpp/wasm', 1, oneShot('cpp', 'wasm', CPP_MEM, M(BOMB_MB), MEMORY, true)],
  ['memory_bomb', 'execute/javascript', 1, (tag) => ({ mode: 'execute', lang: 'javascript', args: { language: 'javascript', code: `// ${tag}\nconst a = [];\nfor (;;) a.push(new Array(1e6).fill(1));\n` }, expect: { ok: false, errorCode: 'E_LIMIT_MEMORY', calls: 0 } })],
  ['memory_bomb', 'execute/python', 1, (tag) => ({ mode: 'execute', lang: 'python', args: { language: 'python', code: `# ${tag}\na = []\nwhile True:\n    a.append(bytearray(10**7))\n` }, expect: { ok: false, errorCode: 'E_LIMIT_MEMORY', calls: 0 } })],
  ['memory_bomb', 'session/python', 1, (tag) => ({ mode: 'session', lang: 'python', args: { code: `# ${tag}\na = []\nwhile True:\n    a.append(bytearray(10**7))\n` }, expect: { status: 'memory_limit', errorCode: 'E_SESSION_LOST' } })],

  // output floods: killed at the 1 MiB cap natively and in the WASM tier's JavaScript.
  ['output_flood', 'python/native', 1, oneShot('python', 'native', "# @TAG@\nimport sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n", {}, OUTPUT)],
  ['output_flood', 'python/native#stderr', 1, oneShot('python', 'native', "# @TAG@\nimport sys\nwhile True:\n    sys.stderr.write('x' * 65536)\n", {}, OUTPUT)],
  ['output_flood', 'javascript/native', 1, oneShot('javascript', 'native', "// @TAG@\nconst s = 'x'.repeat(10000);\nfor (;;) console.log(s);\n", {}, OUTPUT)],
  ['output_flood', 'typescript/native', 1, oneShot('typescript', 'native', "// @TAG@\nconst s: string = 'x'.repeat(10000);\nfor (;;) console.log(s);\n", {}, OUTPUT)],
  ['output_flood', 'c/native', 1, oneShot('c', 'native', C_FLOOD, {}, OUTPUT, true)],
  ['output_flood', 'cpp/native', 1, oneShot('cpp', 'native', CPP_FLOOD, {}, OUTPUT, true)],
  ['output_flood', 'ruby/native', 1, oneShot('ruby', 'native', "# @TAG@\nloop { $stdout.write('x' * 65536) }\n", {}, OUTPUT)],
  ['output_flood', 'php/native', 1, oneShot('php', 'native', "<?php /* @TAG@ */ while (true) { echo str_repeat('x', 65536); }\n", {}, OUTPUT)],
  ['output_flood', 'bash/native', 1, oneShot('bash', 'native', '# @TAG@\nyes xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n', {}, OUTPUT)],
  ['output_flood', 'javascript/wasm', 1, oneShot('javascript', 'wasm', "// @TAG@\nconst s = 'x'.repeat(10000);\nfor (;;) console.log(s);\n", {}, OUTPUT)],
  // WASI programs (C, C++, Python, Ruby in the WASM tier): airlock-js passes
  // their output on as it is written, so the jail's supervisor ends a flood
  // at the output limit exactly as for a native program.
  ['output_flood', 'c/wasm', 1, oneShot('c', 'wasm', C_FLOOD, T(10000), OUTPUT, true)],
  ['output_flood', 'cpp/wasm', 1, oneShot('cpp', 'wasm', CPP_FLOOD, T(10000), OUTPUT, true)],
  ['output_flood', 'python/wasm', 1, oneShot('python', 'wasm', "# @TAG@\nimport sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n", T(10000), OUTPUT)],
  ['output_flood', 'ruby/wasm', 1, oneShot('ruby', 'wasm', "# @TAG@\nloop { $stdout.write('x' * 65536) }\n", T(10000), OUTPUT)],
  ['output_flood', 'execute/javascript', 1, (tag) => ({ mode: 'execute', lang: 'javascript', args: { language: 'javascript', code: `// ${tag}\nconst s = 'x'.repeat(10000);\nfor (;;) console.log(s);\n`, limits: { wall_ms: LOOP_MS } }, expect: { ok: false, errorCode: 'E_LIMIT_WALLCLOCK', calls: 0 } })],

  // infinite loops: the wall clock (the engine's deadline in the WASM tier).
  ['infinite_loop', 'python/native', 1, oneShot('python', 'native', '# @TAG@\nwhile True:\n    pass\n', T(LOOP_MS), TIMEOUT)],
  ['infinite_loop', 'javascript/native', 1, oneShot('javascript', 'native', '// @TAG@\nfor (;;) {}\n', T(LOOP_MS), TIMEOUT)],
  ['infinite_loop', 'typescript/native', 1, oneShot('typescript', 'native', '// @TAG@\nwhile (true) {}\n', T(LOOP_MS), TIMEOUT)],
  ['infinite_loop', 'c/native', 1, oneShot('c', 'native', C_LOOP, T(LOOP_MS), TIMEOUT, true)],
  ['infinite_loop', 'cpp/native', 1, oneShot('cpp', 'native', CPP_LOOP, T(LOOP_MS), TIMEOUT, true)],
  ['infinite_loop', 'ruby/native', 1, oneShot('ruby', 'native', '# @TAG@\nloop {}\n', T(LOOP_MS), TIMEOUT)],
  ['infinite_loop', 'php/native', 1, oneShot('php', 'native', '<?php /* @TAG@ */ while (true) {}\n', T(LOOP_MS), TIMEOUT)],
  ['infinite_loop', 'bash/native', 1, oneShot('bash', 'native', '# @TAG@\nwhile :; do :; done\n', T(LOOP_MS), TIMEOUT)],
  ['infinite_loop', 'javascript/wasm', 1, oneShot('javascript', 'wasm', '// @TAG@\nfor (;;) {}\n', T(LOOP_MS), TIMEOUT)],
  ['infinite_loop', 'c/wasm', 1, oneShot('c', 'wasm', C_LOOP, T(LOOP_MS), TIMEOUT, true)],
  ['infinite_loop', 'cpp/wasm', 1, oneShot('cpp', 'wasm', CPP_LOOP, T(LOOP_MS), TIMEOUT, true)],
  ['infinite_loop', 'python/wasm', 1, oneShot('python', 'wasm', '# @TAG@\nwhile True:\n    pass\n', T(LOOP_MS), TIMEOUT)],
  ['infinite_loop', 'ruby/wasm', 1, oneShot('ruby', 'wasm', '# @TAG@\nloop {}\n', T(LOOP_MS), TIMEOUT)],
  ['infinite_loop', 'execute/javascript', 1, (tag) => ({ mode: 'execute', lang: 'javascript', args: { language: 'javascript', code: `// ${tag}\nfor (;;) {}\n`, limits: { wall_ms: LOOP_MS } }, expect: { ok: false, errorCode: 'E_LIMIT_WALLCLOCK', calls: 0 } })],
  ['infinite_loop', 'execute/python', 1, (tag) => ({ mode: 'execute', lang: 'python', args: { language: 'python', code: `# ${tag}\nwhile True:\n    pass\n`, limits: { wall_ms: LOOP_MS } }, expect: { ok: false, errorCode: 'E_LIMIT_WALLCLOCK', calls: 0 } })],
  ...SESSION_LANGUAGES.map((lang) => ['infinite_loop', `session/${lang}`, 1, (tag) => ({ mode: 'session', lang, args: { code: SESSION_LOOP[lang](tag), timeout_ms: LOOP_MS }, expect: { status: 'timeout', errorCode: 'E_SESSION_LOST' } })]),

  // disk fill: the 64 MiB /work tmpfs answers ENOSPC (or the 4096 inodes run
  // out) and the program fails; in the WASM tier /work is in the engine's
  // memory, so the memory limit ends it.
  ['disk_fill', 'bash/native#dd', 2, oneShot('bash', 'native', '# @TAG@\ndd if=/dev/zero of=/work/fill bs=1M count=200\n', {}, { status: 'exit_nonzero', exitCode: 1, stderrIncludes: 'No space left on device' })],
  ['disk_fill', 'bash/native#inodes', 1, oneShot('bash', 'native', '# @TAG@\nfor i in $(seq 1 100000); do echo x > /work/f$i || exit 7; done\n', {}, { status: 'exit_nonzero', exitCode: 7 })],
  ['disk_fill', 'python/native', 2, oneShot('python', 'native', "# @TAG@\nwith open('/work/fill', 'wb') as f:\n    while True:\n        f.write(b'x' * (1 << 20))\n", {}, { status: 'exit_nonzero', exitCode: 1, stderrIncludes: 'No space left on device' })],
  ['disk_fill', 'javascript/native', 1, oneShot('javascript', 'native', "// @TAG@\nconst fs = require('fs');\nconst b = Buffer.alloc(1 << 20);\nconst fd = fs.openSync('/work/fill', 'w');\nfor (;;) fs.writeSync(fd, b);\n", {}, { status: 'exit_nonzero', exitCode: 1, stderrIncludes: 'ENOSPC' })],
  ['disk_fill', 'ruby/native', 1, oneShot('ruby', 'native', "# @TAG@\nFile.open('/work/fill', 'wb') { |f| loop { f.write('x' * (1 << 20)) } }\n", {}, { status: 'exit_nonzero', exitCode: 1, stderrIncludes: 'ENOSPC' })],
  ['disk_fill', 'php/native', 1, oneShot('php', 'native', "<?php /* @TAG@ */ $f = fopen('/work/fill', 'w'); $b = str_repeat('x', 1 << 20); while (true) { if (@fwrite($f, $b) === false) { exit(5); } }\n", {}, { status: 'exit_nonzero', exitCode: 5 })],
  ['disk_fill', 'c/native', 1, oneShot('c', 'native', C_DISK, {}, { status: 'exit_nonzero', exitCode: 5 }, true)],
  ['disk_fill', 'python/wasm', 1, oneShot('python', 'wasm', "# @TAG@\nwith open('/work/fill', 'wb') as f:\n    while True:\n        f.write(b'x' * (1 << 20))\n", M(BOMB_MB), MEMORY)],
  ['disk_fill', 'c/wasm', 1, oneShot('c', 'wasm', C_DISK, M(BOMB_MB), MEMORY, true)],
];

export const ABUSE_KINDS = ['fork_bomb', 'memory_bomb', 'output_flood', 'infinite_loop', 'disk_fill'];

// ------------------------------------------------------------------ plan

// The one-shot mix: [lang, tier, weight]. WASM-tier Python and Ruby are
// light: each of their runs costs a module compile (the pool refills Python's
// pre-started interpreter, ~1-2 CPU-seconds each).
export const ONESHOT_MIX = [
  ['python', 'native', 10], ['javascript', 'native', 8], ['typescript', 'native', 6], ['c', 'native', 7],
  ['cpp', 'native', 6], ['ruby', 'native', 7], ['php', 'native', 7], ['bash', 'native', 8],
  ['javascript', 'wasm', 6], ['c', 'wasm', 4], ['cpp', 'wasm', 3], ['python', 'wasm', 2], ['ruby', 'wasm', 2],
];

// Tasks (by count): one-shot runs, session flows (2-5 cells), code mode, ordinary errors.
const TASK_MIX = [['oneshot', 70], ['session', 10], ['execute', 15], ['error', 5]];

// Builds the plan: tasks whose runs number exactly `runs`; abusive runs are
// exactly round(runs * abuseShare), spread evenly.
export function buildPlan({ runs, seed, token, abuseShare = 0.1, coldShare = 0.03, has }) {
  const rng = mulberry32(seed);
  const tagOf = (idx) => `soak-${token}-${idx}`;
  const nAbuse = Math.round(runs * abuseShare);
  const abusive = new Set();
  for (let k = 0; k < nAbuse; k++) abusive.add(Math.min(runs - 1, Math.floor(((k + rng()) * runs) / nAbuse)));
  // Collisions (tiny N): fill upwards.
  for (let k = 0, p = 0; abusive.size < nAbuse && p < runs; p++) if (!abusive.has(p)) { abusive.add(p); k++; }

  const oneshotMix = ONESHOT_MIX.filter(([l, t]) => has(l, t));
  const abusiveMix = ABUSIVE.filter(([, label]) => {
    const [lang, tier] = label.split('#')[0].split('/');
    if (lang === 'execute' || lang === 'session') return true;
    return has(lang, tier);
  });

  const tasks = [];
  let idx = 0;
  const run = (fields) => ({ idx, tag: tagOf(idx), ...fields });
  while (idx < runs) {
    if (abusive.has(idx)) {
      const entry = weighted(rng, abusiveMix.map((e) => [e, e[2]]));
      const [kind, label, , make] = entry;
      const p = make(tagOf(idx));
      const r = run({ group: 'abuse', kind: `abuse ${kind}`, abuse: kind, label, mode: p.mode, lang: p.lang, tier: p.tier ?? (p.mode === 'run' ? 'native' : 'native'), args: p.args, expect: p.expect });
      idx++;
      if (p.mode === 'session') tasks.push({ type: 'session', lang: p.lang, cells: [r] });
      else tasks.push({ type: 'run', run: r });
      continue;
    }
    let free = 0;
    while (idx + free < runs && !abusive.has(idx + free) && free < 5) free++;
    let type = weighted(rng, TASK_MIX);
    if (type === 'session' && free < 2) type = 'oneshot';
    if (type === 'oneshot') {
      const [lang, tier] = weighted(rng, oneshotMix.map(([l, t, w]) => [[l, t], w]));
      const p = normalOneShot(rng, lang, tier, tagOf(idx), coldShare);
      tasks.push({ type: 'run', run: run({ group: 'normal', kind: `run ${lang}/${tier}`, mode: 'run', lang, tier, args: p.args, expect: p.expect, cold: p.cold }) });
      idx++;
    } else if (type === 'error') {
      const [lang, make] = pick(rng, ERRORS);
      const p = make(tagOf(idx));
      tasks.push({ type: 'run', run: run({ group: 'error', kind: `error ${p.expect.status}`, mode: 'run', lang, tier: 'native', args: p.args, expect: p.expect }) });
      idx++;
    } else if (type === 'execute') {
      const lang = rng() < 0.6 ? 'javascript' : 'python';
      const p = codeModeProgram(rng, lang, tagOf(idx));
      tasks.push({ type: 'run', run: run({ group: 'normal', kind: `execute ${lang}`, variant: p.v, mode: 'execute', lang, tier: 'native', args: { language: lang, code: p.code }, expect: p.expect }) });
      idx++;
    } else {
      const lang = pick(rng, SESSION_LANGUAGES);
      const n = int(rng, 2, Math.min(5, free));
      const cells = [];
      let acc = 0;
      for (let i = 0; i < n; i++) {
        const d = int(rng, 1, 999);
        acc = i === 0 ? d : acc + d;
        cells.push(run({ group: 'normal', kind: `session ${lang}`, mode: 'session', lang, tier: 'native', args: { code: sessionCell(lang, tagOf(idx), i === 0, d) }, expect: { status: 'ok', exitCode: 0, stdout: `${acc}\n` } }));
        idx++;
      }
      tasks.push({ type: 'session', lang, cells });
    }
  }
  return tasks;
}
