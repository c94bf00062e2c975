// A fixture for the WASM tier's interpreter tests through the CLI
// (`airlock run --json --isolation wasm --lang LANG`): a scratch directory
// of the test's own, and a skip when airlock-js or the interpreter's cached
// build is missing (wasm_ruby_test.cc, wasm_php_test.cc).
#ifndef AIRLOCK_TESTS_UNIT_WASM_CLI_FIXTURE_H_
#define AIRLOCK_TESTS_UNIT_WASM_CLI_FIXTURE_H_

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "cli_run_util.h"

namespace airlock::testing {

class WasmInterpreterCliTest : public ::testing::Test {
 protected:
  // Call first in SetUp: skips unless airlock-js and the cache's
  // `module` ("php/php.wasm") exist; makes the scratch directory.
  void Require(const std::string& module, const std::string& built_by) {
    namespace fs = std::filesystem;
    if (!fs::exists(std::string(AIRLOCK_BINARY_DIR) + "/airlock-js")) GTEST_SKIP() << "needs airlock-js";
    const char* env = std::getenv("AIRLOCK_WASM_CACHE");
    const std::string cache = env != nullptr ? env : "/var/cache/airlock/wasm";
    if (!fs::exists(cache + "/" + module)) GTEST_SKIP() << "needs " << module << " (" << built_by << ")";
    dir_ = fs::temp_directory_path() / ("airlock-wasm-cli-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  std::filesystem::path Write(const std::string& name, const std::string& content) {
    const std::filesystem::path p = dir_ / name;
    std::ofstream(p) << content;
    return p;
  }

  // `code` as the program of `airlock run --json --isolation wasm --lang
  // language EXTRA`.
  CliOutcome RunWasm(const std::string& language, const std::string& code, const std::string& extra) {
    const std::filesystem::path src = Write("main_src", code);
    return RunCommandLine(std::string(AIRLOCK_BINARY_DIR) + "/airlock run --json --isolation wasm --lang " +
                          language + " " + extra + " " + src.string() + " 2>/dev/null");
  }

  std::filesystem::path dir_;
};

}  // namespace airlock::testing

#endif  // AIRLOCK_TESTS_UNIT_WASM_CLI_FIXTURE_H_
