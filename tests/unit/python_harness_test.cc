// Tests of the code-mode Python harness (src/runtimes/codemode/python_harness.py).
//
// Every test runs the embedded harness with the host's /usr/bin/python3,
// outside the jail, exactly as the jail would (`python3 -I -c <harness>
// main.py` in a fresh directory, empty environment) with one end of a
// socketpair as fd 3. The test plays airlock's side of the bridge: it reads
// request frames and answers them, possibly out of order or not at all.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/unique_fd.h"
#include "base/frame.h"
#include "runtimes/codemode/python_harness.h"

namespace airlock {
namespace {

using Json = nlohmann::json;

constexpr char kPython[] = "/usr/bin/python3";
constexpr size_t kMaxFrame = size_t{2} << 20;

// The fake airlock's answer to one request: a reply frame, or nullopt for
// none. `bridge` is the test's end of the socket (to misbehave on).
using Responder = std::function<std::optional<Json>(const Json& request, int bridge)>;

std::optional<Json> EchoResponder(const Json& req, int) {
  return Json{{"id", req.at("id")}, {"ok", true}, {"result", req}};
}

struct RunOptions {
  Responder responder = EchoResponder;
  size_t batch = 1;            // answer requests in groups of this many, last first
  bool bridge = true;          // give the program fd 3
  bool kill_on_final = false;  // SIGKILL the program as soon as its final frame arrives
};

struct PyRun {
  int exit_code = -1;
  int signal = 0;
  std::string out, err;
  std::vector<Json> requests;  // search/describe/call frames received
  std::vector<Json> finals;    // result / result_error frames received
  std::string bridge_error;    // a frame that was not a JSON object

  Json final_frame() const { return finals.empty() ? Json::object() : finals.back(); }
  // The final frame's "value" / "error" member (a string saying so if absent).
  Json value() const { return final_frame().value("value", Json("<no value>")); }
  Json error() const { return final_frame().value("error", Json::object()); }
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

// A private directory holding main.py, removed when the run is over.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/airlock_pyharness_XXXXXX";
    if (::mkdtemp(tmpl) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

PyRun RunPython(const std::string& code, RunOptions opts = {}) {
  PyRun run;
  TempDir dir;
  EXPECT_FALSE(dir.path().empty());
  std::ofstream(dir.path() + "/main.py", std::ios::binary) << code;

  int sv[2], out_pipe[2], err_pipe[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  EXPECT_EQ(::pipe2(out_pipe, O_CLOEXEC), 0);
  EXPECT_EQ(::pipe2(err_pipe, O_CLOEXEC), 0);
  UniqueFd bridge(sv[0]), child_end(sv[1]);
  UniqueFd out_read(out_pipe[0]), out_write(out_pipe[1]);
  UniqueFd err_read(err_pipe[0]), err_write(err_pipe[1]);
  // A hung harness must fail the test, not hang it.
  struct timeval tv = {20, 0};
  ::setsockopt(bridge.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);

  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> argv_s = {kPython, "-I", "-c", std::string(runtimes::PythonHarnessSource()), "main.py"};
  std::vector<char*> argv;
  for (std::string& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  char* envp[] = {nullptr};
  const char* cwd = dir.path().c_str();
  const int child_fd = child_end.get();
  const bool give_bridge = opts.bridge;

  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    if (!give_bridge) {
      ::close(3);
    } else if (child_fd == 3) {
      ::fcntl(3, F_SETFD, 0);  // dup2(3, 3) would keep CLOEXEC
    } else {
      ::dup2(child_fd, 3);  // the copy is not CLOEXEC
    }
    if (::chdir(cwd) != 0) _exit(126);
    ::execve(argv[0], argv.data(), envp);
    _exit(127);
  }
  EXPECT_GT(pid, 0);
  child_end.Reset();
  out_write.Reset();
  err_write.Reset();

  std::string out, err;
  std::thread out_reader([&] { out = ReadAllFrom(out_read.get()); });
  std::thread err_reader([&] { err = ReadAllFrom(err_read.get()); });

  // The fake airlock: reads frames until the program closes its end.
  std::vector<Json> waiting;
  while (true) {
    StatusOr<std::string> payload = ReadFrame(bridge.get(), kMaxFrame);
    if (!payload.ok()) break;
    Json frame = Json::parse(*payload, nullptr, false);
    if (frame.is_discarded() || !frame.is_object()) {
      run.bridge_error = "not a JSON object: " + payload->substr(0, 200);
      continue;
    }
    const std::string op = frame.value("op", "");
    if (op == "result" || op == "result_error") {
      run.finals.push_back(frame);
      if (opts.kill_on_final) ::kill(pid, SIGKILL);
      continue;
    }
    run.requests.push_back(frame);
    waiting.push_back(frame);
    if (waiting.size() < opts.batch) continue;
    for (auto it = waiting.rbegin(); it != waiting.rend(); ++it) {
      std::optional<Json> reply = opts.responder(*it, bridge.get());
      if (reply) {
        EXPECT_TRUE(WriteJsonFrame(bridge.get(), *reply, kMaxFrame).ok());
      }
    }
    waiting.clear();
  }

  int status = 0;
  for (int i = 0; i < 200 && ::waitpid(pid, &status, WNOHANG) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (i == 199) {
      ADD_FAILURE() << "the harness did not exit";
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
  }
  out_reader.join();
  err_reader.join();
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  run.out = std::move(out);
  run.err = std::move(err);
  return run;
}

class PythonHarnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is not installed";
  }
};

#define EXPECT_RESULT(run, expected)                                                   \
  do {                                                                                 \
    const PyRun& r_ = (run);                                                           \
    EXPECT_EQ(r_.exit_code, 0) << r_.err;                                              \
    ASSERT_EQ(r_.finals.size(), 1u) << r_.err;                                         \
    EXPECT_EQ(r_.final_frame().value("op", ""), "result") << r_.final_frame();         \
    EXPECT_EQ(r_.value(), (expected)) << r_.err;                                     \
    EXPECT_EQ(r_.bridge_error, "");                                                    \
  } while (0)

#define EXPECT_RESULT_ERROR(run, name)                                                 \
  do {                                                                                 \
    const PyRun& r_ = (run);                                                           \
    EXPECT_EQ(r_.exit_code, 1) << r_.err;                                              \
    ASSERT_EQ(r_.finals.size(), 1u) << r_.err;                                         \
    EXPECT_EQ(r_.final_frame().value("op", ""), "result_error") << r_.final_frame();   \
    EXPECT_EQ(r_.error().value("name", ""), (name)) << r_.final_frame(); \
  } while (0)

TEST_F(PythonHarnessTest, EmbeddedSourceFitsInOneArgvString) {
  std::string_view src = runtimes::PythonHarnessSource();
  EXPECT_GT(src.size(), 1000u);
  EXPECT_LT(src.size(), 128u * 1024);
  EXPECT_EQ(src.find('\0'), std::string_view::npos);
}

TEST_F(PythonHarnessTest, SyncCallRoundTrip) {
  PyRun r = RunPython("v = tools.call('conn.echo', {'x': [1, 'h\\u00e9', None, 2.5]})\nv");
  ASSERT_EQ(r.requests.size(), 1u);
  Json expected = Json::parse(R"({"id":1,"op":"call","name":"conn.echo","args":{"x":[1,"hé",null,2.5]}})");
  EXPECT_EQ(r.requests[0], expected);
  EXPECT_RESULT(r, expected);
}

TEST_F(PythonHarnessTest, SearchAndDescribeFrames) {
  PyRun r = RunPython(
      "a = tools.search('weather', 5)\n"
      "b = tools.search('x')\n"
      "c = tools.describe('conn.tool')\n"
      "d = tools.call('conn.tool')\n"
      "[a['op'], b['op'], c['op'], d['args']]");
  ASSERT_EQ(r.requests.size(), 4u);
  EXPECT_EQ(r.requests[0], Json::parse(R"({"id":1,"op":"search","query":"weather","limit":5})"));
  EXPECT_EQ(r.requests[1], Json::parse(R"({"id":2,"op":"search","query":"x"})"));
  EXPECT_EQ(r.requests[2], Json::parse(R"({"id":3,"op":"describe","name":"conn.tool"})"));
  EXPECT_EQ(r.requests[3], Json::parse(R"({"id":4,"op":"call","name":"conn.tool","args":{}})"));
  EXPECT_RESULT(r, Json::parse(R"(["search","search","describe",{}])"));
}

TEST_F(PythonHarnessTest, GatherOfTenAnsweredOutOfOrder) {
  RunOptions opts;
  opts.batch = 10;  // all ten arrive before any reply; replies go last first
  opts.responder = [](const Json& req, int) -> std::optional<Json> {
    const int i = req.at("args").at("i").get<int>();
    return Json{{"id", req.at("id")}, {"ok", true}, {"result", {{"square", i * i}}}};
  };
  PyRun r = RunPython(
      "import asyncio\n"
      "vals = await asyncio.gather(*[tools.acall('m.square', {'i': i}) for i in range(10)])\n"
      "[v['square'] for v in vals]",
      opts);
  EXPECT_EQ(r.requests.size(), 10u);
  EXPECT_RESULT(r, Json::parse("[0,1,4,9,16,25,36,49,64,81]"));
}

TEST_F(PythonHarnessTest, SyncCallsFromThreadsAnsweredOutOfOrder) {
  RunOptions opts;
  opts.batch = 4;
  PyRun r = RunPython(
      "import threading\n"
      "out = [None] * 4\n"
      "def work(i):\n"
      "    out[i] = tools.call('t', {'i': i})['args']['i']\n"
      "ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]\n"
      "for t in ts: t.start()\n"
      "for t in ts: t.join()\n"
      "out",
      opts);
  EXPECT_RESULT(r, Json::parse("[0,1,2,3]"));
}

TEST_F(PythonHarnessTest, ToolErrorIsCatchable) {
  RunOptions opts;
  opts.responder = [](const Json& req, int) -> std::optional<Json> {
    return Json{{"id", req.at("id")}, {"ok", false}, {"error", {{"code", "E_LIMIT_CALLS"}, {"message", "too many calls"}}}};
  };
  PyRun r = RunPython(
      "out = []\n"
      "try:\n"
      "    tools.call('a.b', {})\n"
      "except ToolError as e:\n"
      "    out += [e.code, e.message, str(e), isinstance(e, Exception)]\n"
      "try:\n"
      "    await tools.adescribe('a.b')\n"
      "except ToolError as e:\n"
      "    out += [e.code, str(e)]\n"
      "out",
      opts);
  EXPECT_RESULT(r, Json::parse(R"(["E_LIMIT_CALLS","too many calls","too many calls",true,"E_LIMIT_CALLS","too many calls"])"));
}

TEST_F(PythonHarnessTest, ErrorReplyWithoutCodeIsToolError) {
  RunOptions opts;
  opts.responder = [](const Json& req, int) -> std::optional<Json> {
    return Json{{"id", req.at("id")}, {"ok", false}};
  };
  PyRun r = RunPython("try:\n    tools.call('a.b')\nexcept ToolError as e:\n    result = [e.code, e.message]", opts);
  EXPECT_RESULT(r, Json::parse(R"(["E_TOOL_ERROR",""])"));
}

TEST_F(PythonHarnessTest, LastExpressionIsTheValue) {
  EXPECT_RESULT(RunPython("1 + 2"), Json(3));
  EXPECT_RESULT(RunPython("x = 4\n(x * 2)  # comment\n"), Json(8));
  EXPECT_RESULT(RunPython("{'a': [1, (2, 3)], 'b': 'h\\u00e9llo \\U0001F600'}"),
                Json::parse(R"({"a":[1,[2,3]],"b":"héllo 😀"})"));
  EXPECT_RESULT(RunPython("if True:\n    5\n"), Json(nullptr));  // only a top-level expression counts
  EXPECT_RESULT(RunPython("'\\ud800'"), Json("\xEF\xBF\xBD"));      // a lone surrogate becomes U+FFFD
}

TEST_F(PythonHarnessTest, ResultVariableWins) {
  EXPECT_RESULT(RunPython("result = {'a': 1}\n42"), Json::parse(R"({"a":1})"));
  EXPECT_RESULT(RunPython("def f():\n    global result\n    result = 'set'\nf()"), Json("set"));
}

TEST_F(PythonHarnessTest, TopLevelAwait) {
  PyRun r = RunPython(
      "import asyncio\n"
      "await asyncio.sleep(0)\n"
      "v = await tools.acall('a.b', {'k': 2})\n"
      "s = await tools.asearch('q', limit=3)\n"
      "[v['args'], s['limit']]");
  EXPECT_RESULT(r, Json::parse(R"([{"k":2},3])"));
}

TEST_F(PythonHarnessTest, NoValueIsNull) {
  EXPECT_RESULT(RunPython("x = 1"), Json(nullptr));
  EXPECT_RESULT(RunPython("None"), Json(nullptr));
  EXPECT_RESULT(RunPython(""), Json(nullptr));
  EXPECT_RESULT(RunPython("print('printed')"), Json(nullptr));
}

TEST_F(PythonHarnessTest, ValueWithoutJsonForm) {
  PyRun r = RunPython("{1, 2}");
  EXPECT_RESULT_ERROR(r, "E_RESULT_NOT_JSON");
  EXPECT_NE(r.error().value("message", "").find("set"), std::string::npos) << r.final_frame();
  EXPECT_RESULT_ERROR(RunPython("float('nan')"), "E_RESULT_NOT_JSON");
  EXPECT_RESULT_ERROR(RunPython("a = []\na.append(a)\nresult = a"), "E_RESULT_NOT_JSON");
}

TEST_F(PythonHarnessTest, ValueOverTheFrameLimit) {
  EXPECT_RESULT_ERROR(RunPython("'x' * (2 << 20)"), "E_LIMIT_RESULT");
}

TEST_F(PythonHarnessTest, UncaughtExceptionIsResultError) {
  PyRun r = RunPython("x = 1\ndef f():\n    raise ValueError('boom')\nf()\n");
  EXPECT_RESULT_ERROR(r, "ValueError");
  const Json error = r.error();
  EXPECT_EQ(error.value("message", ""), "boom");
  const std::string stack = error.value("stack", "");
  EXPECT_NE(stack.find("main.py\", line 3, in f"), std::string::npos) << stack;
  EXPECT_NE(stack.find("main.py\", line 4, in <module>"), std::string::npos) << stack;
  EXPECT_EQ(stack.find("<string>"), std::string::npos) << stack;  // no harness frames
  EXPECT_NE(r.err.find("ValueError: boom"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Traceback (most recent call last)"), std::string::npos) << r.err;
}

TEST_F(PythonHarnessTest, UncaughtToolErrorAndAsyncException) {
  RunOptions opts;
  opts.responder = [](const Json& req, int) -> std::optional<Json> {
    return Json{{"id", req.at("id")}, {"ok", false}, {"error", {{"code", "E_TOOL_ERROR"}, {"message", "downstream failed"}}}};
  };
  PyRun r = RunPython("tools.call('a.b')", opts);
  EXPECT_RESULT_ERROR(r, "ToolError");
  EXPECT_EQ(r.error().value("message", ""), "downstream failed");
  EXPECT_EQ(r.error().value("stack", "").find("<string>"), std::string::npos) << r.final_frame();

  PyRun a = RunPython("async def f():\n    raise KeyError('k')\nawait f()\n");
  EXPECT_RESULT_ERROR(a, "KeyError");
  EXPECT_NE(a.error().value("stack", "").find("line 2, in f"), std::string::npos) << a.final_frame();
}

TEST_F(PythonHarnessTest, SyntaxError) {
  PyRun r = RunPython("x = 1\ny = (\n");
  EXPECT_RESULT_ERROR(r, "SyntaxError");
  EXPECT_NE(r.err.find("SyntaxError"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("<string>"), std::string::npos) << r.err;
  EXPECT_TRUE(r.requests.empty());
  // `await` inside a plain function is a compile-time error too.
  EXPECT_RESULT_ERROR(RunPython("def f():\n    await g()\n"), "SyntaxError");
}

TEST_F(PythonHarnessTest, SystemExit) {
  PyRun r = RunPython("import sys\nresult = 5\nprint('bye')\nsys.exit(3)\n");
  EXPECT_EQ(r.exit_code, 3);
  ASSERT_EQ(r.finals.size(), 1u);
  EXPECT_EQ(r.final_frame(), Json::parse(R"({"op":"result","value":5})"));
  EXPECT_EQ(r.out, "bye\n");
  EXPECT_RESULT(RunPython("import sys\nsys.exit()\n42"), Json(nullptr));
}

TEST_F(PythonHarnessTest, PrintedFramesNeverReachTheBridge) {
  PyRun r = RunPython(
      "import sys\n"
      "print('\\x00\\x00\\x00\\x10{\"op\":\"result\"}', end='')\n"
      "sys.stdout.flush()\n"
      "print('to stderr', file=sys.stderr)\n"
      "7");
  EXPECT_RESULT(r, Json(7));
  EXPECT_TRUE(r.requests.empty());
  EXPECT_EQ(r.out, std::string("\0\0\0\x10{\"op\":\"result\"}", 19));
  EXPECT_EQ(r.err, "to stderr\n");
}

TEST_F(PythonHarnessTest, OutputIsFlushedBeforeTheFinalFrame) {
  RunOptions opts;
  opts.kill_on_final = true;  // like a server that stops the run at once
  PyRun r = RunPython("print('buffered line')\nimport sys\nsys.stderr.write('err line')\n1", opts);
  ASSERT_EQ(r.finals.size(), 1u);
  EXPECT_EQ(r.out, "buffered line\n");
  EXPECT_EQ(r.err, "err line");
}

TEST_F(PythonHarnessTest, InvalidArgumentsRejectLocally) {
  PyRun r = RunPython(
      "codes = []\n"
      "def check(f, *a):\n"
      "    try:\n"
      "        f(*a)\n"
      "        codes.append('sent')\n"
      "    except ToolError as e:\n"
      "        codes.append(e.code)\n"
      "check(tools.call, 1)\n"
      "check(tools.call, 'a', [1])\n"
      "check(tools.call, 'a', 'x')\n"
      "check(tools.call, 'a', {'x': object()})\n"
      "check(tools.call, 'a', {'x': float('nan')})\n"
      "check(tools.search, 5)\n"
      "check(tools.search, 'q', 0)\n"
      "check(tools.search, 'q', True)\n"
      "check(tools.search, 'q', 2.5)\n"
      "check(tools.describe, None)\n"
      "try:\n"
      "    await tools.acall(2)\n"
      "except ToolError as e:\n"
      "    codes.append(e.code)\n"
      "codes");
  EXPECT_TRUE(r.requests.empty()) << r.requests.size();
  EXPECT_RESULT(r, Json(std::vector<std::string>(11, "E_INVALID_ARGS")));
}

TEST_F(PythonHarnessTest, OversizeRequestRefusedLocally) {
  RunOptions opts;
  opts.responder = [](const Json& req, int) -> std::optional<Json> {
    return Json{{"id", req.at("id")}, {"ok", true}, {"result", req.at("args").at("s").get<std::string>().size()}};
  };
  // {"id":1,"op":"call","name":"a","args":{"s":"..."}} is 47 bytes around s.
  PyRun r = RunPython(
      "n = (2 << 20) - 47\n"
      "out = [tools.call('a', {'s': 'x' * n})]\n"
      "for s in ('y' * (n + 1), '\\u00e9' * (n // 2 + 1)):\n"  // bytes, not characters, count
      "    try:\n"
      "        tools.call('a', {'s': s})\n"
      "        out.append('sent')\n"
      "    except ToolError as e:\n"
      "        out.append(e.code)\n"
      "out",
      opts);
  EXPECT_EQ(r.requests.size(), 1u);
  EXPECT_RESULT(r, Json::parse(R"([2097105,"E_LIMIT_ARGS","E_LIMIT_ARGS"])"));
}

TEST_F(PythonHarnessTest, BridgeEofMidCall) {
  RunOptions opts;
  opts.responder = [](const Json&, int bridge) -> std::optional<Json> {
    ::shutdown(bridge, SHUT_WR);  // airlock goes away without answering
    return std::nullopt;
  };
  PyRun r = RunPython(
      "out = []\n"
      "for i in range(2):\n"
      "    try:\n"
      "        tools.call('a.b')\n"
      "    except ToolError as e:\n"
      "        out.append(e.code)\n"
      "try:\n"
      "    await tools.acall('a.b')\n"
      "except ToolError as e:\n"
      "    out.append(e.code)\n"
      "out",
      opts);
  EXPECT_EQ(r.requests.size(), 1u);  // the later calls fail without sending
  EXPECT_RESULT(r, Json::parse(R"(["E_BRIDGE_PROTOCOL","E_BRIDGE_PROTOCOL","E_BRIDGE_PROTOCOL"])"));
}

TEST_F(PythonHarnessTest, BadReplyBreaksTheBridge) {
  for (const char* bad : {"not json", R"({"id":99,"ok":true})", R"({"id":1,"ok":"yes"})", "[1]"}) {
    RunOptions opts;
    opts.responder = [bad](const Json&, int bridge) -> std::optional<Json> {
      EXPECT_TRUE(WriteFrame(bridge, bad).ok());
      return std::nullopt;
    };
    PyRun r = RunPython("try:\n    tools.call('a.b')\nexcept ToolError as e:\n    result = e.code", opts);
    EXPECT_RESULT(r, Json("E_BRIDGE_PROTOCOL"));
  }
}

TEST_F(PythonHarnessTest, ProgramGlobalsAreClean) {
  PyRun r = RunPython(
      "import sys\n"
      "try:\n"
      "    tools.extra = 1\n"
      "    settable = True\n"
      "except AttributeError:\n"
      "    settable = False\n"
      "[sorted(k for k in globals() if not k.startswith('__')), __name__, sys.argv,\n"
      " sys.modules['__main__'].__dict__ is globals(), __file__.endswith('/main.py'), settable]");
  EXPECT_RESULT(r, Json::parse(R"([["ToolError","settable","sys","tools"],"__main__",["main.py"],true,true,false])"));
}

TEST_F(PythonHarnessTest, ChildProcessesDoNotInheritTheBridge) {
  PyRun r = RunPython(
      "import subprocess\n"
      "_ = subprocess.run(['/bin/sh', '-c', 'if [ -e /proc/self/fd/3 ]; then echo open; else echo closed; fi'],\n"
      "                   close_fds=False)\n");
  EXPECT_RESULT(r, Json(nullptr));
  EXPECT_EQ(r.out, "closed\n");
}

TEST_F(PythonHarnessTest, NoBridgeIsAUsageError) {
  RunOptions opts;
  opts.bridge = false;
  PyRun r = RunPython("1", opts);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.finals.empty());
  EXPECT_NE(r.err.find("fd 3"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace airlock
