// The executor with a build cache (runtimes/build_cache.h): a program built
// once is not compiled again, gives the same result and the same compiler
// diagnostics; any change to the source or to an input file the compiler
// could read is a fresh compile; the cached native binary is executable.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "jail/host.h"
#include "runtimes/local_executor.h"
#include "test_jail_host.h"

namespace airlock::runtimes {
namespace {

namespace fs = std::filesystem;

class ExecutorBuildCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("airlock-exec-build-cache-" + std::to_string(getpid()));
    auto host = tests::CreateJailHost();
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(*host);
    std::vector<LanguageSpec> languages = BuiltinLanguages();
    for (LanguageSpec& l : WasmTierLanguages(std::string(AIRLOCK_BINARY_DIR) + "/airlock-js", DefaultWasmCacheDir())) {
      languages.push_back(std::move(l));
    }
    auto executor = LocalExecutor::Create(*host_, {}, std::move(languages));
    ASSERT_TRUE(executor.ok()) << executor.status().ToString();
    executor_ = std::move(*executor);
    auto cache = BuildCache::Open({.dir = (dir_ / "cache").string(), .max_bytes = 64u << 20});
    ASSERT_TRUE(cache.ok()) << cache.status().ToString();
    executor_->EnableBuildCache(std::move(*cache));
  }
  void TearDown() override {
    executor_.reset();
    host_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  RunResult Run(const std::string& language, const std::string& code, std::vector<InputFile> files = {}) {
    RunRequest req;
    req.language = language;
    req.code = code;
    req.files = std::move(files);
    CancelToken cancel;
    return executor_->Run(req, nullptr, cancel);
  }

  fs::path dir_;
  std::unique_ptr<jail::JailHost> host_;
  std::unique_ptr<LocalExecutor> executor_;
};

TEST_F(ExecutorBuildCacheTest, TheSameProgramIsCompiledOnceAndKeepsItsWarnings) {
  if (executor_->Find("c") == nullptr) GTEST_SKIP() << "no gcc";
  const std::string code =
      "#include <stdio.h>\n#include \"k.h\"\nint main(void) { int unused; printf(\"%d\\n\", K); return 0; }\n";
  RunResult first = Run("c", code, {{"k.h", "#define K 41\n"}});
  ASSERT_EQ(first.status, RunStatus::kOk) << first.message << first.compile_output << first.stderr_text;
  EXPECT_EQ(first.stdout_text, "41\n");
  EXPECT_GT(first.compile_ms, 0u);
  EXPECT_NE(first.compile_output.find("unused"), std::string::npos) << first.compile_output;
  EXPECT_EQ(executor_->build_cache()->stats().puts, 1u);

  RunResult second = Run("c", code, {{"k.h", "#define K 41\n"}});
  ASSERT_EQ(second.status, RunStatus::kOk) << second.message << second.stderr_text;
  EXPECT_EQ(second.stdout_text, "41\n");  // the cached binary ran (it had to be executable)
  EXPECT_EQ(second.compile_ms, 0u) << "compiled again";
  EXPECT_EQ(second.compile_output, first.compile_output);
  EXPECT_EQ(executor_->build_cache()->stats().hits, 1u);

  // A header the source includes is part of the key.
  RunResult changed = Run("c", code, {{"k.h", "#define K 42\n"}});
  ASSERT_EQ(changed.status, RunStatus::kOk) << changed.message << changed.stderr_text;
  EXPECT_EQ(changed.stdout_text, "42\n");
  EXPECT_GT(changed.compile_ms, 0u);
  // So is the source.
  RunResult other = Run("c", code + "\n", {{"k.h", "#define K 41\n"}});
  EXPECT_GT(other.compile_ms, 0u);
  EXPECT_EQ(executor_->build_cache()->stats().hits, 1u);
}

TEST_F(ExecutorBuildCacheTest, CompileErrorsAreNeverCached) {
  if (executor_->Find("c") == nullptr) GTEST_SKIP() << "no gcc";
  for (int i = 0; i < 2; ++i) {
    RunResult r = Run("c", "int main(void) { return missing_symbol; }");
    EXPECT_EQ(r.status, RunStatus::kCompileError);
    EXPECT_NE(r.compile_output.find("missing_symbol"), std::string::npos);
  }
  EXPECT_EQ(executor_->build_cache()->stats().puts, 0u);
  EXPECT_EQ(executor_->build_cache()->stats().hits, 0u);
}

TEST_F(ExecutorBuildCacheTest, TiersHaveTheirOwnEntries) {
  if (executor_->Find("c", false, "wasm") == nullptr) GTEST_SKIP() << "no WASM tier here";
  const std::string code = "#include <stdio.h>\nint main(void) { puts(\"tier\"); return 0; }\n";
  for (const char* tier : {"native", "wasm", "native", "wasm"}) {
    RunRequest req;
    req.language = "c";
    req.code = code;
    req.isolation = tier;
    CancelToken cancel;
    RunResult r = executor_->Run(req, nullptr, cancel);
    ASSERT_EQ(r.status, RunStatus::kOk) << tier << ": " << r.message << r.stderr_text;
    EXPECT_EQ(r.stdout_text, "tier\n");
  }
  EXPECT_EQ(executor_->build_cache()->stats().puts, 2u);
  EXPECT_EQ(executor_->build_cache()->stats().hits, 2u);
}

}  // namespace
}  // namespace airlock::runtimes
