// Precompiled headers (runtimes/pch_cache.h): which programs get one (only
// those whose first line includes the header, so the translation unit is
// unchanged), that a header is built once and in the background, and that
// g++ inside the jail really uses it (-Winvalid-pch would say otherwise)
// with the same result as a compile without it.
#include "runtimes/pch_cache.h"

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

TEST(FirstSystemInclude, OnlyAnIncludeAsTheFirstLineCounts) {
  EXPECT_EQ(FirstSystemInclude("#include <iostream>\nint main() {}\n"), "iostream");
  EXPECT_EQ(FirstSystemInclude("\n\n  // hello\n/* a\n block */\n#  include   <bits/stdc++.h>  // all\nx"),
            "bits/stdc++.h");
  EXPECT_EQ(FirstSystemInclude("#include <vector>"), "vector");
  // Anything that could change what the header means comes first: no.
  EXPECT_EQ(FirstSystemInclude("#define _GLIBCXX_DEBUG 1\n#include <iostream>\n"), "");
  EXPECT_EQ(FirstSystemInclude("#pragma GCC optimize(\"O3\")\n#include <iostream>\n"), "");
  EXPECT_EQ(FirstSystemInclude("#include \"iostream\"\n"), "");
  EXPECT_EQ(FirstSystemInclude("#include <iostream> int x;\n"), "");
  EXPECT_EQ(FirstSystemInclude("// a continued comment \\\n#define X\n#include <iostream>\n"), "");
  EXPECT_EQ(FirstSystemInclude("#include <../etc/passwd>\n"), "");
  EXPECT_EQ(FirstSystemInclude("#include </etc/passwd>\n"), "");
  EXPECT_EQ(FirstSystemInclude("/* never closed\n#include <iostream>\n"), "");
  EXPECT_EQ(FirstSystemInclude("int main() {}\n"), "");
  EXPECT_EQ(FirstSystemInclude(""), "");
}

class PchCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access("/usr/bin/g++", X_OK) != 0) GTEST_SKIP() << "no g++";
    dir_ = fs::temp_directory_path() / ("airlock-pch-test-" + std::to_string(getpid()));
    auto host = tests::CreateJailHost();
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(*host);
    std::vector<LanguageSpec> languages;
    for (LanguageSpec& l : BuiltinLanguages()) {
      if (l.name != "cpp") continue;
      // Warning flags do not affect a precompiled header's validity; this one
      // makes g++ say when it does not use one it was given.
      l.compile->argv.insert(l.compile->argv.begin() + 1, "-Winvalid-pch");
      l.pch->headers = {"iostream"};  // one, to keep the build short
      languages.push_back(std::move(l));
    }
    auto executor = LocalExecutor::Create(*host_, {}, std::move(languages));
    ASSERT_TRUE(executor.ok()) << executor.status().ToString();
    executor_ = std::move(*executor);
    auto cache = PchCache::Open((dir_ / "pch").string());
    ASSERT_TRUE(cache.ok()) << cache.status().ToString();
    executor_->EnablePrecompiledHeaders(std::move(*cache));
  }
  void TearDown() override {
    executor_.reset();
    host_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  RunResult Run(const std::string& code) {
    RunRequest req;
    req.language = "cpp";
    req.code = code;
    req.timeout_ms = 20'000;
    CancelToken cancel;
    return executor_->Run(req, nullptr, cancel);
  }

  fs::path dir_;
  std::unique_ptr<jail::JailHost> host_;
  std::unique_ptr<LocalExecutor> executor_;
};

TEST_F(PchCacheTest, AProgramStartingWithTheHeaderIsCompiledWithItAndRunsTheSame) {
  const std::string hello = "#include <iostream>\nint main() { std::cout << \"hello \" << 42 << std::endl; }\n";
  PchCache& pch = *executor_->pch_cache();
  // Not built yet: this compile parses <iostream> and queues the build.
  RunResult first = Run(hello);
  ASSERT_EQ(first.status, RunStatus::kOk) << first.message << first.compile_output;
  EXPECT_EQ(first.stdout_text, "hello 42\n");
  EXPECT_EQ(pch.stats().used, 0u);
  pch.WaitIdle();
  EXPECT_EQ(pch.stats().built, 1u);
  EXPECT_EQ(pch.stats().failed, 0u);

  // Built: the compile in the jail gets it, and g++ takes it.
  RunResult second = Run(hello + "// another program\n");
  ASSERT_EQ(second.status, RunStatus::kOk) << second.message << second.compile_output;
  EXPECT_EQ(second.stdout_text, "hello 42\n");
  EXPECT_EQ(pch.stats().used, 1u);
  EXPECT_EQ(second.compile_output, "") << "g++ did not use the precompiled header";

  // Its files: readable by the jail's user, built once per toolchain.
  size_t gch = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "pch")) {
    if (e.path().extension() == ".gch") {
      ++gch;
      EXPECT_EQ(fs::status(e.path()).permissions() & fs::perms::others_read, fs::perms::others_read);
    }
  }
  EXPECT_EQ(gch, 1u);

  // The compiler's diagnostics and exit are the program's own.
  RunResult broken = Run("#include <iostream>\nint main() { std::cout << undeclared; }\n");
  EXPECT_EQ(broken.status, RunStatus::kCompileError);
  EXPECT_NE(broken.compile_output.find("undeclared"), std::string::npos) << broken.compile_output;
  EXPECT_EQ(pch.stats().used, 2u);
}

TEST_F(PchCacheTest, AnythingBeforeTheIncludeMeansNoPrecompiledHeader) {
  PchCache& pch = *executor_->pch_cache();
  pch.Prepare(*executor_->Find("cpp"));
  pch.WaitIdle();
  // _GLIBCXX_DEBUG changes what <vector> means: a precompiled header made
  // without it would change the program.
  RunResult r = Run("#define _GLIBCXX_DEBUG 1\n#include <iostream>\n#include <vector>\n"
                    "int main() { std::vector<int> v(1); std::cout << v.at(0) << \"\\n\"; }\n");
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message << r.compile_output;
  EXPECT_EQ(r.stdout_text, "0\n");
  EXPECT_EQ(pch.stats().used, 0u);
}

}  // namespace
}  // namespace airlock::runtimes
