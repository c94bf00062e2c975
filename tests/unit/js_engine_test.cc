// Tests of airlock-js, the embedded SpiderMonkey host (src/engine/js/).
//
// Every test spawns the real binary with a socketpair as fd 3; the test plays
// airlock's side of the bridge protocol (length-prefixed JSON frames), so
// framing, tamper resistance and limits are exercised end to end. The last
// suite runs airlock-js inside the real jail under the default seccomp policy.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/unique_fd.h"
#include "jail/host.h"
#include "jail/jail.h"
#include "base/frame.h"
#include "test_jail_host.h"

namespace airlock {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string JsBinary() { return std::string(AIRLOCK_BINARY_DIR) + "/airlock-js"; }

// What the fake airlock does with one request frame: a reply frame, or
// nullopt to never answer it.
using Responder = std::function<std::optional<Json>(const Json& request)>;

// Echoes every request back as the result.
std::optional<Json> EchoResponder(const Json& req) { return Json{{"id", req["id"]}, {"ok", true}, {"result", req}}; }

struct JsRun {
  int exit_code = -1;
  int signal = 0;
  std::string out, err;
  std::vector<Json> requests;   // search/describe/call frames received
  std::vector<Json> finals;     // result / result_error frames received
  std::string bridge_error;     // a frame that was not valid JSON, etc.
  int64_t wall_ms = 0;

  const Json& final_frame() const {
    static const Json kNone;
    return finals.empty() ? kNone : finals.back();
  }
};

struct RunOptions {
  std::vector<std::string> flags;
  Responder responder = EchoResponder;
  size_t batch = 1;        // answer requests in groups of this many, last first
  bool bridge = true;
};

std::string ReadAllFrom(int fd) {
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

JsRun RunJs(const std::string& code, RunOptions opts = {}) {
  JsRun run;
  char path[] = "/tmp/airlock_js_test_XXXXXX.js";
  int script_fd = ::mkstemps(path, 3);
  EXPECT_GE(script_fd, 0);
  EXPECT_EQ(::write(script_fd, code.data(), code.size()), static_cast<ssize_t>(code.size()));
  ::close(script_fd);

  int sv[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  int out_pipe[2], err_pipe[2];
  EXPECT_EQ(::pipe2(out_pipe, O_CLOEXEC), 0);
  EXPECT_EQ(::pipe2(err_pipe, O_CLOEXEC), 0);

  std::vector<std::string> argv_s = {JsBinary()};
  argv_s.insert(argv_s.end(), opts.flags.begin(), opts.flags.end());
  if (opts.bridge) {
    argv_s.push_back("--bridge-fd");
    argv_s.push_back("3");
  }
  argv_s.push_back(path);
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  char* envp[] = {nullptr};

  const Clock::time_point start = Clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    if (opts.bridge) ::dup2(sv[1], 3);  // dup2 clears CLOEXEC on the copy
    ::execve(argv[0], argv.data(), envp);
    _exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(sv[1]);
  UniqueFd bridge(sv[0]);

  std::string out, err;
  std::thread out_reader([&] { out = ReadAllFrom(out_pipe[0]); });
  std::thread err_reader([&] { err = ReadAllFrom(err_pipe[0]); });

  // The fake airlock: reads frames until the program closes the socket.
  std::vector<Json> waiting;
  while (true) {
    StatusOr<std::string> payload = ReadFrame(bridge.get(), 2u << 20);
    if (!payload.ok()) break;
    Json frame = Json::parse(*payload, nullptr, false);
    if (frame.is_discarded() || !frame.is_object()) {
      run.bridge_error = "not JSON: " + *payload;
      continue;
    }
    if (frame.value("op", "") == "result" || frame.value("op", "") == "result_error") {
      run.finals.push_back(frame);
      continue;
    }
    run.requests.push_back(frame);
    waiting.push_back(frame);
    if (waiting.size() < opts.batch) continue;
    for (auto it = waiting.rbegin(); it != waiting.rend(); ++it) {
      std::optional<Json> reply = opts.responder(*it);
      if (reply) {
        EXPECT_TRUE(WriteJsonFrame(bridge.get(), *reply).ok());
      }
    }
    waiting.clear();
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  run.wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  out_reader.join();
  err_reader.join();
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  ::unlink(path);
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  run.out = out;
  run.err = err;
  return run;
}

class JsEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    struct stat st {};
    if (::stat(JsBinary().c_str(), &st) != 0) GTEST_SKIP() << "airlock-js not built (no mozjs-102)";
  }
};

#define EXPECT_RESULT(run, expected)                                             \
  do {                                                                           \
    EXPECT_EQ((run).exit_code, 0) << (run).err;                                  \
    ASSERT_EQ((run).finals.size(), 1u) << (run).err;                             \
    EXPECT_EQ((run).final_frame().value("op", ""), "result") << (run).final_frame(); \
    EXPECT_EQ((run).final_frame()["value"], (expected));                         \
  } while (0)

TEST_F(JsEngineTest, ReturnValue) {
  JsRun r = RunJs("return 1+1");
  EXPECT_RESULT(r, Json(2));
}

TEST_F(JsEngineTest, ValuesRoundTrip) {
  JsRun r = RunJs(R"(return {a: [1, "x", null, true, 2.5], s: "h\u00e9llo \u{1F600} \u2028", n: null, o: {}})");
  EXPECT_RESULT(r, Json::parse(R"({"a":[1,"x",null,true,2.5],"s":"héllo 😀 )" "\u2028" R"(","n":null,"o":{}})"));
  EXPECT_RESULT(RunJs("return null"), Json(nullptr));
  EXPECT_RESULT(RunJs("return 'str'"), Json("str"));
  EXPECT_RESULT(RunJs("return [[], [[]]]"), Json::parse("[[],[[]]]"));
  // undefined has no JSON form; it is reported as null.
  EXPECT_RESULT(RunJs("let x = 1;"), Json(nullptr));
}

TEST_F(JsEngineTest, LastExpressionIsTheValue) {
  EXPECT_RESULT(RunJs("1+2"), Json(3));
  EXPECT_RESULT(RunJs("let x = 4;\n  (x * 2)  // comment"), Json(8));
  EXPECT_RESULT(RunJs("const v = await Promise.resolve(5);\nv"), Json(5));
  EXPECT_RESULT(RunJs("({a: 1})"), Json::parse(R"({"a":1})"));
  EXPECT_RESULT(RunJs("if (true) { 5 }"), Json(nullptr));  // only an expression statement counts
}

TEST_F(JsEngineTest, ToolCallGetsTheReply) {
  RunOptions opts;
  opts.responder = [](const Json& req) -> std::optional<Json> {
    return Json{{"id", req["id"]}, {"ok", true}, {"result", {{"got", req["args"]}, {"tool", req["name"]}}}};
  };
  JsRun r = RunJs(R"(const out = await tools.call("a.b", {x: 1}); return out)", opts);
  EXPECT_RESULT(r, Json::parse(R"({"got":{"x":1},"tool":"a.b"})"));
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_EQ(r.requests[0], Json::parse(R"({"id":1,"op":"call","name":"a.b","args":{"x":1}})"));
}

TEST_F(JsEngineTest, SearchAndDescribeFrames) {
  JsRun r = RunJs(R"(
    await tools.search("weather", 5);
    await tools.search("all");
    await tools.describe("w.get");
    await tools.call("w.get");
    return "ok")");
  EXPECT_RESULT(r, Json("ok"));
  ASSERT_EQ(r.requests.size(), 4u);
  EXPECT_EQ(r.requests[0], Json::parse(R"({"id":1,"op":"search","query":"weather","limit":5})"));
  EXPECT_EQ(r.requests[1], Json::parse(R"({"id":2,"op":"search","query":"all"})"));
  EXPECT_EQ(r.requests[2], Json::parse(R"({"id":3,"op":"describe","name":"w.get"})"));
  EXPECT_EQ(r.requests[3], Json::parse(R"({"id":4,"op":"call","name":"w.get","args":{}})"));
}

TEST_F(JsEngineTest, SixteenConcurrentCallsAnsweredOutOfOrder) {
  RunOptions opts;
  opts.batch = 16;  // all 16 are in flight before any answer; answered last first
  opts.responder = [](const Json& req) -> std::optional<Json> {
    return Json{{"id", req["id"]}, {"ok", true}, {"result", req["args"]["i"].get<int>() * 10}};
  };
  JsRun r = RunJs(R"(
    const ps = [];
    for (let i = 0; i < 16; i++) ps.push(tools.call("t.x", {i}));
    return await Promise.all(ps))",
                  opts);
  Json expected = Json::array();
  for (int i = 0; i < 16; i++) expected.push_back(i * 10);
  EXPECT_RESULT(r, expected);
  EXPECT_EQ(r.requests.size(), 16u);
}

TEST_F(JsEngineTest, ToolErrorIsCatchable) {
  RunOptions opts;
  opts.responder = [](const Json& req) -> std::optional<Json> {
    return Json{{"id", req["id"]}, {"ok", false}, {"error", {{"code", "E_TOOL_FORBIDDEN"}, {"message", "nope"}}}};
  };
  JsRun r = RunJs(R"(
    try { await tools.call("x.y", {}); return "not thrown"; }
    catch (e) { return [e instanceof ToolError, e instanceof Error, e.name, e.code, e.message]; })",
                  opts);
  EXPECT_RESULT(r, Json::parse(R"([true,true,"ToolError","E_TOOL_FORBIDDEN","nope"])"));
}

TEST_F(JsEngineTest, InvalidArgumentsRejectLocally) {
  JsRun r = RunJs(R"(
    const codes = [];
    for (const f of [() => tools.call(5, {}), () => tools.call("a.b", [1]), () => tools.call("a.b", 7),
                     () => tools.search({}), () => tools.search("q", -1), () => tools.describe(),
                     () => tools.call("a.b", {big: 1n}), () => tools.call("a.b", {s: "x".repeat(3 << 20)})]) {
      try { await f(); codes.push("resolved"); } catch (e) { codes.push(e.code); }
    }
    return codes)");
  EXPECT_RESULT(r, Json::parse(R"(["E_INVALID_ARGS","E_INVALID_ARGS","E_INVALID_ARGS","E_INVALID_ARGS",
                                   "E_INVALID_ARGS","E_INVALID_ARGS","E_INVALID_ARGS","E_LIMIT_ARGS"])"));
  EXPECT_TRUE(r.requests.empty());
}

TEST_F(JsEngineTest, UncaughtErrorReportsUserLine) {
  JsRun r = RunJs("let a = 1;\nlet b = 2;\nthrow new TypeError('boom')");
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_EQ(r.finals.size(), 1u);
  const Json& f = r.final_frame();
  EXPECT_EQ(f["op"], "result_error");
  EXPECT_EQ(f["error"]["name"], "TypeError");
  EXPECT_EQ(f["error"]["message"], "boom");
  EXPECT_NE(f["error"]["stack"].get<std::string>().find("main.js:3:"), std::string::npos) << f;
  EXPECT_NE(r.err.find("Uncaught TypeError: boom"), std::string::npos) << r.err;
}

TEST_F(JsEngineTest, RejectionAfterAwaitIsUncaught) {
  JsRun r = RunJs("await null;\nfunction f() { throw new RangeError('late') }\nf()");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.final_frame()["error"]["name"], "RangeError");
  EXPECT_NE(r.final_frame()["error"]["stack"].get<std::string>().find("f@main.js:2:"), std::string::npos);
}

TEST_F(JsEngineTest, SyntaxError) {
  JsRun r = RunJs("let x = 1;\nlet = = 2;");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.final_frame()["op"], "result_error");
  EXPECT_EQ(r.final_frame()["error"]["name"], "SyntaxError");
}

TEST_F(JsEngineTest, InfiniteLoopHitsDeadline) {
  RunOptions opts;
  opts.flags = {"--deadline-ms", "300"};
  JsRun r = RunJs("while (true) {}", opts);
  EXPECT_EQ(r.exit_code, 124);
  EXPECT_EQ(r.final_frame()["error"]["name"], "E_LIMIT_WALLCLOCK");
  EXPECT_LT(r.wall_ms, 2000);
}

TEST_F(JsEngineTest, DeadlineWhileWaitingForATool) {
  RunOptions opts;
  opts.flags = {"--deadline-ms", "300"};
  opts.responder = [](const Json&) -> std::optional<Json> { return std::nullopt; };  // never answers
  JsRun r = RunJs("await tools.call('slow.tool', {})", opts);
  EXPECT_EQ(r.exit_code, 124);
  EXPECT_EQ(r.final_frame()["error"]["name"], "E_LIMIT_WALLCLOCK");
  EXPECT_LT(r.wall_ms, 2000);
}

TEST_F(JsEngineTest, CatchingTheDeadlineDoesNotHelp) {
  RunOptions opts;
  opts.flags = {"--deadline-ms", "300"};
  JsRun r = RunJs("for (;;) { try { while (true) {} } catch (e) {} }", opts);
  EXPECT_EQ(r.exit_code, 124);
}

TEST_F(JsEngineTest, HeapLimitIsOutOfMemory) {
  RunOptions opts;
  opts.flags = {"--heap-mb", "64"};
  for (const char* code : {"let a = []; while (true) a.push(new Array(1e6))",
                           "let a = []; while (true) a.push({x: 1, y: [1, 2, 3]})",
                           "let a = []; while (true) a.push(new Array(1e6).fill(1))",
                           "try { let a = []; while (true) a.push('x'.repeat(1e6) + Math.random()) } catch (e) {}\n"
                           "return 'survived'"}) {
    JsRun r = RunJs(code, opts);
    EXPECT_EQ(r.signal, 0) << code;
    EXPECT_EQ(r.exit_code, 3) << code << "\n" << r.err;
    EXPECT_EQ(r.final_frame()["error"]["name"], "E_LIMIT_MEMORY") << code;
  }
}

TEST_F(JsEngineTest, DeepRecursionIsInternalError) {
  JsRun r = RunJs("function r(n) { return r(n + 1) + 1 }\nr(0)");
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.final_frame()["error"]["name"], "InternalError");
  EXPECT_NE(r.final_frame()["error"]["message"].get<std::string>().find("recursion"), std::string::npos);
  EXPECT_LT(r.final_frame()["error"]["stack"].get<std::string>().size(), 8000u);  // trimmed
  // ... and it is catchable like in any engine.
  EXPECT_RESULT(RunJs("function r() { return r() }\nlet m;\ntry { r() } catch (e) { m = 'caught ' + e.name }\nm"),
                Json("caught InternalError"));
}

TEST_F(JsEngineTest, ValuesWithoutJsonForm) {
  for (const char* code : {"return () => 1", "return 10n", "const a = {}; a.self = a; return a", "Symbol('s')"}) {
    JsRun r = RunJs(code);
    EXPECT_EQ(r.exit_code, 1) << code;
    EXPECT_EQ(r.final_frame()["error"]["name"], "E_RESULT_NOT_JSON") << code;
  }
}

TEST_F(JsEngineTest, NeverSettled) {
  JsRun r = RunJs("await new Promise(() => {})");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.final_frame()["error"]["name"], "E_NEVER_SETTLED");
}

TEST_F(JsEngineTest, NoAmbientCapabilitiesTypeof) {
  JsRun r = RunJs(R"(
    return [typeof require, typeof process, typeof load, typeof os, typeof WebAssembly, typeof Deno,
            typeof fetch, typeof read, typeof readFile, typeof print, typeof evaluate, typeof Worker,
            typeof XMLHttpRequest, typeof snarf, typeof quit, typeof setTimeout, typeof Reflect.parse,
            typeof Components, typeof Debugger, typeof gc])");
  EXPECT_RESULT(r, Json(std::vector<std::string>(20, "undefined")));
  // Dynamic import has no loader behind it.
  JsRun imp = RunJs("await import('fs')");
  EXPECT_EQ(imp.exit_code, 1);
  EXPECT_EQ(imp.final_frame()["op"], "result_error");
}

TEST_F(JsEngineTest, WasmOnlyWithFlag) {
  EXPECT_RESULT(RunJs("typeof WebAssembly"), Json("undefined"));
  RunOptions opts;
  opts.flags = {"--enable-wasm"};
  EXPECT_RESULT(RunJs("typeof WebAssembly", opts), Json("object"));
}

TEST_F(JsEngineTest, FunctionConstructorGivesTheSameGlobal) {
  JsRun r = RunJs(R"(
    const g = globalThis.constructor.constructor("return this")();
    const h = (0, eval)("this");
    const names = Object.getOwnPropertyNames(g);
    return [g === globalThis, h === globalThis,
            names.filter(n => !/^[A-Z]/.test(n)).sort().join(",")])");
  EXPECT_RESULT(r, Json::parse(R"([true, true,
      "console,decodeURI,decodeURIComponent,encodeURI,encodeURIComponent,escape,eval,globalThis,isFinite,isNaN,parseFloat,parseInt,tools,undefined,unescape"])"));
}

TEST_F(JsEngineTest, ConsoleGoesToStdoutAndStderr) {
  JsRun r = RunJs(R"(
    console.log("hello", 1, {a: [1]}, null, undefined);
    console.info("info"); console.debug("debug");
    console.warn("warn"); console.error("error", new Error("e1"));
    const c = {}; c.c = c; console.log(c, 5n, Symbol("s"));
    return 0)");
  EXPECT_RESULT(r, Json(0));
  EXPECT_EQ(r.out, "hello 1 {\"a\":[1]} null undefined\ninfo\ndebug\n[object Object] 5 Symbol(s)\n");
  EXPECT_EQ(r.err.substr(0, 22), "warn\nerror Error: e1\n@") << r.err;
}

TEST_F(JsEngineTest, ConsoleOutputCap) {
  RunOptions opts;
  opts.flags = {"--max-console-bytes", "100"};
  JsRun r = RunJs("for (let i = 0; i < 1000; i++) console.log('0123456789');\n'done'", opts);
  EXPECT_RESULT(r, Json("done"));
  EXPECT_LT(r.out.size(), 200u);
  EXPECT_NE(r.out.find("console output truncated"), std::string::npos);
}

TEST_F(JsEngineTest, PrintedFramesNeverReachTheBridge) {
  // A well-formed frame (length prefix + JSON) printed to stdout and stderr.
  JsRun r = RunJs(R"(
    const body = '{"id":1,"op":"call","name":"evil.tool","args":{}}';
    const frame = String.fromCharCode(0, 0, 0, body.length) + body;
    console.log(frame); console.error(frame);
    return "printed")");
  EXPECT_RESULT(r, Json("printed"));
  EXPECT_TRUE(r.requests.empty());
  EXPECT_NE(r.out.find("evil.tool"), std::string::npos);
  EXPECT_TRUE(r.bridge_error.empty());
}

TEST_F(JsEngineTest, TamperingDoesNotBreakFraming) {
  RunOptions opts;
  opts.responder = [](const Json& req) -> std::optional<Json> {
    return Json{{"id", req["id"]}, {"ok", true}, {"result", {{"args", req["args"]}}}};
  };
  JsRun r = RunJs(R"(
    JSON.stringify = () => "x";
    JSON.parse = () => "y";
    Object.defineProperty(Object.prototype, "toJSON", {get() { throw new Error("getter") }, configurable: true});
    delete Object.prototype.toJSON;
    Object.prototype.op = "forged";
    Array.prototype.push = () => { throw new Error("no push") };
    tools.call = () => "replaced";
    globalThis.tools = null;
    ToolError = null;
    const out = await tools.call("a.b", {k: "v", n: [1, 2]});
    delete Object.prototype.op;
    return [out, Object.isFrozen(tools), typeof tools.call, typeof ToolError])",
                  opts);
  EXPECT_RESULT(r, Json::parse(R"([{"args":{"k":"v","n":[1,2]}}, true, "function", "function"])"));
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_EQ(r.requests[0], Json::parse(R"({"id":1,"op":"call","name":"a.b","args":{"k":"v","n":[1,2]}})"));
  EXPECT_TRUE(r.bridge_error.empty());
}

TEST_F(JsEngineTest, ThenOverrideDoesNotBreakTheHost) {
  JsRun r = RunJs(R"(
    Promise.prototype.then = function () { throw new Error("hijacked") };
    return 42)");
  // The user broke their own promises, but the host still reports cleanly.
  EXPECT_EQ(r.signal, 0);
  ASSERT_EQ(r.finals.size(), 1u) << r.err;
}

TEST_F(JsEngineTest, GarbledReplyEndsTheRun) {
  RunOptions opts;
  opts.responder = [](const Json& req) -> std::optional<Json> { return Json{{"id", 999}, {"ok", true}}; };
  JsRun r = RunJs("await tools.call('a.b', {})", opts);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.final_frame()["error"]["name"], "E_BRIDGE_PROTOCOL");
}

TEST_F(JsEngineTest, WithoutBridgeValueGoesToStdout) {
  RunOptions opts;
  opts.bridge = false;
  JsRun r = RunJs("console.log('line'); ({v: [1]})", opts);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "line\n{\"v\":[1]}\n");
  JsRun t = RunJs("typeof tools", opts);
  EXPECT_EQ(t.out, "\"undefined\"\n");
  JsRun u = RunJs("undefined", opts);
  EXPECT_EQ(u.out, "");
}

TEST_F(JsEngineTest, UsageErrors) {
  RunOptions opts;
  opts.bridge = false;
  opts.flags = {"--heap-mb", "nope"};
  EXPECT_EQ(RunJs("1", opts).exit_code, 2);
  opts.flags = {"--bridge-fd", "77"};  // not open
  EXPECT_EQ(RunJs("1", opts).exit_code, 2);
  opts.flags = {"--frobnicate"};
  EXPECT_EQ(RunJs("1", opts).exit_code, 2);
}

// airlock-js inside the real jail, under the default seccomp policy. The jail
// hides the host's /work and /tmp behind its own, so the binary is copied to a
// directory under /var/tmp that is bound read-only into the jail.
class JsJailTest : public JsEngineTest {
 protected:
  void SetUp() override {
    JsEngineTest::SetUp();
    if (IsSkipped()) return;
    char dir[] = "/var/tmp/airlock_js_jail_XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    ASSERT_EQ(::chmod(dir, 0755), 0);
    const std::string copy = "cp '" + JsBinary() + "' '" + dir_ + "/airlock-js'";
    ASSERT_EQ(std::system(copy.c_str()), 0);
  }
  void TearDown() override {
    if (!dir_.empty()) std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  jail::ExecResult RunInJail(const std::string& code, std::vector<std::string> flags) {
    auto host = tests::CreateJailHost();
    EXPECT_TRUE(host.ok()) << host.status().ToString();
    if (!host.ok()) return {};
    auto policy = jail::BuildDefaultPolicy();
    EXPECT_TRUE(policy.ok());
    if (!policy.ok()) return {};
    jail::JailConfig config;
    config.binds = {{dir_, false}};
    auto jail = jail::Jail::Create(**host, config);
    EXPECT_TRUE(jail.ok()) << jail.status().ToString();
    if (!jail.ok()) return {};
    jail::ExecRequest req;
    req.argv = {dir_ + "/airlock-js"};
    req.argv.insert(req.argv.end(), flags.begin(), flags.end());
    req.argv.push_back("main.js");
    req.files = {{"main.js", code}};
    req.seccomp = &*policy;
    req.limits.wall_ms = 10000;
    return (*jail)->Exec(req, nullptr);
  }

  std::string dir_;
};

TEST_F(JsJailTest, RunsUnderSeccomp) {
  jail::ExecResult r = RunInJail(
      "console.log(1+1);\n"
      "const o = []; for (let i = 0; i < 200000; i++) o.push({i, s: 'x' + i});\n"  // GC, JIT
      "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) }\n"
      "console.log(fib(25), new Date(0).toISOString(), (1234.5).toLocaleString('en-US'), /a+/.test('caab'));\n"
      "await Promise.all([1, 2].map(async x => x));\n"
      "o.length",
      {"--bridge-fd", "none", "--heap-mb", "128"});
  EXPECT_EQ(r.outcome, jail::ExecResult::Outcome::kExited) << r.error << r.stderr_data;
  EXPECT_EQ(r.exit_code, 0) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "2\n75025 1970-01-01T00:00:00.000Z 1,234.5 true\n200000\n") << r.stderr_data;
  EXPECT_EQ(r.stderr_data, "");  // no engine complaints (e.g. a syscall refused by seccomp)
}

TEST_F(JsJailTest, LimitsWorkUnderSeccomp) {
  jail::ExecResult loop = RunInJail("while (true) {}", {"--deadline-ms", "300"});
  EXPECT_EQ(loop.exit_code, 124) << loop.stderr_data;
  jail::ExecResult oom = RunInJail("let a = []; while (true) a.push(new Array(1e6).fill(1))", {"--heap-mb", "64"});
  EXPECT_EQ(oom.outcome, jail::ExecResult::Outcome::kExited) << oom.error << oom.stderr_data;
  EXPECT_EQ(oom.exit_code, 3) << oom.stderr_data;
  jail::ExecResult rec = RunInJail("function r() { return r() }\nr()", {});
  EXPECT_EQ(rec.exit_code, 1) << rec.stderr_data;
  EXPECT_NE(rec.stderr_data.find("InternalError"), std::string::npos) << rec.stderr_data;
}

}  // namespace
}  // namespace airlock
