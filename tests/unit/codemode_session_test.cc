// Code-mode sessions in the executor (SessionSpec::code_mode): a Python
// session whose cells are code-mode requests. Each cell gets a bridge of its
// own, handed to the interpreter with the turn (jail::TurnRequest::pass_fd)
// and finished before the cell's result returns; the `tools` global and the
// cell's variables persist, the bridge does not.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jail/host.h"
#include "runtimes/local_executor.h"
#include "test_jail_host.h"

namespace airlock::runtimes {
namespace {

using nlohmann::json;

// Answers every call with {"echo": <its args>, "n": <how many calls so
// far>}, and remembers the final frame.
class EchoBridge : public BridgeHandler {
 public:
  void OnFrame(std::string frame, ReplyFn reply) override {
    const json j = json::parse(frame, nullptr, false);
    std::lock_guard<std::mutex> lock(mu_);
    frames_.push_back(j);
    if (!j.is_object()) return;
    const std::string op = j.value("op", "");
    if (op == "result" || op == "result_error") {
      final_ = j;
      return;
    }
    ++calls_;
    reply(json{{"id", j["id"]}, {"ok", true}, {"result", {{"echo", j.value("args", json())}, {"n", calls_}}}}.dump());
  }
  int calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  json final_frame() {
    std::lock_guard<std::mutex> lock(mu_);
    return final_;
  }

 private:
  std::mutex mu_;
  std::vector<json> frames_;
  json final_;
  int calls_ = 0;
};

class CodeModeSessionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto host = tests::CreateJailHost();
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(host).value().release();
    std::vector<LanguageSpec> languages = BuiltinLanguages();
    for (LanguageSpec& l : CodeModeLanguages(std::string(AIRLOCK_BINARY_DIR) + "/airlock-js")) {
      languages.push_back(std::move(l));
    }
    auto ex = LocalExecutor::Create(*host_, {}, std::move(languages));
    ASSERT_TRUE(ex.ok()) << ex.status().ToString();
    executor_ = std::move(ex).value().release();
  }
  static void TearDownTestSuite() {
    delete executor_;
    executor_ = nullptr;
    delete host_;
    host_ = nullptr;
  }

  std::string Open(bool code_mode = true, const std::string& language = "python") {
    const std::string id = "s_cm_" + std::to_string(next_++);
    Status st = executor_->OpenSession(
        {.id = id, .language = language, .cpu_budget_ms = 60'000, .code_mode = code_mode});
    EXPECT_TRUE(st.ok()) << st.ToString();
    return id;
  }

  static RunResult Cell(const std::string& id, const std::string& code, BridgeHandler* bridge,
                        bool code_mode = true) {
    RunRequest r;
    r.session_id = id;
    r.code = code;
    r.code_mode = code_mode;
    r.timeout_ms = 10'000;
    CancelToken cancel;
    return executor_->Run(r, nullptr, cancel, bridge);
  }

  static inline jail::JailHost* host_ = nullptr;
  static inline LocalExecutor* executor_ = nullptr;
  static inline std::atomic<int> next_{0};
};

TEST_F(CodeModeSessionTest, ToolDataLoadedInOneCellIsThereInTheNext) {
  const std::string id = Open();
  EchoBridge first;
  RunResult r = Cell(id, "data = tools.call('t.get', {'k': 1})\ndata['n']", &first);
  ASSERT_TRUE(r.ok()) << r.message << r.stderr_text;
  EXPECT_EQ(first.calls(), 1);
  EXPECT_EQ(first.final_frame(), json({{"op", "result"}, {"value", 1}}));

  EchoBridge second;
  r = Cell(id, "data['echo']", &second);
  ASSERT_TRUE(r.ok()) << r.message << r.stderr_text;
  EXPECT_EQ(second.calls(), 0);
  EXPECT_EQ(second.final_frame(), json({{"op", "result"}, {"value", {{"k", 1}}}}));
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(CodeModeSessionTest, AnUncaughtErrorIsTheCellsResultErrorAndTheSessionGoesOn) {
  const std::string id = Open();
  EchoBridge bridge;
  RunResult r = Cell(id, "x = 5\nraise ValueError('nope')", &bridge);
  EXPECT_EQ(r.status, RunStatus::kExitNonzero);
  EXPECT_TRUE(r.error_code.empty()) << r.error_code;
  const json final_frame = bridge.final_frame();
  EXPECT_EQ(final_frame.value("op", ""), "result_error");
  EXPECT_EQ(final_frame["error"].value("name", ""), "ValueError");
  EXPECT_EQ(final_frame["error"].value("message", ""), "nope");

  EchoBridge next;
  r = Cell(id, "x + 1", &next);
  ASSERT_TRUE(r.ok()) << r.message << r.stderr_text;
  EXPECT_EQ(next.final_frame(), json({{"op", "result"}, {"value", 6}}));
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

// The bridge is the cell's: a copy of its descriptor kept by the cell is a
// dead socket in the next one (nothing reaches any handler through it). A
// thread an earlier cell left waiting calls through the bridge of the cell
// that is running when it calls (between cells the session is frozen and
// no bridge exists): the call is that cell's, governed and counted there.
TEST_F(CodeModeSessionTest, NoBridgeOutlivesItsCell) {
  const std::string id = Open();
  EchoBridge first;
  RunResult r = Cell(id, R"PY(
import os, stat, threading, time
kept = [os.dup(fd) for fd in map(int, os.listdir("/proc/self/fd"))
        if fd > 3 and os.path.exists("/proc/self/fd/%d" % fd) and stat.S_ISSOCK(os.fstat(fd).st_mode)]
late = []
go = threading.Event()
def later():
    go.wait()
    try:
        late.append(tools.call("t.late", {}))
    except ToolError as e:
        late.append(e.code)
waiting = threading.Thread(target=later, daemon=True)
waiting.start()
len(kept)
)PY", &first);
  ASSERT_TRUE(r.ok()) << r.message << r.stderr_text;
  ASSERT_GE(first.final_frame().value("value", 0), 1) << first.final_frame();

  EchoBridge second;
  r = Cell(id, R"PY(
import json
go.set()
waiting.join(5)
states = []
for fd in kept:
    frame = json.dumps({"id": 7, "op": "call", "name": "t.smuggled", "args": {}}).encode()
    try:
        os.write(fd, len(frame).to_bytes(4, "big") + frame)
        states.append("eof" if not os.read(fd, 4) else "answered")
    except OSError as e:
        states.append("error")
[states, late]
)PY", &second);
  ASSERT_TRUE(r.ok()) << r.message << r.stderr_text;
  const json value = second.final_frame().value("value", json());
  ASSERT_TRUE(value.is_array()) << second.final_frame();
  for (const json& state : value[0]) EXPECT_NE(state, "answered");
  EXPECT_EQ(value[1], json::array({{{"echo", json::object()}, {"n", 1}}}));
  EXPECT_EQ(first.calls(), 0);
  EXPECT_EQ(second.calls(), 1) << "the waiting thread's call, and nothing smuggled through a kept descriptor";
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

// JavaScript (the embedded engine's session loop with `tools`): what a cell
// keeps in globals (globalThis, var, top-level let/const of a cell without
// await) is there in the next; a value that is a promise is awaited.
TEST_F(CodeModeSessionTest, JavaScriptCellsKeepToolDataInGlobals) {
  const std::string id = Open(true, "javascript");
  EchoBridge first;
  RunResult r = Cell(id, "globalThis.data = await tools.call('t.get', {k: 1});\ndata.n", &first);
  ASSERT_TRUE(r.ok()) << r.message << r.stderr_text;
  EXPECT_EQ(first.calls(), 1);
  EXPECT_EQ(first.final_frame(), json({{"op", "result"}, {"value", 1}}));

  EchoBridge second;
  r = Cell(id, "var seen = data.echo; seen", &second);
  ASSERT_TRUE(r.ok()) << r.message << r.stderr_text;
  EXPECT_EQ(second.final_frame(), json({{"op", "result"}, {"value", {{"k", 1}}}}));
  EXPECT_EQ(second.calls(), 0);

  EchoBridge third;  // the last expression a promise: awaited
  r = Cell(id, "tools.call('t.get', {k: seen.k + 1})", &third);
  ASSERT_TRUE(r.ok()) << r.message << r.stderr_text;
  EXPECT_EQ(third.final_frame()["value"]["echo"], json({{"k", 2}})) << third.final_frame();

  EchoBridge fourth;
  r = Cell(id, "throw new TypeError('nope')", &fourth);
  EXPECT_EQ(r.status, RunStatus::kExitNonzero);
  EXPECT_EQ(fourth.final_frame().value("op", ""), "result_error") << fourth.final_frame();
  EXPECT_EQ(fourth.final_frame()["error"].value("name", ""), "TypeError");

  // A request left pending when its cell ended is rejected, not answered
  // through a later cell's bridge.
  EchoBridge fifth;
  r = Cell(id, "globalThis.left = tools.call('t.get', {k: 5}); 0", &fifth);
  ASSERT_TRUE(r.ok()) << r.message << r.stderr_text;
  EchoBridge sixth;
  r = Cell(id, "await left.then(() => 'answered', (e) => e.code)", &sixth);
  ASSERT_TRUE(r.ok()) << r.message << r.stderr_text;
  EXPECT_EQ(sixth.final_frame(), json({{"op", "result"}, {"value", "E_BRIDGE_PROTOCOL"}}));
  EXPECT_EQ(sixth.calls(), 0);
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(CodeModeSessionTest, RefusesCellsOfTheWrongKind) {
  const std::string code_mode = Open();
  EchoBridge bridge;
  RunResult r = Cell(code_mode, "1", nullptr);
  EXPECT_EQ(r.error_code, "invalid_request") << r.message;
  r = Cell(code_mode, "1", &bridge, /*code_mode=*/false);
  EXPECT_EQ(r.error_code, "invalid_request") << r.message;
  EXPECT_NE(r.message.find("code-mode session"), std::string::npos) << r.message;

  const std::string plain = Open(/*code_mode=*/false);
  r = Cell(plain, "1", &bridge);
  EXPECT_EQ(r.error_code, "invalid_request") << r.message;
  EXPECT_NE(r.message.find("not a code-mode session"), std::string::npos) << r.message;
  // The plain session has no `tools`.
  r = Cell(plain, "tools", nullptr, /*code_mode=*/false);
  EXPECT_EQ(r.status, RunStatus::kExitNonzero);
  EXPECT_NE(r.stderr_text.find("NameError"), std::string::npos) << r.stderr_text;
  EXPECT_TRUE(executor_->CloseSession(code_mode).ok());
  EXPECT_TRUE(executor_->CloseSession(plain).ok());

  // Code mode has sessions for javascript and python only.
  Status st = executor_->OpenSession({.id = "s_cm_ruby", .language = "ruby", .code_mode = true});
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.ToString();
}

}  // namespace
}  // namespace airlock::runtimes
