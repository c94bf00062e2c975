// Opening a session and running a cell in it, for the session tests of
// both tiers (session_test.cc, wasm_session_test.cc).
#ifndef AIRLOCK_TESTS_UNIT_SESSION_TEST_UTIL_H_
#define AIRLOCK_TESTS_UNIT_SESSION_TEST_UTIL_H_

#include <unistd.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "runtimes/language.h"
#include "runtimes/local_executor.h"

namespace airlock::runtimes::sessiontest {

// Opens a session with a fresh id ("s_<tag>_<n>_<pid>") and 60 s of CPU;
// a failure is a test failure.
inline std::string OpenTestSession(LocalExecutor& executor, const std::string& tag, const std::string& language,
                                   const std::string& isolation, uint64_t memory_mb) {
  static int next = 0;
  const std::string id = "s_" + tag + "_" + std::to_string(next++) + "_" + std::to_string(getpid());
  Status st = executor.OpenSession(
      {.id = id, .language = language, .isolation = isolation, .memory_mb = memory_mb, .cpu_budget_ms = 60'000});
  EXPECT_TRUE(st.ok()) << st.ToString();
  return id;
}

// An executor with the built-in languages and the WASM tier's (where their
// builds are cached); null after a test failure.
inline std::unique_ptr<LocalExecutor> WasmTierExecutor(jail::JailHost& host, ExecutorLimits limits = {}) {
  std::vector<LanguageSpec> languages = BuiltinLanguages();
  for (LanguageSpec& l : WasmTierLanguages(std::string(AIRLOCK_BINARY_DIR) + "/airlock-js", DefaultWasmCacheDir())) {
    languages.push_back(std::move(l));
  }
  auto ex = LocalExecutor::Create(host, limits, std::move(languages));
  EXPECT_TRUE(ex.ok()) << ex.status().ToString();
  return ex.ok() ? std::move(ex).value() : nullptr;
}

// One cell of session `id`.
inline RunResult RunCell(LocalExecutor& executor, const std::string& id, const std::string& code,
                         uint64_t timeout_ms, std::vector<InputFile> files = {}, std::vector<std::string> globs = {},
                         std::string stdin_data = "") {
  RunRequest r;
  r.session_id = id;
  r.code = code;
  r.timeout_ms = timeout_ms;
  r.files = std::move(files);
  r.output_globs = std::move(globs);
  r.stdin_data = std::move(stdin_data);
  CancelToken cancel;
  return executor.Run(r, nullptr, cancel);
}

}  // namespace airlock::runtimes::sessiontest

#endif  // AIRLOCK_TESTS_UNIT_SESSION_TEST_UTIL_H_
