// The harness texts; see prestart_harness.h for the protocol.
#include "runtimes/prestart_harness.h"

#include <string>

namespace airlock::runtimes {

namespace {

// The two Python harnesses differ only in how the hand-over arrives; each
// prologue ends with `raw` (the NUL-terminated arguments), `path` (main.py
// as the cold command computes it) and `orig` (sys.orig_argv before the
// arguments). This body does the rest, identically for both.
constexpr std::string_view kPythonPaidBeforeTheRun = R"PY(
def _airlock_finish(status, g):
    # What Py_FinalizeEx does that a program can observe, in its order:
    # wait for non-daemon threads, run atexit callbacks, drop the program's
    # globals (open files are flushed and closed, __del__ runs), flush
    # stdout and stderr. Then exit without tearing down the interpreter
    # (module teardown, freeing every object: several ms, not the
    # program's). Any failure returns, and the normal exit path runs.
    import os, sys
    try:
        if "threading" in sys.modules:
            sys.modules["threading"]._shutdown()
        import atexit
        atexit._run_exitfuncs()
        g.clear()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        return
    os._exit(status & 0xff)

def _airlock_resume():
    # Paid before the run: what the hand-over needs, the compiler's first
    # use (~1.4 ms), and a GC that will never scan the start-up objects again
    # (they are not the program's; finalization gets cheaper).
    import builtins, gc, importlib.machinery, os, sys
    finish = _airlock_finish  # a local: the run clears this module's globals
    compile("pass", "<airlock>", "exec", dont_inherit=True)
    gc.freeze()
)PY";

constexpr std::string_view kPythonNativeHandOver = R"PY(
    # The arguments on fd 3, until airlock-init closes it.
    raw = bytearray()
    while True:
        chunk = os.read(3, 65536)
        if not chunk:
            break
        raw += chunk
    os.close(3)
    path = "/work/main.py"
    orig = [sys.executable, "-I", "main.py"]
)PY";

constexpr std::string_view kPythonWasmHandOver = R"PY(
    # airlock-js --resume-fd: the guest's stdin starts with a 10-digit
    # length and the arguments; the run's real stdin follows.
    def read_exact(n):
        b = bytearray()
        while len(b) < n:
            chunk = os.read(0, n - len(b))
            if not chunk:
                break
            b += chunk
        return bytes(b)
    raw = read_exact(int(read_exact(10)))
    path = os.getcwd() + "/main.py"  # as `python main.py` computes it: "//main.py"
    orig = [sys.orig_argv[0], "main.py"]
)PY";

constexpr std::string_view kPythonRunMain = R"PY(
    args = [os.fsdecode(bytes(a)) for a in raw.split(b"\0")[:-1]]
    sys.argv[:] = ["main.py", *args]
    sys.orig_argv[:] = [*orig, *args]
    g = sys.modules["__main__"].__dict__
    g.clear()
    g.update(__name__="__main__", __doc__=None, __package__=None,
             __loader__=importlib.machinery.SourceFileLoader("__main__", path), __spec__=None,
             __annotations__={}, __builtins__=builtins, __file__=path, __cached__=None)
    try:
        with open(path, "rb") as f:
            code = compile(f.read(), path, "exec", dont_inherit=True)
        del f
        exec(code, g)
    except SystemExit as e:
        # As the interpreter maps it; anything unusual takes its own path.
        if e.code is None or (type(e.code) is int and -2**31 <= e.code < 2**31):
            e.with_traceback(None)  # the program's frames go, and what they hold
            finish(e.code or 0, g)
        raise
    except BaseException as e:
        tb = e.__traceback__.tb_next
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        if isinstance(e, KeyboardInterrupt) and hasattr(os, "kill"):
            import signal
            sys.stdout.flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        e.with_traceback(None)
        finish(1, g)
        sys.exit(1)
    finish(0, g)

_airlock_resume()
)PY";

}  // namespace

std::string_view PythonPrestartHarness() {
  static const std::string harness = std::string(kPythonPaidBeforeTheRun) + std::string(kPythonNativeHandOver) +
                                     std::string(kPythonRunMain);
  return harness;
}

std::string_view WasmPythonPrestartHarness() {
  static const std::string harness = std::string(kPythonPaidBeforeTheRun) + std::string(kPythonWasmHandOver) +
                                     std::string(kPythonRunMain);
  return harness;
}

// Node's harnesses: the stdio set-up, then (pre-started) the hand-over,
// then the start of /work/main.js as `node main.js` would.
constexpr std::string_view kNodeStdio = R"JS(
(() => {
  // Blocking, unlike node's default for a pipe (O_NONBLOCK, and what the
  // pipe cannot take now is queued in memory): a program that floods its
  // output then waits for the supervisor and meets the output limit,
  // instead of filling its memory when the machine is busy. Pre-started,
  // this also pays before the run for the stdio streams node creates on
  // first use (about 2 ms for a pipe): the objects a cold run would create.
  for (const s of [process.stdout, process.stderr]) s._handle?.setBlocking?.(true);
)JS";

constexpr std::string_view kNodeHandOver = R"JS(
  const fs = require('fs');
  const raw = fs.readFileSync(3);
  fs.closeSync(3);
  const args = raw.toString('utf8').split('\0').slice(0, -1);
  process.argv.splice(1, Infinity, '/work/main.js', ...args);
)JS";

constexpr std::string_view kNodeRunMain = R"JS(
  process.execArgv.length = 0;
  delete process._eval;
  require('module').runMain();
})();
)JS";

std::string_view NodeRunHarness() {
  static const std::string harness = std::string(kNodeStdio) + std::string(kNodeRunMain);
  return harness;
}

std::string_view NodePrestartHarness() {
  static const std::string harness = std::string(kNodeStdio) + std::string(kNodeHandOver) + std::string(kNodeRunMain);
  return harness;
}

std::string_view RubyPrestartHarness() {
  return R"RB(
-> {
  io = IO.new(3, "rb")
  raw = io.read
  io.close
  ARGV.replace(raw.split("\0", -1)[0...-1].map { |a| a.force_encoding(Encoding.find("locale")) })
  $0 = "main.rb"
  begin
    TOPLEVEL_BINDING.eval(File.read("main.rb"), "main.rb", 1)
  rescue Exception => e
    bt = e.backtrace || []
    if e.is_a?(SyntaxError) && bt.all? { |l| l.start_with?("-e:") }
      # main.rb itself does not parse: say so as `ruby main.rb` does.
      $stderr.print e.message
      exit 1
    end
    e.set_backtrace(bt.reject { |l| l.start_with?("-e:") }) if e.backtrace
    raise e
  end
}.call
)RB";
}

// PHP: the hand-over read into $__airlock_raw ("ARG\0ARG\0..."), then the
// same start for both tiers.
constexpr std::string_view kPhpRunMain = R"PHP(
$argv = array_merge(['main.php'], array_slice(explode("\0", $__airlock_raw), 0, -1));
unset($__airlock_raw);
$argc = count($argv);
$_SERVER['argv'] = $argv;
$_SERVER['argc'] = $argc;
$_SERVER['SCRIPT_NAME'] = $_SERVER['SCRIPT_FILENAME'] = $_SERVER['PHP_SELF'] = $_SERVER['PATH_TRANSLATED'] = 'main.php';
require 'main.php';
)PHP";

std::string_view PhpPrestartHarness() {
  static const std::string harness = std::string(R"PHP(
$__airlock = fopen('php://fd/3', 'rb');
$__airlock_raw = stream_get_contents($__airlock);
fclose($__airlock);
unset($__airlock);)PHP") + std::string(kPhpRunMain);
  return harness;
}

std::string_view WasmPhpPrestartHarness() {
  // STDIN unbuffered while the hand-over is read, so not one byte of the
  // run's own stdin is taken into the harness's buffer; buffered again
  // after (PHP's default chunk).
  static const std::string harness = std::string(R"PHP(
stream_set_read_buffer(STDIN, 0);
$__airlock = function (int $n): string {
  $b = '';
  while (strlen($b) < $n && ($c = fread(STDIN, $n - strlen($b))) !== false && $c !== '') $b .= $c;
  return $b;
};
$__airlock_raw = $__airlock((int) $__airlock(10));
unset($__airlock);
stream_set_read_buffer(STDIN, 8192);)PHP") + std::string(kPhpRunMain);
  return harness;
}

}  // namespace airlock::runtimes
