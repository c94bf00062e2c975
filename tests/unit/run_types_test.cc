#include "runtimes/run_types.h"

#include <gtest/gtest.h>

#include <string>

#include "base/encoding.h"

namespace airlock::runtimes {
namespace {

using Json = nlohmann::json;

RunResult SampleResult() {
  RunResult r;
  r.status = RunStatus::kKilledSignal;
  r.message = "killed by SIGKILL";
  r.error_code = "";
  r.language = "python";
  r.exit_code = -1;
  r.signal = 9;
  r.stdout_text = "hello\n";
  r.stdout_truncated = true;
  r.stderr_text = "warn\n";
  r.compile_output = "cc: ok";
  r.compile_output_truncated = true;
  r.wall_ms = 12;
  r.cpu_ms = 10;
  r.compile_ms = 3;
  r.peak_memory_bytes = 123456;
  OutputFile text{"out/result.json", "{\"a\":1}", 7, false, ""};
  OutputFile png{"plot.png", std::string("\x89PNG\r\n\x1a\n\0\0", 10), 5000, true, ""};
  r.files = {text, png};
  return r;
}

TEST(RunTypesTest, StatusAndPhaseNames) {
  for (RunStatus s : {RunStatus::kOk, RunStatus::kExitNonzero, RunStatus::kTimeout,
                      RunStatus::kMemoryLimit, RunStatus::kOutputLimit, RunStatus::kCompileError,
                      RunStatus::kKilledSignal, RunStatus::kInternalError}) {
    std::optional<RunStatus> back = RunStatusFromName(RunStatusName(s));
    ASSERT_TRUE(back.has_value()) << RunStatusName(s);
    EXPECT_EQ(*back, s);
  }
  EXPECT_STREQ(RunStatusName(RunStatus::kExitNonzero), "exit_nonzero");
  EXPECT_STREQ(RunStatusName(RunStatus::kMemoryLimit), "memory_limit");
  EXPECT_FALSE(RunStatusFromName("OK").has_value());
  EXPECT_FALSE(RunStatusFromName("").has_value());
  EXPECT_STREQ(RunPhaseName(RunPhase::kQueued), "queued");
  EXPECT_STREQ(RunPhaseName(RunPhase::kStarting), "starting");
  EXPECT_STREQ(RunPhaseName(RunPhase::kCompiling), "compiling");
  EXPECT_STREQ(RunPhaseName(RunPhase::kRunning), "running");
  EXPECT_STREQ(RunPhaseName(RunPhase::kDone), "done");
}

TEST(RunTypesTest, InternalErrorResult) {
  RunResult r = InternalErrorResult("go", "busy", "too busy");
  EXPECT_EQ(r.status, RunStatus::kInternalError);
  EXPECT_EQ(r.language, "go");
  EXPECT_EQ(r.error_code, "busy");
  EXPECT_EQ(r.message, "too busy");
  EXPECT_FALSE(r.ok());
}

TEST(RunTypesTest, ResultJsonShape) {
  Json j = ToJson(SampleResult());
  EXPECT_EQ(j["status"], "killed_signal");
  EXPECT_EQ(j["signal"], 9);
  EXPECT_EQ(j["stdout"], "hello\n");
  EXPECT_EQ(j["stdout_truncated"], true);
  EXPECT_EQ(j["isolation"], "native");
  EXPECT_EQ(j["peak_memory_bytes"], 123456);
  ASSERT_EQ(j["files"].size(), 2u);
  EXPECT_EQ(j["files"][0]["encoding"], "text");
  EXPECT_EQ(j["files"][0]["content"], "{\"a\":1}");
  EXPECT_EQ(j["files"][0]["mime_type"], "application/json");
  EXPECT_EQ(j["files"][1]["encoding"], "base64");
  EXPECT_EQ(j["files"][1]["content"], Base64Encode(std::string("\x89PNG\r\n\x1a\n\0\0", 10)));
  EXPECT_EQ(j["files"][1]["mime_type"], "image/png");
  EXPECT_EQ(j["files"][1]["size"], 5000);
  EXPECT_EQ(j["files"][1]["truncated"], true);

  RunResult ok;
  ok.status = RunStatus::kOk;
  ok.signal = 0;
  EXPECT_TRUE(ToJson(ok)["signal"].is_null());
}

TEST(RunTypesTest, ResultRoundTrip) {
  RunResult in = SampleResult();
  // Round-trip through text, as over the runner channel.
  StatusOr<RunResult> out = RunResultFromJson(Json::parse(ToJson(in).dump()));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->status, in.status);
  EXPECT_EQ(out->message, in.message);
  EXPECT_EQ(out->language, in.language);
  EXPECT_EQ(out->signal, 9);
  EXPECT_EQ(out->exit_code, -1);
  EXPECT_EQ(out->stdout_text, in.stdout_text);
  EXPECT_TRUE(out->stdout_truncated);
  EXPECT_EQ(out->stderr_text, in.stderr_text);
  EXPECT_FALSE(out->stderr_truncated);
  EXPECT_EQ(out->compile_output, in.compile_output);
  EXPECT_TRUE(out->compile_output_truncated);
  EXPECT_EQ(out->wall_ms, 12u);
  EXPECT_EQ(out->cpu_ms, 10u);
  EXPECT_EQ(out->compile_ms, 3u);
  EXPECT_EQ(out->peak_memory_bytes, 123456u);
  ASSERT_EQ(out->files.size(), 2u);
  EXPECT_EQ(out->files[0].content, in.files[0].content);
  EXPECT_EQ(out->files[1].content, in.files[1].content);  // binary bytes survive
  EXPECT_EQ(out->files[1].size, 5000u);
  EXPECT_TRUE(out->files[1].truncated);
  EXPECT_EQ(out->files[1].mime_type, "image/png");
  EXPECT_EQ(out->files[1].name, "plot.png");

  RunResult with_code = InternalErrorResult("c", "cancelled", "stop");
  StatusOr<RunResult> back = RunResultFromJson(ToJson(with_code));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->error_code, "cancelled");
  EXPECT_EQ(back->signal, 0);
}

TEST(RunTypesTest, InvalidUtf8OutputBecomesValid) {
  RunResult r;
  r.status = RunStatus::kOk;
  r.stdout_text = "ok\xFF\xFE bad \xC3";
  r.stderr_text = "\xED\xA0\x80";
  r.compile_output = "x\x80y";
  Json j = ToJson(r);
  for (const char* key : {"stdout", "stderr", "compile_output"}) {
    EXPECT_TRUE(IsValidUtf8(j[key].get<std::string>())) << key;
  }
  EXPECT_NE(j["stdout"].get<std::string>().find("\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(j["stdout"].get<std::string>().substr(0, 2), "ok");
  // dump() would throw on ill-formed UTF-8 with the default handler.
  EXPECT_NO_THROW(j.dump());
}

TEST(RunTypesTest, FileEncodingChoice) {
  RunResult r;
  r.status = RunStatus::kOk;
  r.files = {
      {"a.txt", "plain text", 10, false, ""},
      {"nul.txt", std::string("a\0b", 3), 3, false, ""},    // NUL -> base64
      {"latin1.csv", "caf\xE9", 4, false, ""},              // invalid UTF-8 -> base64
      {"custom.bin", "x", 1, false, "application/x-mine"},  // explicit mime kept
      {"pic.JPEG", "\xFF\xD8", 2, false, ""},
      {"noext", "", 0, false, ""},
      {"dir.v2/file", "", 0, false, ""},
  };
  Json j = ToJson(r);
  EXPECT_EQ(j["files"][0]["encoding"], "text");
  EXPECT_EQ(j["files"][0]["mime_type"], "text/plain");
  EXPECT_EQ(j["files"][1]["encoding"], "base64");
  EXPECT_EQ(j["files"][2]["encoding"], "base64");
  EXPECT_EQ(j["files"][2]["mime_type"], "text/csv");
  EXPECT_EQ(j["files"][3]["mime_type"], "application/x-mine");
  EXPECT_EQ(j["files"][4]["mime_type"], "image/jpeg");
  EXPECT_EQ(j["files"][5]["mime_type"], "application/octet-stream");
  EXPECT_EQ(j["files"][6]["mime_type"], "application/octet-stream");
  StatusOr<RunResult> back = RunResultFromJson(j);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->files[1].content, std::string("a\0b", 3));
  EXPECT_EQ(back->files[2].content, "caf\xE9");

  for (auto [name, mime] : std::vector<std::pair<std::string, std::string>>{
           {"a.gif", "image/gif"}, {"a.svg", "image/svg+xml"}, {"a.html", "text/html"},
           {"a.pdf", "application/pdf"}, {"a.jpg", "image/jpeg"}}) {
    RunResult one;
    one.files = {{name, "x", 1, false, ""}};
    EXPECT_EQ(ToJson(one)["files"][0]["mime_type"], mime) << name;
  }
}

TEST(RunTypesTest, RequestRoundTrip) {
  RunRequest in;
  in.language = "python";
  in.code = "print(1)\n";
  in.stdin_data = "input";
  in.args = {"-v", "x y"};
  in.files = {{"data.csv", "a,b\n1,2\n"}, {"blob.bin", std::string("\0\xFF\x01", 3)}};
  in.output_globs = {"*.png", "out/result.json"};
  in.timeout_ms = 5000;
  in.memory_mb = 256;
  in.packages = {"team", "wheels"};
  Json j = ToJson(in);
  EXPECT_EQ(j["files"][0]["encoding"], "text");
  EXPECT_EQ(j["files"][1]["encoding"], "base64");
  EXPECT_EQ(j["output_files"][1], "out/result.json");
  EXPECT_FALSE(j.contains("code_encoding"));
  StatusOr<RunRequest> out = RunRequestFromJson(Json::parse(j.dump()));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->language, "python");
  EXPECT_EQ(out->code, in.code);
  EXPECT_EQ(out->stdin_data, "input");
  EXPECT_EQ(out->args, in.args);
  ASSERT_EQ(out->files.size(), 2u);
  EXPECT_EQ(out->files[0].name, "data.csv");
  EXPECT_EQ(out->files[0].content, in.files[0].content);
  EXPECT_EQ(out->files[1].content, in.files[1].content);
  EXPECT_EQ(out->output_globs, in.output_globs);
  EXPECT_EQ(out->timeout_ms, 5000u);
  EXPECT_EQ(out->memory_mb, 256u);
  EXPECT_EQ(out->isolation, "native");
  EXPECT_EQ(out->packages, in.packages);  // a runner host binds the same directories
}

TEST(RunTypesTest, SessionSpecKeepsItsPackageDirectories) {
  SessionSpec in{.id = "s_1", .language = "python", .packages = {"team"}};
  StatusOr<SessionSpec> out = SessionSpecFromJson(Json::parse(ToJson(in).dump()));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->packages, in.packages);
  EXPECT_FALSE(ToJson(SessionSpec{.id = "s_2", .language = "python"}).contains("packages"));
}

TEST(RunTypesTest, SessionSpecKeepsItsCodeMode) {
  SessionSpec in{.id = "s_1", .language = "python", .code_mode = true};
  StatusOr<SessionSpec> out = SessionSpecFromJson(Json::parse(ToJson(in).dump()));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(out->code_mode);  // a runner host opens a code-mode session too
  EXPECT_FALSE(ToJson(SessionSpec{.id = "s_2", .language = "python"}).contains("code_mode"));
  EXPECT_FALSE(SessionSpecFromJson(Json{{"id", "s_3"}, {"language", "python"}, {"code_mode", "yes"}}).ok());
}

TEST(RunTypesTest, RequestKeepsInvalidUtf8CodeAndStdinBytes) {
  RunRequest in;
  in.language = "c";
  in.code = "int main(){}// \xFF\xFE";
  in.stdin_data = std::string("\x80\0z", 3);
  Json j = ToJson(in);
  EXPECT_EQ(j["code_encoding"], "base64");
  EXPECT_EQ(j["stdin_encoding"], "base64");
  EXPECT_NO_THROW(j.dump());
  StatusOr<RunRequest> out = RunRequestFromJson(Json::parse(j.dump()));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->code, in.code);
  EXPECT_EQ(out->stdin_data, in.stdin_data);
}

TEST(RunTypesTest, RequestMinimalDefaults) {
  StatusOr<RunRequest> r = RunRequestFromJson(Json{{"language", "bash"}, {"code", "echo hi"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->timeout_ms, 0u);
  EXPECT_TRUE(r->files.empty());
  EXPECT_TRUE(r->args.empty());
  EXPECT_EQ(r->isolation, "native");
  EXPECT_TRUE(r->packages.empty());
}

void ExpectRequestError(const Json& j, const std::string& expected_message) {
  StatusOr<RunRequest> r = RunRequestFromJson(j);
  ASSERT_FALSE(r.ok()) << j.dump();
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), expected_message) << j.dump();
}

TEST(RunTypesTest, RequestBadFieldsRejected) {
  const Json base{{"language", "python"}, {"code", "print(1)"}};
  ExpectRequestError(Json::array(), "request must be a JSON object");
  ExpectRequestError(Json{{"code", "x"}}, "language is required");
  ExpectRequestError(Json{{"language", "python"}}, "code is required");
  Json j = base;
  j["language"] = 3;
  ExpectRequestError(j, "language must be a string");
  j = base;
  j["timeout_ms"] = -5;
  ExpectRequestError(j, "timeout_ms must be a non-negative integer");
  j = base;
  j["memory_mb"] = 1.5;
  ExpectRequestError(j, "memory_mb must be a non-negative integer");
  j = base;
  j["args"] = {"a", 1};
  ExpectRequestError(j, "args[1] must be a string");
  j = base;
  j["args"] = "a b";
  ExpectRequestError(j, "args must be an array of strings");
  j = base;
  j["files"] = Json::array({{{"name", "a"}, {"content", "x"}},
                            {{"name", "b"}, {"content", "x"}, {"encoding", "text"}},
                            {{"name", "c"}, {"content", "x"}, {"encoding", "hex"}}});
  ExpectRequestError(j, "files[2].encoding must be \"text\" or \"base64\"");
  j = base;
  j["files"] = Json::array({{{"name", "a"}, {"content", "!!!"}, {"encoding", "base64"}}});
  ExpectRequestError(j, "files[0].content is not valid base64");
  j = base;
  j["files"] = Json::array({{{"content", "x"}}});
  ExpectRequestError(j, "files[0].name is required");
  j = base;
  j["files"] = Json::array({"x"});
  ExpectRequestError(j, "files[0] must be a JSON object");
  j = base;
  j["files"] = Json{{"name", "x"}};
  ExpectRequestError(j, "files must be an array");
  j = base;
  j["output_files"] = Json::array({Json::object()});
  ExpectRequestError(j, "output_files[0] must be a string");
  j = base;
  j["stdin_encoding"] = "rot13";
  ExpectRequestError(j, "stdin_encoding must be \"text\" or \"base64\"");
}

TEST(RunTypesTest, ResultBadFieldsRejected) {
  EXPECT_FALSE(RunResultFromJson(Json::object()).ok());
  StatusOr<RunResult> r = RunResultFromJson(Json{{"status", "exploded"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("status"), std::string::npos);
  r = RunResultFromJson(Json{{"status", "ok"}, {"signal", "nine"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "signal must be an integer");
  r = RunResultFromJson(Json{{"status", "ok"}, {"stdout_truncated", 1}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "stdout_truncated must be a boolean");
  r = RunResultFromJson(
      Json{{"status", "ok"}, {"files", {{{"name", "a"}, {"content", "x"}, {"encoding", "gz"}}}}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "files[0].encoding must be \"text\" or \"base64\"");
}

TEST(RunTypesTest, LanguageInfoRoundTrip) {
  LanguageInfo in;
  in.name = "python";
  in.display_name = "Python";
  in.version = "3.11.2";
  in.compiled = false;
  in.tiers = {"native"};
  in.default_timeout_ms = 10000;
  in.default_memory_mb = 512;
  in.notes = "numpy importable";
  StatusOr<LanguageInfo> out = LanguageInfoFromJson(Json::parse(ToJson(in).dump()));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->name, in.name);
  EXPECT_EQ(out->display_name, in.display_name);
  EXPECT_EQ(out->version, in.version);
  EXPECT_EQ(out->compiled, in.compiled);
  EXPECT_EQ(out->tiers, in.tiers);
  EXPECT_EQ(out->default_timeout_ms, 10000u);
  EXPECT_EQ(out->default_memory_mb, 512u);
  EXPECT_EQ(out->notes, in.notes);
  EXPECT_TRUE(out->tier_defaults.empty());
  EXPECT_EQ(out->DefaultMemoryMb("wasm"), 512u) << "no tier defaults: the language's";

  in.tiers = {"native", "wasm"};
  in.tier_defaults = {{"native", {10000, 512}}, {"wasm", {30000, 1024}}};
  out = LanguageInfoFromJson(Json::parse(ToJson(in).dump()));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->DefaultMemoryMb("wasm"), 1024u);
  EXPECT_EQ(out->DefaultTimeoutMs("wasm"), 30000u);
  EXPECT_EQ(out->DefaultMemoryMb("native"), 512u);
  EXPECT_EQ(out->DefaultMemoryMb("other"), 512u);
  EXPECT_EQ(ToJson(in)["tier_defaults"]["wasm"]["default_memory_mb"], 1024);
  EXPECT_FALSE(LanguageInfoFromJson(Json{{"name", "c"}, {"tier_defaults", {{"wasm", 5}}}}).ok());
  EXPECT_FALSE(LanguageInfoFromJson(Json{{"name", "c"}, {"tier_defaults", {{"wasm", {{"default_memory_mb", "x"}}}}}}).ok());

  StatusOr<LanguageInfo> bad = LanguageInfoFromJson(Json{{"name", "c"}, {"compiled", "yes"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "compiled must be a boolean");
  EXPECT_FALSE(LanguageInfoFromJson(Json{{"display_name", "C"}}).ok());
}

}  // namespace
}  // namespace airlock::runtimes
