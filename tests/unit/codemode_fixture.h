// Shared fixture for the code-mode tests: a real jail runtime (the same
// LocalExecutor the runner process uses, with the code-mode languages), a real
// gateway with real downstream MCP servers, and the `execute` tool exactly as
// the MCP server runs it.
//
// Connectors:
//   test     tests/fixtures/mcp-servers/test-server.mjs, trusted (its
//            readOnlyHint tools are read: echo, slow, stats, huge, fail,
//            json_text, structured, env, complex; write_note, add_tool and
//            crash are write). Its env holds AIRLOCK_TEST_SECRET (a secret that
//            must never reach a jail).
//   plain    the same server, NOT trusted: every tool is write.
//   memory   @modelcontextprotocol/server-memory, untrusted, with read_graph,
//            search_nodes and open_nodes pinned read-only.
//   everything  @modelcontextprotocol/server-everything, trusted.
//
//   class MyTest : public CodeModeTest {};
//   TEST_F(MyTest, Works) {
//     REQUIRE_CODE_MODE();
//     ExecOutcome r = Execute("javascript", "return await tools.call('test.echo', {text: 'x'})");
//     EXPECT_TRUE(r.ok()) << r.text;
//     EXPECT_EQ(r.result(), "x");
//   }
#ifndef AIRLOCK_TESTS_UNIT_CODEMODE_FIXTURE_H_
#define AIRLOCK_TESTS_UNIT_CODEMODE_FIXTURE_H_

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/cancel.h"
#include "cli/executor_factory.h"
#include "codemode/limits.h"
#include "config/config.h"
#include "gateway/gateway.h"
#include "mcp/tools/execute_tool.h"

namespace airlock::testing {

inline const std::string kCodeModeFixtures = std::string(AIRLOCK_SOURCE_DIR) + "/tests/fixtures/mcp-servers";
inline constexpr char kDownstreamSecret[] = "airlock-downstream-secret-5f1c9e";

// What `execute` returned.
struct ExecOutcome {
  nlohmann::json raw;  // the CallToolResult
  nlohmann::json sc;   // its structuredContent
  std::string text;    // its first text block
  bool ok() const { return sc.value("ok", false); }
  bool is_error() const { return raw.value("isError", false); }
  // References into `sc`: safe to bind and iterate while the outcome lives.
  const nlohmann::json& result() const {
    static const nlohmann::json kNull;
    auto it = sc.find("result");
    return it == sc.end() ? kNull : *it;
  }
  std::string error_code() const { return sc.contains("error") ? sc["error"].value("code", "") : ""; }
  std::string error_message() const { return sc.contains("error") ? sc["error"].value("message", "") : ""; }
  std::string out() const { return sc.value("stdout", ""); }
  std::string err() const { return sc.value("stderr", ""); }
};

// A ToolCallContext with a cancel token the test can fire.
class TestCallContext : public mcp::ToolCallContext {
 public:
  void Progress(double, std::optional<double>, const std::string&) override {}
  void Log(mcp::LogLevel, const std::string&) override {}
  CancelToken& cancel() override { return cancel_; }
  const std::string& protocol_version() const override { return version_; }
  const governance::Caller& caller() const override { return caller_; }
  const std::string& run_id() const override { return run_id_; }

  governance::Caller caller_{.user = "tester", .role = "reader", .auth = "stdio", .endpoint = "default"};

 private:
  CancelToken cancel_;
  std::string version_ = "2025-11-25";
  std::string run_id_ = "r_test";
};

// The default policy (built-in roles, one endpoint) for tools under test.
inline const governance::Policy& DefaultPolicy() {
  static const governance::Policy* policy = new governance::Policy(
      governance::Policy::FromJson(nullptr, nullptr, nullptr).value());
  return *policy;
}

class CodeModeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!Available()) return;
    StatusOr<cli::LocalRuntime> rt = cli::MakeLocalRuntime(config::DefaultConfig(), /*allow_degraded=*/false);
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    runtime_ = new cli::LocalRuntime(std::move(rt).value());
    memory_dir_ = std::filesystem::temp_directory_path() / ("airlock-cm-" + std::to_string(getpid()));
    std::filesystem::create_directories(memory_dir_);
    const std::string node_modules = kCodeModeFixtures + "/node_modules/@modelcontextprotocol";
    nlohmann::json servers = {
        {"test",
         {{"command", "node"},
          {"args", {kCodeModeFixtures + "/test-server.mjs"}},
          {"env", {{"AIRLOCK_TEST_SECRET", kDownstreamSecret}}},
          {"trusted", true},
          {"stderr", "discard"},
          {"timeout_ms", 20000}}},
        {"plain",
         {{"command", "node"}, {"args", {kCodeModeFixtures + "/test-server.mjs"}}, {"stderr", "discard"}}},
        {"memory",
         {{"command", "node"},
          {"args", {node_modules + "/server-memory/dist/index.js"}},
          {"env", {{"MEMORY_FILE_PATH", (memory_dir_ / "memory.jsonl").string()}}},
          {"read_only_tools", {"read_graph", "search_nodes", "open_nodes"}},
          {"stderr", "discard"}}},
        {"everything",
         {{"command", "node"},
          {"args", {node_modules + "/server-everything/dist/index.js", "stdio"}},
          {"trusted", true},
          {"stderr", "discard"}}},
    };
    gateway::GatewayOptions options;
    options.log = [](const std::string&) {};
    StatusOr<std::unique_ptr<gateway::Gateway>> gw = gateway::Gateway::Create(servers, options);
    ASSERT_TRUE(gw.ok()) << gw.status().ToString();
    gateway_ = gw->release();
    for (const auto& [name, st] : gateway_->ConnectAll(std::chrono::seconds(60))) {
      ASSERT_TRUE(st.ok()) << name << ": " << st.ToString();
    }
  }

  static void TearDownTestSuite() {
    delete gateway_;
    gateway_ = nullptr;
    delete runtime_;
    runtime_ = nullptr;
    std::error_code ec;
    if (!memory_dir_.empty()) std::filesystem::remove_all(memory_dir_, ec);
  }

  // Code mode needs root-capable jails, airlock-js and the npm fixtures.
  static bool Available() {
    const std::string bin = std::string(AIRLOCK_BINARY_DIR) + "/airlock-js";
    return std::filesystem::exists(kCodeModeFixtures + "/node_modules/@modelcontextprotocol/sdk") &&
           access(bin.c_str(), X_OK) == 0;
  }

  // Runs `execute` as the MCP server does. `extra` adds arguments
  // (connectors, limits); `admin` are the configured limits.
  static ExecOutcome Execute(const std::string& language, const std::string& code,
                             const nlohmann::json& extra = nlohmann::json::object(),
                             const codemode::Limits& admin = {}, TestCallContext* ctx = nullptr) {
    mcp::Access access(DefaultPolicy(), *DefaultPolicy().DefaultEndpoint(), gateway_);
    mcp::ExecuteTool tool(*gateway_, *runtime_->executor, access, nullptr, admin, 1u << 20);
    nlohmann::json args = extra;
    args["language"] = language;
    args["code"] = code;
    TestCallContext local;
    StatusOr<nlohmann::json> r = tool.Call(args, ctx ? *ctx : local);
    ExecOutcome out;
    if (!r.ok()) {
      out.text = "protocol error: " + r.status().ToString();
      return out;
    }
    out.raw = *r;
    out.sc = r->value("structuredContent", nlohmann::json::object());
    if (r->contains("content") && !(*r)["content"].empty()) out.text = (*r)["content"][0].value("text", "");
    return out;
  }

  static gateway::Gateway& gateway() { return *gateway_; }

  static inline cli::LocalRuntime* runtime_ = nullptr;
  static inline gateway::Gateway* gateway_ = nullptr;
  static inline std::filesystem::path memory_dir_;
};

#define REQUIRE_CODE_MODE()                                                                    \
  if (!CodeModeTest::Available() || gateway_ == nullptr)                                       \
  GTEST_SKIP() << "code mode needs build/airlock-js and the npm fixtures (scripts/setup.sh)"

}  // namespace airlock::testing

#endif  // AIRLOCK_TESTS_UNIT_CODEMODE_FIXTURE_H_
