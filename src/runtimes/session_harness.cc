// The session harness texts and the turn protocol; see session_harness.h.
#include "runtimes/session_harness.h"

#include <cstdlib>

namespace airlock::runtimes {

// The Python harness in parts: the loop up to the cell's stdin, how
// the stdin is set up (native: a file made fd 0; WASM: a stream, no dup2
// in WASI), and the rest; the control channel is the function's argument.
constexpr std::string_view kPythonSessionHead = R"PY(
def _airlock_session(ctl, hooks=None):
    # hooks (code-mode sessions, python_harness.py's _SessionHooks): the
    # cells run in a fresh __main__ (the harness's own module keeps its
    # globals), descriptors that come with a turn go to hooks.begin, and
    # hooks.end sees how each cell ended.
    import ast, builtins, io, linecache, os, sys
    if hooks is None:
        g = sys.modules["__main__"].__dict__
        g.clear()
    else:
        import types
        sys.modules["__main__"] = types.ModuleType("__main__")
        g = sys.modules["__main__"].__dict__
    g.update(__name__="__main__", __doc__=None, __package__=None, __loader__=None, __spec__=None,
             __annotations__={}, __builtins__=builtins)
    if hooks is not None:
        hooks.setup(g)
    sys.argv[:] = [""]
    buf = bytearray()
    state = {"loop": None}
    passed = []

    def need(n):
        while len(buf) < n:
            if hooks is None:
                chunk = os.read(ctl, max(65536, n - len(buf)))
            else:
                chunk = hooks.receive(ctl, max(65536, n - len(buf)), passed)
            if not chunk:
                os._exit(0)
            buf.extend(chunk)

    def run(code):
        if code.co_flags & 0x80:  # CO_COROUTINE: the cell awaits at top level
            if state["loop"] is None:
                import asyncio
                state["loop"] = asyncio.new_event_loop()
            return state["loop"].run_until_complete(eval(code, g))
        return eval(code, g)

    def write_all(fd, data):
        try:
            while data:
                data = data[os.write(fd, data):]
        except OSError:
            pass

)PY";
constexpr std::string_view kPythonSessionLoop = R"PY(    cell = 0
    main_pid = os.getpid()
    while True:
        while b"\n" not in buf:
            need(len(buf) + 1)
        i = buf.index(b"\n")
        nonce, clen, slen = bytes(buf[:i]).decode().split()
        del buf[:i + 1]
        clen, slen = int(clen), int(slen)
        need(clen + slen)
        source = bytes(buf[:clen]).decode("utf-8", "surrogateescape")
        stdin = bytes(buf[clen:clen + slen])
        del buf[:clen + slen]
        cell += 1
)PY";
constexpr std::string_view kPythonSessionStdinNative = R"PY(        try:
            fd = os.open("/tmp/.airlock-stdin", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                write_all(fd, stdin)
                os.lseek(fd, 0, 0)
                os.dup2(fd, 0)
            finally:
                os.close(fd)
                os.unlink("/tmp/.airlock-stdin")
            sys.stdin = open(0, "r", encoding="utf-8", closefd=False)
        except OSError as e:  # e.g. an earlier cell holds every descriptor
            write_all(2, ("airlock: this cell's stdin could not be set up: %s\n" % e).encode())
)PY";
constexpr std::string_view kPythonSessionStdinWasm = R"PY(        # WASI has no dup2: the cell's stdin is an in-memory stream.
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8", errors="surrogateescape")
)PY";
constexpr std::string_view kPythonSessionTail = R"PY(        name = "<cell %d>" % cell
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)
        kind, status = "ok", 0
        value = failure = None
        if hooks is not None:
            hooks.begin(passed)
            del passed[:]
        try:
            tree = ast.parse(source, name, "exec")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
            run(compile(tree, name, "exec", flags=flags, dont_inherit=True))
            if last is not None:
                value = run(compile(last, name, "eval", flags=flags, dont_inherit=True))
                if value is not None:
                    sys.displayhook(value)
        except SystemExit as e:
            kind = "exit"
            if e.code is None:
                status = 0
            elif isinstance(e.code, int):
                status = e.code & 0xff
            else:
                print(e.code, file=sys.stderr)
                status = 1
        except BaseException as e:
            tb = e.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename == "<string>":
                tb = tb.tb_next
            try:
                sys.excepthook(type(e), e.with_traceback(tb), tb)
            except BaseException:
                pass
            kind, status = "error", 1
            failure = e
        if os.getpid() != main_pid:
            os._exit(status)  # a process the cell forked, back from it
        if hooks is not None:
            hooks.end(value, failure, name)
        for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                s.flush()
            except BaseException:
                pass
        marker = ("\x1eairlock-turn-end:%s\x1e" % nonce).encode()
        write_all(1, marker)
        write_all(2, marker)
        write_all(ctl, ("%s %s %d\n" % (nonce, kind, status)).encode())
)PY";

std::string_view PythonSessionHarness() {
  static const std::string harness = std::string(kPythonSessionHead) + std::string(kPythonSessionLoop) +
                                     std::string(kPythonSessionStdinNative) + std::string(kPythonSessionTail) +
                                     "_airlock_session(3)\n";
  return harness;
}

std::string PythonSessionHarnessWithHooks(std::string_view hooks) {
  return std::string(kPythonSessionHead) + std::string(kPythonSessionLoop) + std::string(kPythonSessionStdinNative) +
         std::string(kPythonSessionTail) + "_airlock_session(3, " + std::string(hooks) + ")\n";
}

std::string_view WasmPythonSessionHarness() {
  // 1000: the guest's control descriptor (engine/js/wasi_runner.h,
  // kGuestControlFd).
  static const std::string harness = std::string(kPythonSessionHead) + std::string(kPythonSessionLoop) +
                                     std::string(kPythonSessionStdinWasm) + std::string(kPythonSessionTail) +
                                     "_airlock_session(1000)\n";
  return harness;
}

std::string_view WasmPythonReactorSessionHarness() {
  static const std::string harness = std::string(kPythonSessionHead) + std::string(kPythonSessionLoop) +
                                     std::string(kPythonSessionStdinWasm) + std::string(kPythonSessionTail) +
                                     "        yield\n" + "_airlock_turn = _airlock_session(1000).__next__\n";
  return harness;
}

std::string SnapshotTurnMessage(const std::string& nonce) { return "!snapshot " + nonce + "\n"; }

std::string RestoreTurnMessage(const std::string& nonce) { return "!restore " + nonce + "\n"; }

std::string_view NodeSessionHarness() {
  return R"JS(
(() => {
  const fs = require('fs');
  const vm = require('vm');
  const util = require('util');
  const { Readable } = require('stream');
  // Blocking, as pre-started runs' (prestart_harness.cc): a flood meets the
  // output limit instead of queueing in memory.
  for (const s of [process.stdout, process.stderr]) s._handle?.setBlocking?.(true);
  // The harness's own frames (node:vm, [eval]) are not the cell's.
  const show = (e) => {
    if (!(e instanceof Error) || !e.stack) return 'Uncaught ' + util.inspect(e);
    return e.stack.split('\n').filter((l) => !/^\s+at .*(node:vm|node:internal|\[eval\])/.test(l)).join('\n');
  };
  process.on('uncaughtException', (e) => { try { process.stderr.write(show(e) + '\n'); } catch {} });
  process.on('unhandledRejection', (e) => { try { process.stderr.write(show(e) + '\n'); } catch {} });
  let buf = Buffer.alloc(0);
  const need = (n) => {
    while (buf.length < n) {
      const chunk = Buffer.allocUnsafe(Math.max(65536, n - buf.length));
      const r = fs.readSync(3, chunk, 0, chunk.length, null);
      if (r === 0) process.reallyExit(0);
      buf = Buffer.concat([buf, chunk.subarray(0, r)]);
    }
  };
  let cell = 0;
  const turn = async () => {
    for (;;) {
      let i;
      while ((i = buf.indexOf(10)) < 0) need(buf.length + 1);
      const [nonce, cl, sl] = buf.subarray(0, i).toString().split(' ');
      buf = buf.subarray(i + 1);
      need(+cl + +sl);
      const code = buf.subarray(0, +cl).toString('utf8');
      const input = Buffer.from(buf.subarray(+cl, +cl + +sl));
      buf = buf.subarray(+cl + +sl);
      cell += 1;
      const stdin = Readable.from(input.length ? [input] : []);
      Object.defineProperty(process, 'stdin', { configurable: true, enumerable: true, get: () => stdin });
      const filename = `<cell ${cell}>`;
      let kind = 'ok';
      let status = 0;
      // The cell ends as a script would: when the event loop holds nothing
      // more of its own (timers, sockets, pending I/O).
      const busy = () => process.getActiveResourcesInfo().length;
      const base = busy();
      try {
        let value;
        try {
          value = vm.runInThisContext(code, { filename });
        } catch (e) {
          if (!(e instanceof SyntaxError) || !/\bawait\b/.test(code)) throw e;
          // Top-level await: an async function, whose value is the cell's
          // when the cell is one expression.
          let wrapped;
          try {
            wrapped = new vm.Script(`(async () => (\n${code}\n))()`, { filename, lineOffset: -1 });
          } catch {
            wrapped = new vm.Script(`(async () => {\n${code}\n})()`, { filename, lineOffset: -1 });
          }
          value = await wrapped.runInThisContext();
        }
        if (value !== undefined) process.stdout.write(util.inspect(value) + '\n');
      } catch (e) {
        process.stderr.write(show(e) + '\n');
        kind = 'error';
        status = 1;
      }
      for (let spins = 0; busy() > base; ++spins) {
        await new Promise((r) => (spins < 20 ? setImmediate(r) : setTimeout(r, 1)));
      }
      const marker = `\x1eairlock-turn-end:${nonce}\x1e`;
      try { fs.writeSync(1, marker); } catch {}
      try { fs.writeSync(2, marker); } catch {}
      fs.writeSync(3, `${nonce} ${kind} ${status}\n`);
    }
  };
  turn();
})();
)JS";
}

// Ruby's harness; @CTL@ is the control channel's descriptor, @STDIN@ how a
// cell's stdin is set up.
constexpr std::string_view kRubySessionHarness = R"RB(
-> {
  ctl = IO.new(@CTL@, "r+b")
  out, err = STDOUT, STDERR
  b = TOPLEVEL_BINDING
  cell = 0
  main_pid = Process.pid
  path = "/tmp/.airlock-stdin"
  loop do
    header = ctl.gets or exit!(0)
    nonce, cl, sl = header.split(" ")
    code = cl.to_i > 0 ? ctl.read(cl.to_i) : +""
    input = sl.to_i > 0 ? ctl.read(sl.to_i) : ""
    cell += 1
@STDIN@    kind, status = "ok", 0
    begin
      v = b.eval(code.force_encoding(Encoding::UTF_8), "(cell #{cell})", 1)
      $stdout.puts(v.inspect) unless v.nil?
    rescue SystemExit => e
      kind, status = "exit", e.status
    rescue Exception => e
      e.set_backtrace((e.backtrace || []).reject { |l| l.start_with?("-e:") }) if e.backtrace
      begin
        $stderr.print e.full_message(highlight: false)
      rescue Exception
        err.print "#{e.class}: #{e.message}\n"
      end
      kind, status = "error", 1
    end
    exit!(status) if Process.pid != main_pid  # a process the cell forked, back from it
    [$stdout, $stderr, out, err].each { |s| s.flush rescue nil }
    m = "\x1eairlock-turn-end:#{nonce}\x1e"
    (out.syswrite(m) rescue nil)
    (err.syswrite(m) rescue nil)
    ctl.syswrite("#{nonce} #{kind} #{status}\n")
  end
}.call
)RB";

constexpr std::string_view kRubyStdinNative = R"RB(    begin
      File.binwrite(path, input)
      STDIN.reopen(path, "r")
      File.unlink(path)
      $stdin = STDIN
    rescue SystemCallError => e  # e.g. an earlier cell holds every descriptor
      err.syswrite("airlock: this cell's stdin could not be set up: #{e.message}\n") rescue nil
    end
)RB";

// WASI has no dup2 (no reopen): the cell's stdin is a StringIO.
constexpr std::string_view kRubyStdinWasm = R"RB(    require "stringio"
    $stdin = StringIO.new(input)
)RB";

std::string RubySessionHarnessFor(std::string_view ctl, std::string_view stdin_setup) {
  std::string s(kRubySessionHarness);
  s.replace(s.find("@CTL@"), 5, ctl);
  s.replace(s.find("@STDIN@"), 7, stdin_setup);
  return s;
}

std::string_view RubySessionHarness() {
  static const std::string harness = RubySessionHarnessFor("3", kRubyStdinNative);
  return harness;
}

std::string_view WasmRubySessionHarness() {
  // 0: ruby.wasm's wasi-vfs passes only descriptors 0-2 through to the host,
  // so the control channel takes stdin's place (airlock-js
  // --control-guest-fd 0); a cell's stdin is a StringIO.
  static const std::string harness = RubySessionHarnessFor("0", kRubyStdinWasm);
  return harness;
}

// PHP's harness; @CTL@ is the control channel's descriptor.
constexpr std::string_view kPhpSessionHarness = R"PHP(
final class __Airlock {
  public static $ctl = null;
  public static $cell = 0;
  public static function next(): array {
    self::$ctl ??= fopen('php://fd/@CTL@', 'r+b');
    $h = fgets(self::$ctl);
    if ($h === false) exit(0);
    [$nonce, $cl, $sl] = explode(' ', trim($h));
    $code = (int)$cl > 0 ? stream_get_contents(self::$ctl, (int)$cl) : '';
    if ((int)$sl > 0) stream_get_contents(self::$ctl, (int)$sl);
    self::$cell++;
    return [$nonce, preg_replace('/^\s*<\?php\b/', '', $code, 1)];
  }
  public static function report(\Throwable $e): void {
    fwrite(STDERR, "PHP Fatal error:  Uncaught " . $e . "\n");
  }
  public static function done(string $nonce, string $kind, int $status): void {
    flush();
    $m = "\x1eairlock-turn-end:" . $nonce . "\x1e";
    @fwrite(STDOUT, $m);
    @fwrite(STDERR, $m);
    fwrite(self::$ctl, "$nonce $kind $status\n");
    fflush(self::$ctl);
  }
}
while (true) {
  $__airlock_turn = __Airlock::next();
  try {
    eval($__airlock_turn[1]);
    __Airlock::done($__airlock_turn[0], 'ok', 0);
  } catch (\Throwable $__airlock_e) {
    __Airlock::report($__airlock_e);
    unset($__airlock_e);
    __Airlock::done($__airlock_turn[0], 'error', 255);
  }
}
)PHP";

std::string PhpSessionHarnessFor(std::string_view ctl) {
  std::string s(kPhpSessionHarness);
  s.replace(s.find("@CTL@"), 5, ctl);
  return s;
}

std::string_view PhpSessionHarness() {
  static const std::string harness = PhpSessionHarnessFor("3");
  return harness;
}

std::string_view WasmPhpSessionHarness() {
  // 1000: the guest's control descriptor (engine/js/wasi_runner.h); the
  // WASI build opens php://fd/N without dup (scripts/wasm/php/).
  static const std::string harness = PhpSessionHarnessFor("1000");
  return harness;
}

std::string_view BashSessionHarness() {
  return R"SH(
while IFS=' ' read -r __airlock_nonce __airlock_cl __airlock_sl <&3; do
  __airlock_lc=$LC_ALL; LC_ALL=C
  __airlock_code=; __airlock_in=
  [ "$__airlock_cl" -gt 0 ] && IFS= read -r -d '' -N "$__airlock_cl" __airlock_code <&3
  [ "$__airlock_sl" -gt 0 ] && IFS= read -r -d '' -N "$__airlock_sl" __airlock_in <&3
  LC_ALL=$__airlock_lc
  printf '%s' "$__airlock_in" > /tmp/.airlock-stdin
  { wait; } 2>/dev/null
  eval "$__airlock_code" < /tmp/.airlock-stdin
  __airlock_status=$?
  printf '\036airlock-turn-end:%s\036' "$__airlock_nonce"
  printf '\036airlock-turn-end:%s\036' "$__airlock_nonce" >&2
  if [ "$__airlock_status" -eq 0 ]; then
    printf '%s ok 0\n' "$__airlock_nonce" >&3
  else
    printf '%s error %d\n' "$__airlock_nonce" "$__airlock_status" >&3
  fi
done
)SH";
}

std::string SessionTurnMessage(const std::string& nonce, const std::string& code, const std::string& stdin_data) {
  return nonce + " " + std::to_string(code.size()) + " " + std::to_string(stdin_data.size()) + "\n" + code +
         stdin_data;
}

std::string TurnEndMarker(const std::string& nonce) { return "\x1e" "airlock-turn-end:" + nonce + "\x1e"; }

std::optional<SessionReply> ParseSessionReply(const std::string& line, const std::string& nonce) {
  // "<nonce> <kind> <status>"
  const size_t a = line.find(' ');
  if (a == std::string::npos || line.compare(0, a, nonce) != 0) return std::nullopt;
  const size_t b = line.find(' ', a + 1);
  if (b == std::string::npos) return std::nullopt;
  const std::string kind = line.substr(a + 1, b - a - 1);
  const std::string status = line.substr(b + 1);
  if (status.empty() || status.size() > 4) return std::nullopt;
  char* end = nullptr;
  const long v = std::strtol(status.c_str(), &end, 10);
  if (*end != 0 || v < 0 || v > 255) return std::nullopt;
  SessionReply r;
  r.status = static_cast<int>(v);
  if (kind == "ok") {
    r.kind = SessionReply::Kind::kOk;
  } else if (kind == "error") {
    r.kind = SessionReply::Kind::kError;
  } else if (kind == "exit") {
    r.kind = SessionReply::Kind::kExit;
  } else {
    return std::nullopt;
  }
  return r;
}

}  // namespace airlock::runtimes
