// Code mode end to end: the limits of one run (research codemode.md §6.4
// L1–L12 and §6.1 A12) and the ambient capabilities a program must not have
// (§6.2 D1–D9, D16, D17), in JavaScript AND Python wherever a case applies to
// both. Every test runs `execute` exactly as the MCP server does: a real
// program in the jail, real downstream MCP servers behind the gateway
// (codemode_fixture.h lists the connectors; `test` is test-server.mjs).
//
//   build-x/airlock_tests --gtest_filter='*CodeModeLimits*:*CodeModeAmbient*'
//
// Suites: CodeModeLimits (value-parameterized by language), CodeModeLimitsOne
// (cases that exist in one language only) and CodeModeAmbient (what the
// program can reach besides `tools`). Limits are lowered through the caller's
// `limits` argument where the semantics do not depend on the number, so the
// runs stay short; the args (256 KiB), result (1 MiB) and tool-result limits
// are also checked at their real defaults. Sizes are those of the compact
// JSON airlock measures: {"text":"<n bytes>"} is n + 11 bytes, a string value
// "<n bytes>" is n + 2.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/unique_fd.h"
#include "codemode_fixture.h"

namespace airlock::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// A short wall clock for the runs that are meant to hit it.
constexpr uint64_t kShortWallMs = 1500;
// How much later than wall_ms such a run may come back: the jail's backstop
// fires 0.5 s after the engine's deadline, then teardown, on a loaded machine.
constexpr int64_t kWallSlackMs = 2500;

int64_t MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - t).count();
}

// Polls `done` every 20 ms for up to `budget`.
bool WaitUntil(const std::function<bool()>& done, milliseconds budget) {
  const Clock::time_point end = Clock::now() + budget;
  while (true) {
    if (done()) return true;
    if (Clock::now() >= end) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
}

// The calls.log entries of a run.
json Log(const ExecOutcome& r) { return r.sc.value("calls", json::object()).value("log", json::array()); }
uint32_t CallsTotal(const ExecOutcome& r) { return r.sc.value("calls", json::object()).value("total", 0u); }
uint32_t CallsDenied(const ExecOutcome& r) { return r.sc.value("calls", json::object()).value("denied", 0u); }

json Limits(const json& limits) { return {{"limits", limits}}; }
json ShortWall() { return Limits({{"wall_ms", kShortWallMs}}); }

std::string LangName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

class CodeModeLimitsBase : public CodeModeTest {
 protected:
  // One counter of test-server.mjs's `stats` tool (cancelled_count,
  // started_slow, calls); -1 if the call failed. Callable from any thread.
  static int64_t Stat(const std::string& key) {
    gateway::CallOutcome out = gateway().CallTool("test.stats", json::object(), nullptr, milliseconds(10000));
    if (!out.ok || !out.value.is_object()) return -1;
    return out.value.value(key, int64_t{-1});
  }
  // Waits until the counter reaches `at_least`; returns its last value.
  static int64_t WaitForStat(const std::string& key, int64_t at_least, milliseconds budget) {
    int64_t v = -1;
    WaitUntil([&] { return (v = Stat(key)) >= at_least; }, budget);
    return v;
  }
};

// Value-parameterized by language: each test has one program per language.
class CodeModeLimits : public CodeModeLimitsBase, public ::testing::WithParamInterface<std::string> {
 protected:
  static bool js() { return GetParam() == "javascript"; }
  static ExecOutcome Run(const std::string& js_code, const std::string& py_code, const json& extra = json::object(),
                         const codemode::Limits& admin = {}, TestCallContext* ctx = nullptr) {
    return Execute(GetParam(), js() ? js_code : py_code, extra, admin, ctx);
  }
};

class CodeModeLimitsOne : public CodeModeLimitsBase {};
class CodeModeAmbient : public CodeModeLimitsBase {};

// ---------------------------------------------------------------- L1, L2: wall clock

// L2: a loop that never yields is stopped from outside the program.
TEST_P(CodeModeLimits, BusyLoopEndsWithWallClock) {
  REQUIRE_CODE_MODE();
  const Clock::time_point t0 = Clock::now();
  ExecOutcome r = Run("while (true) {}", "while True:\n    pass\n", ShortWall());
  const int64_t elapsed = MsSince(t0);
  EXPECT_FALSE(r.ok()) << r.text;
  EXPECT_TRUE(r.is_error());
  EXPECT_EQ(r.error_code(), "E_LIMIT_WALLCLOCK") << r.text;
  EXPECT_GE(elapsed, static_cast<int64_t>(kShortWallMs) - 100);
  EXPECT_LT(elapsed, static_cast<int64_t>(kShortWallMs) + kWallSlackMs);
  EXPECT_EQ(r.sc["limits"]["wall_ms"], kShortWallMs);
}

// L1: a tool still running at the deadline: the call fails with
// E_LIMIT_WALLCLOCK (catchable) and the downstream request is cancelled.
TEST_P(CodeModeLimits, SlowToolPastWallClockIsCatchableAndCancelledDownstream) {
  REQUIRE_CODE_MODE();
  const int64_t started0 = Stat("started_slow"), cancelled0 = Stat("cancelled_count");
  ASSERT_GE(started0, 0);
  const Clock::time_point t0 = Clock::now();
  ExecOutcome r = Run(R"JS(
    try { await tools.call("test.slow", {ms: 60000}); return "finished" }
    catch (e) { return [e instanceof ToolError, e.code] })JS",
                      R"PY(
try:
    tools.call("test.slow", {"ms": 60000})
    result = "finished"
except ToolError as e:
    result = [isinstance(e, ToolError), e.code]
)PY",
                      ShortWall());
  const int64_t elapsed = MsSince(t0);
  EXPECT_LT(elapsed, static_cast<int64_t>(kShortWallMs) + kWallSlackMs);
  // The program catches the call's E_LIMIT_WALLCLOCK and returns at once; its
  // own deadline (started a little later than the run's) may still win.
  ASSERT_EQ(Log(r).size(), 1u) << r.sc.dump();
  EXPECT_EQ(Log(r)[0]["name"], "test.slow");
  if (r.ok()) {
    EXPECT_EQ(r.result(), json::parse(R"([true, "E_LIMIT_WALLCLOCK"])"));
    EXPECT_EQ(Log(r)[0]["error_code"], "E_LIMIT_WALLCLOCK");
  } else {
    EXPECT_EQ(r.error_code(), "E_LIMIT_WALLCLOCK") << r.text;
  }
  EXPECT_EQ(Stat("started_slow"), started0 + 1);
  EXPECT_EQ(WaitForStat("cancelled_count", cancelled0 + 1, milliseconds(3000)), cancelled0 + 1);
}

// L1: the same, uncaught: the run ends with the ToolError's code (execute_tool.cc
// keeps an uncaught ToolError's E_ code; `name` stays "ToolError").
TEST_P(CodeModeLimits, SlowToolPastWallClockUncaughtEndsWithWallClock) {
  REQUIRE_CODE_MODE();
  const int64_t cancelled0 = Stat("cancelled_count");
  const Clock::time_point t0 = Clock::now();
  ExecOutcome r = Run(R"JS(await tools.call("test.slow", {ms: 60000}); return "finished")JS",
                      "tools.call('test.slow', {'ms': 60000})\nresult = 'finished'\n", ShortWall());
  EXPECT_LT(MsSince(t0), static_cast<int64_t>(kShortWallMs) + kWallSlackMs);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_code(), "E_LIMIT_WALLCLOCK") << r.text;
  EXPECT_EQ(r.sc["error"].value("name", ""), "ToolError");
  EXPECT_EQ(WaitForStat("cancelled_count", cancelled0 + 1, milliseconds(3000)), cancelled0 + 1);
}

// L1 (JavaScript): awaiting a promise nothing can settle is reported at once
// as E_NEVER_SETTLED (js_main.cc) instead of idling until the deadline.
TEST_F(CodeModeLimitsOne, JsPromiseThatCanNeverSettle) {
  REQUIRE_CODE_MODE();
  const Clock::time_point t0 = Clock::now();
  ExecOutcome r = Execute("javascript", "await new Promise(() => {}); return 1", ShortWall());
  const int64_t elapsed = MsSince(t0);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_code(), "E_NEVER_SETTLED") << r.text;
  EXPECT_EQ(r.error_message(),
            "the program is waiting for a promise that nothing can settle (no tool call is pending)");
  EXPECT_LT(elapsed, static_cast<int64_t>(kShortWallMs));
}

// L1 (JavaScript): a call the program abandoned keeps it alive until the
// deadline; the run is then a wall-clock failure, not E_NEVER_SETTLED.
TEST_F(CodeModeLimitsOne, JsAbandonedCallThenWaitingForeverIsWallClock) {
  REQUIRE_CODE_MODE();
  const Clock::time_point t0 = Clock::now();
  ExecOutcome r = Execute("javascript",
                          "tools.call('test.slow', {ms: 60000}).catch(() => {});\n"
                          "await new Promise(() => {}); return 1",
                          ShortWall());
  const int64_t elapsed = MsSince(t0);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_code(), "E_LIMIT_WALLCLOCK") << r.text;
  EXPECT_GE(elapsed, static_cast<int64_t>(kShortWallMs) - 100);
  EXPECT_LT(elapsed, static_cast<int64_t>(kShortWallMs) + kWallSlackMs);
}

// L1 (Python): a blocking sleep past the deadline.
TEST_F(CodeModeLimitsOne, PythonSleepPastWallClock) {
  REQUIRE_CODE_MODE();
  const Clock::time_point t0 = Clock::now();
  ExecOutcome r = Execute("python", "import time\ntime.sleep(100)\nresult = 'woke'\n", ShortWall());
  const int64_t elapsed = MsSince(t0);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_code(), "E_LIMIT_WALLCLOCK") << r.text;
  EXPECT_GE(elapsed, static_cast<int64_t>(kShortWallMs) - 100);
  EXPECT_LT(elapsed, static_cast<int64_t>(kShortWallMs) + kWallSlackMs);
}

// A12: the MCP client cancels while the program awaits a slow call: the run
// ends quickly with E_CANCELLED and the downstream call is cancelled.
TEST_P(CodeModeLimits, ClientCancelEndsRunAndCancelsDownstream) {
  REQUIRE_CODE_MODE();
  const int64_t started0 = Stat("started_slow"), cancelled0 = Stat("cancelled_count");
  ASSERT_GE(started0, 0);
  TestCallContext ctx;
  std::atomic<bool> saw_start{false};
  Clock::time_point fired_at;
  std::thread canceller([&] {
    saw_start = WaitUntil([&] { return Stat("started_slow") > started0; }, milliseconds(15000));
    fired_at = Clock::now();
    ctx.cancel().Cancel();
  });
  ExecOutcome r = Run(R"JS(await tools.call("test.slow", {ms: 30000}); return "finished")JS",
                      "tools.call('test.slow', {'ms': 30000})\nresult = 'finished'\n", json::object(), {}, &ctx);
  const Clock::time_point returned = Clock::now();
  canceller.join();
  ASSERT_TRUE(saw_start) << "the slow call never reached the server: " << r.text;
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_code(), "E_CANCELLED") << r.text;
  EXPECT_LT(std::chrono::duration_cast<milliseconds>(returned - fired_at).count(), 2000);
  EXPECT_EQ(WaitForStat("cancelled_count", cancelled0 + 1, milliseconds(3000)), cancelled0 + 1);
}

// ---------------------------------------------------------------- L3: max_calls

// Search, describe and call all count, allowed or denied. Ten requests with
// max_calls 10: the last allowed one still works.
constexpr char kTenRequestsJs[] = R"JS(
  const out = [];
  out.push((await tools.search("echo")).tools.length > 0);
  out.push((await tools.describe("test.echo")).name);
  try { await tools.call("test.no_such_tool", {}) } catch (e) { out.push(e.code) }
  for (let i = 0; i < 7; i++) out.push(await tools.call("test.echo", {text: "t" + i}));
)JS";
constexpr char kTenRequestsPy[] = R"PY(
out = []
out.append(len(tools.search("echo")["tools"]) > 0)
out.append(tools.describe("test.echo")["name"])
try:
    tools.call("test.no_such_tool", {})
except ToolError as e:
    out.append(e.code)
for i in range(7):
    out.append(tools.call("test.echo", {"text": "t%d" % i}))
)PY";
const json kTenRequestsResult =
    json::parse(R"([true, "test.echo", "E_TOOL_NOT_DECLARED", "t0", "t1", "t2", "t3", "t4", "t5", "t6"])");

TEST_P(CodeModeLimits, MaxCallsAtTheLimit) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run(std::string(kTenRequestsJs) + "return out", std::string(kTenRequestsPy) + "result = out\n",
                      Limits({{"max_calls", 10}}));
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result(), kTenRequestsResult);
  EXPECT_EQ(CallsTotal(r), 10u);
  EXPECT_EQ(CallsDenied(r), 1u);
}

TEST_P(CodeModeLimits, MaxCallsOverTheLimitKeepsFailingCatchably) {
  REQUIRE_CODE_MODE();
  const int64_t calls0 = Stat("calls");
  ExecOutcome r = Run(std::string(kTenRequestsJs) + R"JS(
    const over = [];
    const attempts = [() => tools.call("test.echo", {text: "11"}), () => tools.search("echo"),
                      () => tools.describe("test.echo"), () => tools.call("test.echo", {text: "14"})];
    for (const f of attempts) { try { await f(); over.push("ok") } catch (e) { over.push(e.code) } }
    return [out, over])JS",
                      std::string(kTenRequestsPy) + R"PY(
over = []
for f in (lambda: tools.call("test.echo", {"text": "11"}), lambda: tools.search("echo"),
          lambda: tools.describe("test.echo"), lambda: tools.call("test.echo", {"text": "14"})):
    try:
        f()
        over.append("ok")
    except ToolError as e:
        over.append(e.code)
result = [out, over]
)PY",
                      Limits({{"max_calls", 10}}));
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result()[0], kTenRequestsResult);
  EXPECT_EQ(r.result()[1], json::parse(R"(["E_LIMIT_CALLS", "E_LIMIT_CALLS", "E_LIMIT_CALLS", "E_LIMIT_CALLS"])"));
  EXPECT_EQ(CallsTotal(r), 14u);
  EXPECT_EQ(CallsDenied(r), 5u);
  json log = Log(r);
  ASSERT_EQ(log.size(), 14u);
  for (size_t i = 10; i < 14; ++i) {
    EXPECT_EQ(log[i]["decision"], "denied") << log[i];
    EXPECT_EQ(log[i]["error_code"], "E_LIMIT_CALLS") << log[i];
  }
  // Only the seven allowed echo calls reached the server (+1: this stats call).
  EXPECT_EQ(Stat("calls"), calls0 + 7 + 1);
}

// ---------------------------------------------------------------- L4: max_concurrent

// Runs `n` calls of test.slow {ms} at once and returns when each finished
// (ms since they were issued), in completion order.
std::string ConcurrentSlowJs(int n, int ms) {
  return "const t0 = Date.now(); const done = [];\n"
         "const rs = await Promise.all(Array.from({length: " + std::to_string(n) +
         "}, () => tools.call('test.slow', {ms: " + std::to_string(ms) +
         "}).then(v => { done.push(Date.now() - t0); return v })));\n"
         "return [rs, done]";
}
std::string ConcurrentSlowPy(int n, int ms) {
  return "import asyncio, time\n"
         "t0 = time.monotonic()\n"
         "done = []\n"
         "async def one():\n"
         "    v = await tools.acall('test.slow', {'ms': " + std::to_string(ms) + "})\n"
         "    done.append(round((time.monotonic() - t0) * 1000))\n"
         "    return v\n"
         "rs = await asyncio.gather(*[one() for _ in range(" + std::to_string(n) + ")])\n"
         "result = [list(rs), done]\n";
}

// With at most `limit` calls in flight, each taking >= ms, the k-th call
// (1-based, in completion order) cannot finish before ceil(k/limit) * ms.
void ExpectQueued(const ExecOutcome& r, int n, int limit, int ms) {
  ASSERT_TRUE(r.ok()) << r.text;
  ASSERT_EQ(r.result()[0], json(std::vector<std::string>(n, "done")));
  std::vector<int64_t> done = r.result()[1].get<std::vector<int64_t>>();
  ASSERT_EQ(done.size(), static_cast<size_t>(n));
  std::sort(done.begin(), done.end());
  constexpr int64_t kTimerSlackMs = 40;
  for (int k = 1; k <= n; ++k) {
    const int64_t floor = static_cast<int64_t>((k + limit - 1) / limit) * ms - kTimerSlackMs;
    EXPECT_GE(done[k - 1], floor) << "call " << k << " finished too early: more than " << limit
                                  << " were in flight; completions " << r.result()[1];
  }
  // ...and they did run concurrently: all of them one after the other would take n * ms.
  EXPECT_LT(done.back(), static_cast<int64_t>(n) * ms - ms) << r.result()[1];
}

TEST_P(CodeModeLimits, ConcurrentCallsAreQueuedAtTheLimit) {
  REQUIRE_CODE_MODE();
  const int64_t started0 = Stat("started_slow"), cancelled0 = Stat("cancelled_count");
  const Clock::time_point t0 = Clock::now();
  ExecOutcome r = Run(ConcurrentSlowJs(12, 300), ConcurrentSlowPy(12, 300), Limits({{"max_concurrent", 4}}));
  EXPECT_GE(MsSince(t0), 3 * 300);
  ExpectQueued(r, 12, 4, 300);
  EXPECT_EQ(CallsTotal(r), 12u);
  EXPECT_EQ(CallsDenied(r), 0u);
  EXPECT_EQ(Stat("started_slow"), started0 + 12);
  EXPECT_EQ(Stat("cancelled_count"), cancelled0);
}

// The real default, 16: a 17th concurrent call waits for a free slot.
TEST_P(CodeModeLimits, SeventeenCallsAtTheDefaultConcurrency) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run(ConcurrentSlowJs(17, 300), ConcurrentSlowPy(17, 300));
  EXPECT_EQ(r.sc["limits"]["max_concurrent"], 16);
  ExpectQueued(r, 17, 16, 300);
}

// ---------------------------------------------------------------- L5: max_args_bytes

// At the real default: {"text":"<262133 x>"} is exactly 262144 bytes.
TEST_P(CodeModeLimits, ArgsAtAndOverTheDefaultLimit) {
  REQUIRE_CODE_MODE();
  const int64_t calls0 = Stat("calls");
  ExecOutcome r = Run(R"JS(
    const n = 262144 - 11;
    const at = await tools.call("test.echo", {text: "x".repeat(n)});
    let over = "dispatched";
    try { await tools.call("test.echo", {text: "x".repeat(n + 1)}) } catch (e) { over = [e.code, e.message] }
    return [at.length, over])JS",
                      R"PY(
n = 262144 - 11
at = tools.call("test.echo", {"text": "x" * n})
over = "dispatched"
try:
    tools.call("test.echo", {"text": "x" * (n + 1)})
except ToolError as e:
    over = [e.code, e.message]
result = [len(at), over]
)PY");
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result(),
            json::parse(R"([262133, ["E_LIMIT_ARGS", "the arguments are 262145 bytes, over the limit of 262144"]])"));
  json log = Log(r);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["decision"], "allowed");
  EXPECT_EQ(log[1]["decision"], "denied");
  EXPECT_EQ(log[1]["error_code"], "E_LIMIT_ARGS");
  // Refused before dispatch: only the first echo reached the server.
  EXPECT_EQ(Stat("calls"), calls0 + 1 + 1);
}

// Bytes, not characters: "é" is two bytes of UTF-8. With max_args_bytes 101,
// 45 of them make {"text":"é…"} exactly 101 bytes; one more ASCII byte is over.
TEST_P(CodeModeLimits, ArgsLimitCountsUtf8Bytes) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run(R"JS(
    const at = await tools.call("test.echo", {text: "\u00e9".repeat(45)});
    let over = "dispatched";
    try { await tools.call("test.echo", {text: "\u00e9".repeat(45) + "a"}) } catch (e) { over = e.code }
    return [at.length, over])JS",
                      R"PY(
at = tools.call("test.echo", {"text": "\u00e9" * 45})
over = "dispatched"
try:
    tools.call("test.echo", {"text": "\u00e9" * 45 + "a"})
except ToolError as e:
    over = e.code
result = [len(at), over]
)PY",
                      Limits({{"max_args_bytes", 101}}));
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result(), json::parse(R"([45, "E_LIMIT_ARGS"])"));
}

// A request frame over the bridge's 2 MiB is refused inside the program and
// never sent.
TEST_P(CodeModeLimits, ArgsOverTheFrameLimitAreRefusedLocally) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run(R"JS(
    try { await tools.call("test.echo", {text: "x".repeat(3 << 20)}); return "sent" } catch (e) { return e.code })JS",
                      R"PY(
try:
    tools.call("test.echo", {"text": "x" * (3 << 20)})
    result = "sent"
except ToolError as e:
    result = e.code
)PY");
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result(), "E_LIMIT_ARGS");
  EXPECT_EQ(CallsTotal(r), 0u);
}

// ---------------------------------------------------------------- L6: the return value

// At the real default: a string of 1048574 bytes is 1 MiB of JSON.
TEST_P(CodeModeLimits, ReturnValueAtTheDefaultLimit) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run("return 'x'.repeat(1048576 - 2)", "result = 'x' * (1048576 - 2)\n");
  ASSERT_TRUE(r.ok()) << r.text.substr(0, 300);
  ASSERT_TRUE(r.result().is_string());
  EXPECT_EQ(r.result().get_ref<const std::string&>().size(), 1048574u);
  EXPECT_EQ(r.result().get_ref<const std::string&>().find_first_not_of('x'), std::string::npos);
}

TEST_P(CodeModeLimits, ReturnValueOverTheDefaultLimit) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run("return 'x'.repeat(1048576 - 1)", "result = 'x' * (1048576 - 1)\n");
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.is_error());
  EXPECT_EQ(r.error_code(), "E_LIMIT_RESULT") << r.text.substr(0, 300);
  EXPECT_EQ(r.error_message(), "the return value is 1048577 bytes, over the limit of 1048576");
  EXPECT_TRUE(r.result().is_null());
}

// ---------------------------------------------------------------- L7: console

// Exactly max_console_bytes on stdout: kept whole.
TEST_P(CodeModeLimits, ConsoleAtTheLimitIsKept) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run("console.log('x'.repeat(999)); return 7", "print('x' * 999)\nresult = 7\n",
                      Limits({{"max_console_bytes", 1000}}));
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result(), 7);
  EXPECT_EQ(r.out(), std::string(999, 'x') + "\n");
  EXPECT_FALSE(r.sc["console_truncated"].get<bool>());
}

// Past it: the first max_console_bytes, the marker, and the run goes on.
TEST_P(CodeModeLimits, ConsoleOverTheLimitIsTruncatedAndTheRunGoesOn) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run(R"JS(
    console.log("x".repeat(1000));
    for (let i = 0; i < 200; i++) { console.log("y".repeat(1000)); console.error("e".repeat(1000)) }
    return await tools.call("test.echo", {text: "still here"}))JS",
                      R"PY(
import sys
print("x" * 1000)
for i in range(200):
    print("y" * 1000)
    print("e" * 1000, file=sys.stderr)
result = tools.call("test.echo", {"text": "still here"})
)PY",
                      Limits({{"max_console_bytes", 1000}}));
  ASSERT_TRUE(r.ok()) << r.text.substr(0, 500);
  EXPECT_EQ(r.result(), "still here");
  const std::string marker = "\n[airlock: console output truncated at 1000 bytes]\n";
  EXPECT_EQ(r.out(), std::string(1000, 'x') + marker);
  EXPECT_EQ(r.err(), std::string(1000, 'e') + marker);
  EXPECT_TRUE(r.sc["console_truncated"].get<bool>());
}

// ---------------------------------------------------------------- L8: memory

TEST_P(CodeModeLimits, MemoryWellUnderTheLimitWorks) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run("const s = 'x'.repeat(16 << 20); return s.length",
                      "b = bytearray(32 << 20)\nresult = len(b)\n", Limits({{"memory_mb", 128}}));
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result(), js() ? (16 << 20) : (32 << 20));
}

// Growing memory step by step. The Python program even catches MemoryError:
// the jail's memory limit kills it all the same.
TEST_P(CodeModeLimits, MemoryBombEndsWithLimitMemory) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run(R"JS(let s = "x"; while (true) { s = s + s; s.indexOf("y") } )JS",
                      R"PY(
keep = []
try:
    while True:
        keep.append(bytearray(1 << 20))
except MemoryError:
    keep = None
    result = "survived"
)PY",
                      Limits({{"memory_mb", 128}}));
  EXPECT_FALSE(r.ok()) << r.text;
  EXPECT_EQ(r.error_code(), "E_LIMIT_MEMORY") << r.text;
}

// One huge allocation.
TEST_P(CodeModeLimits, HugeAllocationEndsWithLimitMemory) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run("return new Array(1e9).fill(0).length", "b = bytearray(2**33)\nresult = len(b)\n",
                      Limits({{"memory_mb", 128}}));
  EXPECT_FALSE(r.ok()) << r.text;
  EXPECT_EQ(r.error_code(), "E_LIMIT_MEMORY") << r.text;
}

// ---------------------------------------------------------------- L9: a tool's result

// test.huge {bytes: n} returns a string of n bytes: n + 2 bytes of JSON.
// Over max_result_bytes the call throws (catchably); nothing is forwarded.
TEST_P(CodeModeLimits, ToolResultAtAndOverTheDefaultLimit) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run(R"JS(
    const out = [(await tools.call("test.huge", {bytes: 1048574})).length];
    for (const bytes of [1048575, 2000000]) {
      try { out.push((await tools.call("test.huge", {bytes})).length) } catch (e) { out.push([e.code, e.message]) }
    }
    return out)JS",
                      R"PY(
out = [len(tools.call("test.huge", {"bytes": 1048574}))]
for n in (1048575, 2000000):
    try:
        out.append(len(tools.call("test.huge", {"bytes": n})))
    except ToolError as e:
        out.append([e.code, e.message])
result = out
)PY");
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result(), json::parse(R"([1048574,
      ["E_LIMIT_RESULT", "the result is 1048577 bytes, over the limit of 1048576"],
      ["E_LIMIT_RESULT", "the result is 2000002 bytes, over the limit of 1048576"]])"));
  json log = Log(r);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[1]["error_code"], "E_LIMIT_RESULT");
  EXPECT_EQ(log[2]["error_code"], "E_LIMIT_RESULT");
}

// ---------------------------------------------------------------- L10: processes

// A fork bomb meets the jail's process limit; sleeping children do not keep
// the run alive, and the next run works.
TEST_F(CodeModeLimitsOne, PythonForkBombIsContained) {
  REQUIRE_CODE_MODE();
  const Clock::time_point t0 = Clock::now();
  ExecOutcome r = Execute("python", R"PY(
import os, time
n = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
except OSError as e:
    raise RuntimeError("fork failed after %d children: %s" % (n, type(e).__name__))
)PY",
                          Limits({{"wall_ms", 5000}}));
  EXPECT_LT(MsSince(t0), 5000);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_code(), "E_PROGRAM_ERROR") << r.text;
  EXPECT_EQ(r.sc["error"].value("name", ""), "RuntimeError");
  int children = -1;
  ASSERT_EQ(sscanf(r.error_message().c_str(), "RuntimeError: fork failed after %d children: BlockingIOError",
                   &children),
            1)
      << r.error_message();
  EXPECT_GT(children, 0);
  EXPECT_LT(children, 32);  // the Python language's pids limit

  // The classic form: every process forks until the limit; the run still ends.
  ExecOutcome bomb = Execute("python", "import os\nwhile True:\n    os.fork()\n", Limits({{"wall_ms", 5000}}));
  EXPECT_FALSE(bomb.ok());
  EXPECT_FALSE(bomb.error_code().empty());

  ExecOutcome after = Execute("python", "1 + 1");
  ASSERT_TRUE(after.ok()) << after.text;
  EXPECT_EQ(after.result(), 2);
}

TEST_F(CodeModeLimitsOne, PythonThreadBombIsContained) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Execute("python", R"PY(
import threading
n = 0
stop = threading.Event()
try:
    while True:
        threading.Thread(target=stop.wait, daemon=True).start()
        n += 1
except RuntimeError as e:
    raise RuntimeError("thread %d failed: %s" % (n + 1, e))
)PY",
                          Limits({{"wall_ms", 5000}}));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_code(), "E_PROGRAM_ERROR") << r.text;
  int threads = -1;
  ASSERT_EQ(sscanf(r.error_message().c_str(), "RuntimeError: thread %d failed: can't start new thread", &threads), 1)
      << r.error_message();
  EXPECT_GT(threads, 1);
  EXPECT_LE(threads, 32);

  ExecOutcome after = Execute("python", "2 + 2");
  ASSERT_TRUE(after.ok()) << after.text;
  EXPECT_EQ(after.result(), 4);
}

// ---------------------------------------------------------------- L11: program errors

TEST_P(CodeModeLimits, SyntaxErrorIsProgramError) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Run("const x = ;\nreturn x", "x = = 1\nresult = x\n");
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.is_error());
  EXPECT_EQ(r.error_code(), "E_PROGRAM_ERROR") << r.text;
  EXPECT_EQ(r.sc["error"].value("name", ""), "SyntaxError");
  EXPECT_EQ(r.error_message().rfind("SyntaxError: ", 0), 0u) << r.error_message();
  EXPECT_EQ(CallsTotal(r), 0u);
}

TEST_P(CodeModeLimits, ValueWithoutJsonFormIsResultNotJson) {
  REQUIRE_CODE_MODE();
  const std::vector<std::string> programs =
      js() ? std::vector<std::string>{"return () => 1", "return 10n", "const a = {}; a.self = a; return a",
                                      "return Symbol('s')", "return {big: [1n]}"}
           : std::vector<std::string>{"object()", "result = {1, 2}", "a = []\na.append(a)\nresult = a",
                                      "float('nan')", "result = {'f': print}"};
  for (const std::string& code : programs) {
    ExecOutcome r = Run(code, code);
    EXPECT_FALSE(r.ok()) << code;
    EXPECT_EQ(r.error_code(), "E_RESULT_NOT_JSON") << code << ": " << r.text;
    EXPECT_TRUE(r.result().is_null()) << code;
  }
}

// ---------------------------------------------------------------- L12: runs are independent

TEST_P(CodeModeLimits, SameProgramTwiceSameResultAndNothingLeaks) {
  REQUIRE_CODE_MODE();
  const std::string js_code = R"JS(
    const seen = [typeof globalThis.leak, typeof ({}).polluted];
    globalThis.leak = 1;
    Object.prototype.polluted = true;
    return [seen, await tools.call("test.echo", {text: "same"})])JS";
  const std::string py_code = R"PY(
import os, builtins
seen = [os.path.exists("/tmp/leak"), os.path.exists("/work/leak"), hasattr(builtins, "leak"), sorted(os.listdir("/tmp"))]
for p in ("/tmp/leak", "/work/leak"):
    with open(p, "w") as f:
        f.write("from run 1")
builtins.leak = 1
result = [seen, tools.call("test.echo", {"text": "same"})]
)PY";
  ExecOutcome first = Run(js_code, py_code);
  ExecOutcome second = Run(js_code, py_code);
  ASSERT_TRUE(first.ok()) << first.text;
  ASSERT_TRUE(second.ok()) << second.text;
  EXPECT_EQ(first.result(), second.result());
  if (js()) {
    EXPECT_EQ(second.result(), json::parse(R"([["undefined", "undefined"], "same"])"));
  } else {
    EXPECT_EQ(second.result(), json::parse(R"([[false, false, false, []], "same"])"));
  }
}

// ---------------------------------------------------------------- D1–D9, D16: JavaScript

// The global holds the ECMAScript built-ins, console, tools and ToolError:
// nothing host-side (no require/process/Deno/fetch/Worker/WebAssembly, none of
// the SpiderMonkey shell's os/load/read/readFile/print/quit...).
TEST_F(CodeModeAmbient, JsGlobalHasNothingHostSide) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Execute("javascript", R"JS(
    const names = ["require", "process", "Deno", "Bun", "fetch", "WebSocket", "XMLHttpRequest", "Worker",
                   "SharedWorker", "WebAssembly", "importScripts", "navigator", "localStorage", "caches",
                   "module", "exports", "os", "load", "loadRelativeToScript", "read", "readFile", "readline",
                   "readRelativeToScript", "snarf", "print", "printErr", "putstr", "quit", "evaluate", "run",
                   "system", "redirect", "setTimeout", "setInterval", "queueMicrotask", "scriptArgs", "environment",
                   "FileReader", "Blob", "crypto", "performance", "gc", "timeout", "parseModule", "Debugger"];
    return {typeofs: Object.fromEntries(names.map(n => [n, typeof globalThis[n]])),
            own: Object.getOwnPropertyNames(globalThis).sort()})JS");
  ASSERT_TRUE(r.ok()) << r.text;
  const json got = r.result();
  ASSERT_EQ(got["typeofs"].size(), 45u);
  for (const auto& [name, type] : got["typeofs"].items()) EXPECT_EQ(type, "undefined") << name;
  const std::set<std::string> allowed = {
      // ECMAScript (and SpiderMonkey's InternalError), as InitRealmStandardClasses defines them.
      "AggregateError", "Array", "ArrayBuffer", "Atomics", "BigInt", "BigInt64Array", "BigUint64Array", "Boolean",
      "DataView", "Date", "Error", "EvalError", "FinalizationRegistry", "Float32Array", "Float64Array", "Function",
      "Infinity", "Int16Array", "Int32Array", "Int8Array", "InternalError", "Intl", "JSON", "Map", "Math", "NaN",
      "Number", "Object", "Promise", "Proxy", "RangeError", "ReferenceError", "Reflect", "RegExp", "Set",
      "SharedArrayBuffer", "String", "Symbol", "SyntaxError", "TypeError", "URIError", "Uint16Array", "Uint32Array",
      "Uint8Array", "Uint8ClampedArray", "WeakMap", "WeakRef", "WeakSet", "decodeURI", "decodeURIComponent",
      "encodeURI", "encodeURIComponent", "escape", "eval", "globalThis", "isFinite", "isNaN", "parseFloat",
      "parseInt", "undefined", "unescape", "uneval",
      // airlock's own.
      "console", "tools", "ToolError"};
  std::set<std::string> own;
  for (const json& n : got["own"]) own.insert(n.get<std::string>());
  for (const std::string& n : own) EXPECT_TRUE(allowed.count(n)) << "unexpected global: " << n;
  for (const char* n : {"console", "tools", "ToolError", "Object", "JSON", "Promise"}) {
    EXPECT_TRUE(own.count(n)) << "missing global: " << n;
  }
}

// D10: dynamic import() is rejected, whatever the specifier; the program goes on.
TEST_F(CodeModeAmbient, JsDynamicImportFails) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Execute("javascript", R"JS(
    const out = [];
    for (const spec of ["data:text/javascript,export default 1", "./main.js", "/work/main.js",
                        "file:///etc/passwd", "https://esm.sh/left-pad", "node:fs"]) {
      try { await import(spec); out.push("imported " + spec) } catch (e) { out.push(e instanceof Error) }
    }
    return out)JS");
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result(), json::parse("[true, true, true, true, true, true]"));
}

// D16: every constructor chain leads back to the one program global.
TEST_F(CodeModeAmbient, JsConstructorChainsYieldTheSameGlobal) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Execute("javascript", R"JS(
    const viaGlobal = globalThis.constructor.constructor("return this")();
    const viaTools = tools.call.constructor("return this")();
    let viaError;
    try { null.x } catch (e) { viaError = e.constructor.constructor("return this")() }
    let viaToolError;
    try { await tools.call("test.nope") } catch (e) { viaToolError = e.constructor.constructor("return this")() }
    const value = await tools.call("test.structured");
    const viaResult = value.constructor.constructor("return this")();
    const viaAsync = (async () => {}).constructor("return this")();
    const all = [viaGlobal, viaTools, viaError, viaToolError, viaResult];
    return [all.map(g => g === globalThis), viaAsync instanceof Promise,
            typeof viaGlobal.os, typeof viaGlobal.load, typeof viaGlobal.readFile, typeof viaGlobal.require])JS");
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result(), json::parse(R"([[true, true, true, true, true], true,
                                        "undefined", "undefined", "undefined", "undefined"])"));
}

// D17: replacing JSON, Promise.prototype.then, Array and Object.prototype
// members does not forge or break a call: frames are built in C++.
TEST_F(CodeModeAmbient, JsTamperingDoesNotBreakCalls) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Execute("javascript", R"JS(
    JSON.stringify = () => '{"op":"call","name":"test.write_note","args":{}}';
    JSON.parse = () => ({forged: true});
    Promise.prototype.then = function () { throw new Error("tampered then") };
    Promise.resolve = () => { throw new Error("tampered resolve") };
    Array.prototype.includes = () => true;
    Array.prototype.push = () => { throw new Error("tampered push") };
    Object.prototype.op = "forged";
    Object.prototype.name = "test.write_note";
    Object.prototype.id = 99;
    const echoed = await tools.call("test.echo", {text: "hello"});
    const structured = await tools.call("test.structured");
    for (const k of ["op", "name", "id"]) delete Object.prototype[k];
    return [echoed, structured.answer])JS");
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result(), json::parse(R"(["hello", 42])"));
  json log = Log(r);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["name"], "test.echo");
  EXPECT_EQ(log[1]["name"], "test.structured");
}

// D17, Object.prototype.toJSON: args are serialized as JSON.stringify would
// (js_json.h: toJSON methods are part of the value), so a toJSON that turns
// every object into a string makes the args a non-object: the call is refused
// inside the program and nothing is sent.
TEST_F(CodeModeAmbient, JsObjectPrototypeToJsonIsRefusedLocally) {
  REQUIRE_CODE_MODE();
  ExecOutcome r = Execute("javascript", R"JS(
    Object.prototype.toJSON = function () { return "forged" };
    let code;
    try { await tools.call("test.echo", {text: "hello"}); code = "sent" } catch (e) { code = e.code }
    delete Object.prototype.toJSON;
    return [code, await tools.call("test.echo", {text: "after"})])JS");
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result(), json::parse(R"(["E_INVALID_ARGS", "after"])"));
  EXPECT_EQ(CallsTotal(r), 1u);
}

// ---------------------------------------------------------------- D1–D9: Python in the jail

// A directory of the HOST with a marker file and two listening unix sockets
// (one at a path, one abstract): none of them may be reachable from a run.
class HostBait {
 public:
  HostBait() {
    dir_ = std::filesystem::temp_directory_path() / ("airlock-cmlimits-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "secret.txt") << "host-secret-7f3a";
    path_socket_ = Listen((dir_ / "s.sock").string(), false);
    abstract_name_ = "airlock-cmlimits-" + std::to_string(getpid());
    abstract_socket_ = Listen(abstract_name_, true);
  }
  ~HostBait() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string secret_path() const { return (dir_ / "secret.txt").string(); }
  std::string socket_path() const { return (dir_ / "s.sock").string(); }
  const std::string& abstract_name() const { return abstract_name_; }
  bool listening() const { return path_socket_.get() >= 0 && abstract_socket_.get() >= 0; }

 private:
  static UniqueFd Listen(const std::string& name, bool abstract) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) return fd;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const size_t offset = abstract ? 1 : 0;  // abstract: a leading NUL
    if (name.size() + offset >= sizeof(addr.sun_path)) return UniqueFd();
    std::memcpy(addr.sun_path + offset, name.data(), name.size());
    const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + offset + name.size());
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd.get(), 8) != 0) {
      return UniqueFd();
    }
    return fd;
  }

  std::filesystem::path dir_;
  std::string abstract_name_;
  UniqueFd path_socket_, abstract_socket_;
};

// D1–D3, D7: the host's files are not there, the jail's root is read-only
// outside /work and /tmp, and the environment is airlock's, not the host's.
TEST_F(CodeModeAmbient, PythonFilesystemAndEnvironmentAreTheJails) {
  REQUIRE_CODE_MODE();
  HostBait bait;
  const std::string program = "HOST_SECRET = " + json(bait.secret_path()).dump() + "\n" + R"PY(
import errno, os
def attempt(f):
    try:
        return ["ok", f()]
    except OSError as e:
        return [type(e).__name__, errno.errorcode.get(e.errno, "")]
def read(p):
    with open(p, "rb") as f:
        return f.read().decode("utf-8", "replace")
def write(p):
    with open(p, "w") as f:
        f.write("x")
    return True
result = {
    "host_secret": attempt(lambda: read(HOST_SECRET)),
    "shadow": attempt(lambda: read("/etc/shadow")),
    "pid1_environ": attempt(lambda: read("/proc/1/environ")),
    "write_etc": attempt(lambda: write("/etc/airlock-x")),
    "write_root": attempt(lambda: write("/airlock-x")),
    "write_usr": attempt(lambda: write("/usr/airlock-x")),
    "write_work": attempt(lambda: write("/work/x")),
    "write_tmp": attempt(lambda: write("/tmp/x")),
    "secret_in_env": any(SECRET in v for v in os.environ.values()),
    "secret_in_proc": SECRET in read("/proc/self/environ"),
    "uid": os.getuid(),
}
)PY";
  ExecOutcome run = Execute("python", "SECRET = " + json(std::string(kDownstreamSecret)).dump() + "\n" + program);
  ASSERT_TRUE(run.ok()) << run.text;
  const json& got = run.result();
  EXPECT_EQ(got["host_secret"], json::parse(R"(["FileNotFoundError", "ENOENT"])"));
  EXPECT_EQ(got["shadow"], json::parse(R"(["FileNotFoundError", "ENOENT"])"));
  EXPECT_NE(got["pid1_environ"][0], "ok") << got["pid1_environ"];
  for (const char* key : {"write_etc", "write_root", "write_usr"}) {
    EXPECT_NE(got[key][0], "ok") << key;
    EXPECT_TRUE(got[key][1] == "EROFS" || got[key][1] == "EACCES") << key << ": " << got[key];
  }
  EXPECT_EQ(got["write_work"], json::parse(R"(["ok", true])"));
  EXPECT_EQ(got["write_tmp"], json::parse(R"(["ok", true])"));
  EXPECT_EQ(got["secret_in_env"], false);
  EXPECT_EQ(got["secret_in_proc"], false);
  EXPECT_EQ(got["uid"], 65534);
}

// D5, D6: no network at all, and the host's unix sockets (at a path, or in
// the abstract namespace) are out of reach.
TEST_F(CodeModeAmbient, PythonHasNoNetworkAndNoHostSockets) {
  REQUIRE_CODE_MODE();
  HostBait bait;
  ASSERT_TRUE(bait.listening());
  const std::string program = "HOST_SOCKET = " + json(bait.socket_path()).dump() + "\nABSTRACT = " +
                              json(bait.abstract_name()).dump() + "\n" + R"PY(
import errno, socket
def attempt(f):
    try:
        return ["ok", f()]
    except OSError as e:
        return [type(e).__name__, errno.errorcode.get(e.errno, "")]
def inet(family, addr):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect(addr)
    return "connected"
def unix(addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect(addr)
    return "connected"
result = {
    "inet": attempt(lambda: inet(socket.AF_INET, ("1.1.1.1", 80))),
    "inet6": attempt(lambda: inet(socket.AF_INET6, ("2606:4700:4700::1111", 80))),
    "udp": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("1.1.1.1", 53))),
    "dns": attempt(lambda: socket.getaddrinfo("example.com", 80)),
    "unix_path": attempt(lambda: unix(HOST_SOCKET)),
    "unix_abstract": attempt(lambda: unix("\0" + ABSTRACT)),
}
)PY";
  ExecOutcome r = Execute("python", program);
  ASSERT_TRUE(r.ok()) << r.text;
  const json& got = r.result();
  // The seccomp policy allows AF_UNIX sockets only (seccomp_policy.h).
  EXPECT_EQ(got["inet"], json::parse(R"(["OSError", "EAFNOSUPPORT"])"));
  EXPECT_EQ(got["inet6"], json::parse(R"(["OSError", "EAFNOSUPPORT"])"));
  EXPECT_EQ(got["udp"], json::parse(R"(["OSError", "EAFNOSUPPORT"])"));
  EXPECT_NE(got["dns"][0], "ok") << got["dns"];
  EXPECT_EQ(got["unix_path"], json::parse(R"(["FileNotFoundError", "ENOENT"])"));
  EXPECT_EQ(got["unix_abstract"], json::parse(R"(["ConnectionRefusedError", "ECONNREFUSED"])"));
}

// D8: a subprocess runs, but inside the same jail: the same user, no host
// files, no network.
TEST_F(CodeModeAmbient, PythonSubprocessStaysInTheJail) {
  REQUIRE_CODE_MODE();
  HostBait bait;
  const std::string program = "HOST_SECRET = " + json(bait.secret_path()).dump() + "\n" + R"PY(
import subprocess, sys
sh = subprocess.run(["sh", "-c", 'id -u; cat "$1" 2>/dev/null; echo "host=$?"; cat /etc/shadow 2>/dev/null; echo "shadow=$?"',
                     "sh", HOST_SECRET], capture_output=True, text=True, timeout=10)
py = subprocess.run([sys.executable, "-c",
                     "import socket\ntry:\n socket.socket(socket.AF_INET).connect(('1.1.1.1', 80))\n print('connected')\n"
                     "except OSError as e:\n print(e.errno)"], capture_output=True, text=True, timeout=10)
result = [sh.returncode, sh.stdout.split(), py.stdout.strip()]
)PY";
  ExecOutcome r = Execute("python", program);
  ASSERT_TRUE(r.ok()) << r.text;
  EXPECT_EQ(r.result(), json::parse(R"([0, ["65534", "host=1", "shadow=1"], "97"])")) << r.text;
}

INSTANTIATE_TEST_SUITE_P(Lang, CodeModeLimits, ::testing::Values("javascript", "python"), LangName);

}  // namespace
}  // namespace airlock::testing
