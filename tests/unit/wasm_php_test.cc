// PHP in the WASM tier end to end through the CLI (`airlock run --isolation
// wasm --lang php`): PHP 8.2's CLI built for wasm32-wasi
// (scripts/wasm/build_php.sh) run by `airlock-js --wasi` inside the jail —
// arguments, stdin, files, exit statuses, the Zend engine's bailout (fatal
// errors, uncaught exceptions and exit() from nested calls, over the setjmp
// kit's WebAssembly exceptions), the extensions, the limits and the absence
// of the host.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "wasm_cli_fixture.h"

namespace airlock {
namespace {

namespace fs = std::filesystem;

class WasmPhpTest : public testing::WasmInterpreterCliTest {
 protected:
  void SetUp() override { Require("php/php.wasm", "scripts/wasm/build_php.sh"); }

  nlohmann::json Run(const std::string& code, const std::string& extra = "") {
    testing::CliOutcome o = RunWasm("php", code, extra);
    nlohmann::json r = o.result();
    EXPECT_TRUE(r.is_object()) << o.out;
    return r.is_object() ? r : nlohmann::json::object();
  }
};

TEST_F(WasmPhpTest, HelloWorldAndTheVersion) {
  nlohmann::json r = Run("<?php\necho 'hello from PHP ', PHP_MAJOR_VERSION, '.', PHP_MINOR_VERSION, \"\\n\";\n"
                         "echo PHP_OS, ' ', PHP_SAPI, ' ', PHP_INT_SIZE, \"\\n\";\nprint 'no newline';");
  EXPECT_EQ(r["status"], "ok") << r;
  EXPECT_EQ(r["isolation"], "wasm");
  EXPECT_EQ(r["exit_code"], 0);
  // A 32-bit build (wasm32): integers are 32 bits wide, as in any 32-bit PHP.
  EXPECT_EQ(r["stdout"], "hello from PHP 8.2\nLinux cli 4\nno newline") << r;
}

TEST_F(WasmPhpTest, ArgvStdinAndFilesInAndOut) {
  const fs::path in = Write("in.txt", "3\n4\n\xC3\xA9t\xC3\xA9\n");
  const fs::path data = Write("data.txt", "a,b\n1,2\n");
  nlohmann::json r = Run(R"(<?php
$lines = explode("\n", trim(stream_get_contents(STDIN)));
echo json_encode([$argv, $argc, $_SERVER['argv'] === $argv]), "\n";
echo $lines[0] + $lines[1], ' ', mb_strlen($lines[2]), ' ', strlen($lines[2]), "\n";
$rows = array_map(fn($l) => implode(',', array_reverse(explode(',', $l))), file('data.txt', FILE_IGNORE_NEW_LINES));
mkdir('out');
file_put_contents('out/answer.txt', implode("\n", $rows));
$f = fopen('out/unclosed.txt', 'w');
fwrite($f, 'buffered');
$names = scandir('.');
echo json_encode(array_values(array_diff($names, ['.', '..']))), "\n";
)",
                         "--stdin " + in.string() + " --arg one --arg 'two words' --arg '\"$x\"' --file data.txt=" +
                             data.string() + " --output 'out/*' --output-dir " + (dir_ / "o").string());
  EXPECT_EQ(r["status"], "ok") << r;
  EXPECT_EQ(r["stdout"],
            "[[\"main.php\",\"one\",\"two words\",\"\\\"$x\\\"\"],4,true]\n7 3 5\n[\"data.txt\",\"main.php\",\"out\"]\n")
      << r;
  ASSERT_EQ(r["files"].size(), 2u) << r;
  std::map<std::string, std::string> files;
  for (const auto& f : r["files"]) files[f["name"]] = f["content"];
  EXPECT_EQ(files["out/answer.txt"], "b,a\n2,1");
  EXPECT_EQ(files["out/unclosed.txt"], "buffered");  // flushed at exit
}

// The Zend engine leaves a fatal error, exit() and an uncaught exception by
// longjmp (zend_bailout) to the setjmp in php_execute_script, many frames up:
// WebAssembly exceptions through the setjmp kit. Shutdown functions and
// destructors run after it, as natively.
TEST_F(WasmPhpTest, ExitFromNestedCallsRunsShutdownFunctionsAndDestructors) {
  nlohmann::json r = Run(R"(<?php
class Guard { function __destruct() { echo "destructed\n"; } }
register_shutdown_function(function () { echo "shutdown\n"; });
$g = new Guard();
function deep($n) { if ($n === 0) { echo "leaving\n"; exit(3); } deep($n - 1); }
deep(50);
echo "never\n";
)");
  EXPECT_EQ(r["status"], "exit_nonzero") << r;
  EXPECT_EQ(r["exit_code"], 3);
  EXPECT_EQ(r["stdout"], "leaving\nshutdown\ndestructed\n") << r;

  nlohmann::json msg = Run("<?php\nfunction f() { exit(\"a message\\n\"); }\nf();\n");
  EXPECT_EQ(msg["status"], "ok") << msg;  // exit("string") prints it and exits 0
  EXPECT_EQ(msg["stdout"], "a message\n");
}

TEST_F(WasmPhpTest, AFatalErrorFromNestedCallsEndsWith255AndRunsShutdownFunctions) {
  // E_USER_ERROR and a call to an undefined function, both four frames down.
  nlohmann::json r = Run(R"(<?php
register_shutdown_function(function () { $e = error_get_last(); echo "shutdown: ", $e['type'] ?? 0, "\n"; });
function a() { b(); }
function b() { c(); }
function c() { echo "in c\n"; trigger_error("giving up", E_USER_ERROR); }
a();
echo "never\n";
)");
  EXPECT_EQ(r["status"], "exit_nonzero") << r;
  EXPECT_EQ(r["exit_code"], 255);
  EXPECT_EQ(r["stdout"], "in c\nshutdown: 256\n") << r;
  EXPECT_NE(r["stderr"].get<std::string>().find("PHP Fatal error:  giving up in "), std::string::npos) << r;

  nlohmann::json undefined = Run("<?php\nfunction a() { b(); }\nfunction b() { nope(); }\na();\n");
  EXPECT_EQ(undefined["exit_code"], 255) << undefined;
  EXPECT_NE(undefined["stderr"].get<std::string>().find(
                "PHP Fatal error:  Uncaught Error: Call to undefined function nope()"),
            std::string::npos)
      << undefined;

  // A fatal error while a fatal error's shutdown runs, and many bailouts in
  // one run (every catch of an Error is a longjmp-free path; each
  // eval'd parse error is caught as ParseError).
  nlohmann::json many = Run(R"(<?php
$n = 0;
for ($i = 0; $i < 2000; $i++) { try { eval('syntax error here'); } catch (ParseError $e) { $n++; } }
echo $n, "\n";
register_shutdown_function(function () { echo "first\n"; undefined_in_shutdown(); });
register_shutdown_function(function () { echo "second never runs\n"; });
throw new RuntimeException("top");
)");
  EXPECT_EQ(many["exit_code"], 255) << many;
  EXPECT_EQ(many["stdout"], "2000\nfirst\n") << many;
  EXPECT_NE(many["stderr"].get<std::string>().find("Uncaught RuntimeException: top"), std::string::npos) << many;
  EXPECT_NE(many["stderr"].get<std::string>().find("Call to undefined function undefined_in_shutdown()"),
            std::string::npos)
      << many;
}

TEST_F(WasmPhpTest, AnUncaughtExceptionAndAParseErrorReadLikePhp) {
  nlohmann::json r = Run("<?php\necho \"start\\n\";\nfunction check($n) {\n  if ($n > 1) throw new "
                         "InvalidArgumentException(\"bad n: $n\");\n}\ncheck(2);\n");
  EXPECT_EQ(r["status"], "exit_nonzero") << r;
  EXPECT_EQ(r["exit_code"], 255);
  EXPECT_EQ(r["stdout"], "start\n");
  const std::string err = r["stderr"];
  EXPECT_EQ(err.rfind("PHP Fatal error:  Uncaught InvalidArgumentException: bad n: 2 in ", 0), 0u) << err;
  EXPECT_NE(err.find("#0 "), std::string::npos) << err;  // the stack trace

  nlohmann::json parse = Run("<?php\necho 'never';\nfunction broken( {\n");
  EXPECT_EQ(parse["exit_code"], 255) << parse;
  EXPECT_EQ(parse["stdout"], "");
  EXPECT_EQ(parse["stderr"].get<std::string>().rfind("PHP Parse error:  syntax error, unexpected token \"{\"", 0), 0u)
      << parse;
}

TEST_F(WasmPhpTest, TheBuiltInExtensionsWork) {
  nlohmann::json r = Run(R"(<?php
echo json_encode(json_decode('{"a":[1,2,{"b":null}]}', true)), "\n";
echo preg_replace('/(\d+)/', '<$1>', 'a1b22'), ' ', preg_match_all('/\p{Lu}/u', 'ÀbÇd'), "\n";
echo mb_strtoupper('héllo wörld'), ' ', mb_substr('日本語テキスト', 2, 3), "\n";
echo ctype_digit('12345') ? 'digits' : 'no', ' ', bcadd('12345678901234567890', '1'), ' ', PHP_INT_MAX + 1, "\n";
echo (new DateTimeImmutable('2026-12-03 10:20:30', new DateTimeZone('UTC')))->modify('+1 day')->format('Y-m-d l'), "\n";
echo hash('sha256', 'abc') === 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad' ? 'sha ok' : 'sha bad', "\n";
echo filter_var('a@example.com', FILTER_VALIDATE_EMAIL), ' ', cal_days_in_month(CAL_GREGORIAN, 2, 2024), "\n";
echo count(token_get_all('<?php echo 1;')), ' ', (new ReflectionClass('ArrayObject'))->getName(), "\n";
$h = new SplMinHeap(); foreach ([5, 1, 3] as $x) $h->insert($x); echo $h->extract(), "\n";
$a = random_int(1, 1000000); $b = random_int(1, 1000000); echo strlen(random_bytes(16)), "\n";
printf("%05.1f %s %x\n", 3.14159, str_pad('x', 3, '-', STR_PAD_BOTH), 255);
echo implode(',', array_map(null, [1, 2], [3, 4])[1]), ' ', serialize([1 => 'a']), "\n";
)");
  EXPECT_EQ(r["status"], "ok") << r;
  EXPECT_EQ(r["stdout"],
            "{\"a\":[1,2,{\"b\":null}]}\n"
            "a<1>b<22> 2\n"
            "HÉLLO WÖRLD 語テキ\n"
            "digits 12345678901234567891 2147483648\n"
            "2026-12-04 Friday\n"
            "sha ok\n"
            "a@example.com 29\n"
            "5 ArrayObject\n"
            "1\n"
            "16\n"
            "003.1 -x- ff\n"
            "2,4 a:1:{i:1;s:1:\"a\";}\n")
      << r;
}

// WASI has no dup(): the build opens php://stdin, stdout, stderr and fd/N
// on the descriptor itself, and closing such a stream leaves it open.
TEST_F(WasmPhpTest, PhpStreamsOnTheStandardDescriptorsWork) {
  const std::filesystem::path in = Write("in.txt", "line one\nline two\n");
  nlohmann::json r = Run(R"(<?php
$a = fopen('php://stdin', 'r');
echo fgets($a);
fclose($a);
echo stream_get_contents(fopen('php://stdin', 'r'));
$out = fopen('php://stdout', 'w');
fwrite($out, "to stdout\n");
fclose($out);
file_put_contents('php://stdout', "again\n");
file_put_contents('php://fd/2', "to stderr\n");
$bad = @fopen('php://fd/77', 'r');
var_dump($bad === false || @fread($bad, 1) === false || @fread($bad, 1) === '');
)",
                         "--stdin " + in.string());
  EXPECT_EQ(r["status"], "ok") << r;
  // As natively: the first stream read ahead and took "line two" with it.
  EXPECT_EQ(r["stdout"], "line one\nto stdout\nagain\nbool(true)\n") << r;
  EXPECT_EQ(r["stderr"], "to stderr\n") << r;
}

TEST_F(WasmPhpTest, FibersAreACatchableError) {
  nlohmann::json r = Run(R"(<?php
try {
  $f = new Fiber(function () { echo "inside\n"; });
  $f->start();
  echo "started\n";
} catch (Throwable $e) {
  echo get_class($e), ": ", $e->getMessage(), "\n";
}
echo "after\n";
)");
  EXPECT_EQ(r["status"], "ok") << r;
  const std::string out = r["stdout"];
  EXPECT_EQ(out.find("inside"), std::string::npos) << out;
  EXPECT_NE(out.find("FiberError: "), std::string::npos) << out;
  EXPECT_NE(out.find("\nafter\n"), std::string::npos) << out;
}

// Every level of array_map(closure) recurses in C (zend_call_function):
// 5000 levels need the build's 8 MiB stack (wasm-ld's default is 64 KiB),
// and endless recursion ends in a trap, not in memory the stack overran.
TEST_F(WasmPhpTest, DeepRecursionInCFitsTheStackAndEndlessRecursionTraps) {
  const std::string code =
      "<?php\nfunction f($n) { return $n ? array_map(fn($x) => f($n - 1), [1])[0] + 1 : 0; }\n"
      "echo f((int) $argv[1]), \"\\n\";\n";
  nlohmann::json deep = Run(code, "--arg 5000");
  EXPECT_EQ(deep["status"], "ok") << deep;
  EXPECT_EQ(deep["stdout"], "5000\n");
  nlohmann::json endless = Run(code, "--arg 100000000");
  EXPECT_EQ(endless["status"], "exit_nonzero") << endless;
  EXPECT_EQ(endless["exit_code"], 134);
  EXPECT_NE(endless["stderr"].get<std::string>().find("wasm trap"), std::string::npos) << endless;
}

TEST_F(WasmPhpTest, AnEndlessLoopIsStoppedAtTheDeadline) {
  nlohmann::json r = Run("<?php\nwhile (true) { }\n", "--timeout-ms 3000");
  EXPECT_EQ(r["status"], "timeout") << r;
  EXPECT_LT(r["wall_ms"].get<int64_t>(), 10000);
}

TEST_F(WasmPhpTest, MemoryIsBoundedByTheRunsLimit) {
  // memory_limit is off (as in Debian's CLI): the guest's memory cap, the
  // run's memory limit, stops it; PHP reports its own out-of-memory error.
  nlohmann::json r = Run("<?php\n$a = [];\nwhile (true) { $a[] = str_repeat('x', 1 << 20); }\n", "--memory-mb 128");
  EXPECT_NE(r["status"], "ok") << r;
  EXPECT_NE(r["status"], "timeout") << r;
  const std::string err = r["stderr"];
  EXPECT_TRUE(r["status"] == "memory_limit" || err.find("Out of memory") != std::string::npos ||
              err.find("Allowed memory size") != std::string::npos)
      << r;
  // The guest's memory is the run's limit less 64 MiB for the engine (its
  // code and heap): one allocation past it is refused, one within it works
  // in the next run (nothing of the failed run is left).
  const std::string big = "<?php\necho strlen(str_repeat('y', (int) $argv[1] << 20)), \"\\n\";\n";
  nlohmann::json past = Run(big, "--memory-mb 128 --arg 80");
  EXPECT_EQ(past["status"], "exit_nonzero") << past;
  EXPECT_NE(past["stderr"].get<std::string>().find("PHP Fatal error:  Out of memory"), std::string::npos) << past;
  nlohmann::json after = Run(big, "--memory-mb 128 --arg 40");
  EXPECT_EQ(after["status"], "ok") << after;
  EXPECT_EQ(after["stdout"], "41943040\n");
}

TEST_F(WasmPhpTest, TheHostIsNotThere) {
  nlohmann::json r = Run(R"(<?php
$seen = [];
foreach (['/etc/passwd', '/proc/self/environ', '/opt/airlock/airlock-js', '../../etc/passwd', '/usr/bin/php',
          '/opt/airlock/wasm-php/php.wasm'] as $p) {
  if (@file_get_contents($p) !== false) $seen[] = $p;
}
if (@fsockopen('127.0.0.1', 80, $errno, $errstr, 1) !== false) $seen[] = 'tcp';
if (@stream_socket_client('udp://127.0.0.1:53') !== false) $seen[] = 'udp';
foreach (['exec', 'shell_exec', 'system', 'passthru', 'proc_open', 'popen', 'mail', 'dl'] as $fn) {
  if (!function_exists($fn)) continue;
  try { $out = @$fn('id'); if ($out) $seen[] = $fn; } catch (Throwable $e) {}
}
if (@symlink('/etc/passwd', 'link') && @file_get_contents('link') !== false) $seen[] = 'symlink';
echo 'visible: ', json_encode($seen), ' env: ', json_encode(getenv()), ' root: ', json_encode(scandir('/')), "\n";
)");
  EXPECT_EQ(r["status"], "ok") << r;
  EXPECT_EQ(r["stdout"], "visible: [] env: [] root: [\".\",\"..\",\"main.php\"]\n") << r;
}

}  // namespace
}  // namespace airlock
