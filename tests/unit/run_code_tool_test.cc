// run_code's definition (description, input schema), its argument check,
// and the run row of a run that could not start.
#include <gtest/gtest.h>

#include "config/config.h"
#include "mcp/tools/languages.h"
#include "mcp/tools/run_code_args.h"
#include "mcp/tools/run_code_tool.h"
#include "test_audit_log.h"

namespace airlock::mcp {
namespace {

std::vector<runtimes::LanguageInfo> Python() {
  runtimes::LanguageInfo l;
  l.name = "python";
  l.tiers = {"native"};
  return {l};
}

TEST(RunCodeToolTest, DescriptionStatesTheOutputLimitExactly) {
  config::LimitsConfig limits;
  limits.max_output_bytes = 1000;
  std::string d = RunCodeTool::Description(Python(), limits);
  EXPECT_NE(d.find("1000 bytes of stdout/stderr"), std::string::npos) << d;
  EXPECT_EQ(d.find("0 KiB"), std::string::npos) << d;
  limits.max_output_bytes = 1536;
  EXPECT_NE(RunCodeTool::Description(Python(), limits).find("1.5 KiB of stdout/stderr"), std::string::npos);
  limits.max_output_bytes = 1 << 20;
  EXPECT_NE(RunCodeTool::Description(Python(), limits).find("1 MiB of stdout/stderr"), std::string::npos);
}

TEST(RunCodeToolTest, SchemaDoesNotRequireLanguageSinceASessionCellOmitsIt) {
  nlohmann::json schema = RunCodeTool::InputSchema(Python(), config::LimitsConfig());
  EXPECT_EQ(schema["required"], nlohmann::json::array({"code"}));
  EXPECT_TRUE(schema["properties"].contains("language"));
  EXPECT_TRUE(schema["properties"].contains("session_id"));
}

TEST(RunCodeToolTest, WithoutSessionLanguageIsStillRequiredAndTheErrorNamesIt) {
  StatusOr<runtimes::RunRequest> r =
      ParseRunCodeArguments({{"code", "print(1)"}}, Python(), config::LimitsConfig(), TierRule{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("arguments.language"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("session_id"), std::string::npos) << r.status().message();
  EXPECT_TRUE(ParseRunCodeArguments({{"language", "python"}, {"code", "print(1)"}}, Python(), config::LimitsConfig(),
                                    TierRule{})
                  .ok());
}

TEST(RunCodeToolTest, EachTierGetsItsOwnDefaultLimits) {
  // Ruby as the executor lists it: native first (its defaults are the
  // language's), WASM with twice the memory. A WASM run without memory_mb
  // must get the WASM tier's 512 MiB: with native's 256 it had too little
  // and never matched the pool's pre-started WASM Ruby (every run cold).
  runtimes::LanguageInfo ruby;
  ruby.name = "ruby";
  ruby.tiers = {"native", "wasm"};
  ruby.default_timeout_ms = 10'000;
  ruby.default_memory_mb = 256;
  ruby.tier_defaults = {{"native", {10'000, 256}}, {"wasm", {20'000, 512}}};
  TierRule both;
  both.allowed = {"native", "wasm"};
  both.preferred = "native";
  config::LimitsConfig limits;
  auto parse = [&](nlohmann::json args) {
    args["language"] = "ruby";
    args["code"] = "puts 1";
    StatusOr<runtimes::RunRequest> r = ParseRunCodeArguments(args, {ruby}, limits, both);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : runtimes::RunRequest{};
  };
  runtimes::RunRequest wasm = parse({{"isolation", "wasm"}});
  EXPECT_EQ(wasm.memory_mb, 512u);
  EXPECT_EQ(wasm.timeout_ms, 20'000u);
  runtimes::RunRequest native = parse({});
  EXPECT_EQ(native.isolation, "native");
  EXPECT_EQ(native.memory_mb, 256u);
  EXPECT_EQ(native.timeout_ms, 10'000u);
  EXPECT_EQ(parse({{"isolation", "wasm"}, {"memory_mb", 300}}).memory_mb, 300u) << "an explicit value wins";
  limits.max_memory_mb = 400;
  EXPECT_EQ(parse({{"isolation", "wasm"}}).memory_mb, 400u) << "a tier's default is capped by the maximum";
  ruby.tier_defaults.clear();  // a runner host from before tier defaults
  EXPECT_EQ(parse({{"isolation", "wasm"}}).memory_mb, 256u);
}

// An executor with no runner: no languages, and Health() says why.
class NoRunnerExecutor : public runtimes::CodeExecutor {
 public:
  runtimes::RunResult Run(const runtimes::RunRequest& request, const runtimes::ProgressFn&, CancelToken&,
                          runtimes::BridgeHandler*) override {
    ++runs;
    return runtimes::InternalErrorResult(request.language, "runner_unavailable", "no");
  }
  std::vector<runtimes::LanguageInfo> Languages() override { return {}; }
  nlohmann::json Health() override { return {{"up", false}, {"error", "the runner host is gone"}}; }
  int runs = 0;
};

class FakeContext : public ToolCallContext {
 public:
  void Progress(double, std::optional<double>, const std::string&) override {}
  void Log(LogLevel, const std::string&) override {}
  CancelToken& cancel() override { return cancel_; }
  const std::string& protocol_version() const override { return version_; }
  const governance::Caller& caller() const override { return caller_; }
  const std::string& run_id() const override { return run_id_; }

 private:
  CancelToken cancel_;
  std::string version_ = "2025-11-25";
  governance::Caller caller_{.user = "alice", .role = "dev", .auth = "stdio"};
  std::string run_id_ = "r_refused";
};

TEST(RunCodeToolTest, ARunRefusedForWantOfARunnerStillGetsItsRunRow) {
  tests::TempAuditLog audit("run_code_refused");
  ASSERT_NE(audit.get(), nullptr);
  NoRunnerExecutor executor;
  config::Config config;
  LanguageCatalog catalog(executor, config);
  RunCodeTool tool(catalog, audit.get());
  FakeContext ctx;
  StatusOr<nlohmann::json> out = tool.Call({{"language", "python"}, {"code", "print(1)"}}, ctx);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_TRUE(out->value("isError", false));
  EXPECT_EQ(executor.runs, 0);
  auto rows = audit.get()->store()->Query({});
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  std::vector<audit::RunRecord> runs;
  for (const audit::AuditRow& r : *rows) {
    if (r.run() != nullptr) runs.push_back(*r.run());
  }
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].run_id, "r_refused");
  EXPECT_EQ(runs[0].status, "ERROR");
  EXPECT_EQ(runs[0].kind, "run_code");
  EXPECT_EQ(runs[0].language, "python");
  EXPECT_EQ(runs[0].code, "print(1)");
  EXPECT_EQ(runs[0].user, "alice");
}

}  // namespace
}  // namespace airlock::mcp
