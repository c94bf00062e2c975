// WASI conformance: the C programs in tests/wasm/conformance, compiled to
// wasm32-wasi with clang-16 (Debian's wasi-libc) at test time and run by
// `airlock-js --wasi` over the in-memory filesystem, one TEST per area.
//
// Each program prints "ok <check>" per passing check and stops at the first
// failure with "FAIL <check>: <detail>" and exit status 1. The checks a
// program must report are read from its source (every CHECK("name", ...)),
// so a program that stops early, or a check that is never reached, fails
// the test as well. Skipped only when clang-16, the wasm32-wasi sysroot or
// airlock-js is not there.
//
// The same areas again from PHP (tests/wasm/conformance/php/NAME.php, run by
// the PHP WASI build, scripts/wasm/build_php.sh): what a PHP program sees of
// files, directories, links, the read-only tar, clocks, randomness, its
// arguments and environment, stdin, exit statuses, sockets, descriptor
// errors and the host. Skipped only when php.wasm is not cached.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace airlock {
namespace {

namespace fs = std::filesystem;

const fs::path kPrograms = fs::path(AIRLOCK_SOURCE_DIR) / "tests/wasm/conformance";
const std::string kAirlockJs = std::string(AIRLOCK_BINARY_DIR) + "/airlock-js";

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const fs::path& path, const std::string& data) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << data;
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// `cmd` through the shell; its exit status (-1 if it did not exit).
int Shell(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path p = fs::path(dir) / name;
    if (!dir.empty() && access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

bool HasLine(const std::string& text, const std::string& line) {
  for (const std::string& l : Lines(text)) {
    if (l == line) return true;
  }
  return false;
}

struct RunOptions {
  std::vector<std::string> args = {};                  // after argv[0]
  std::vector<std::string> env = {};                   // NAME=VALUE
  std::string stdin_bytes = {};
  std::map<std::string, std::string> work_files = {};  // copied into /work
  bool with_tar = false;                               // the test archive at /lib
};

struct Outcome {
  int rc = -1;
  std::string out, err;
  fs::path work;  // the host work dir after the run
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << "exit " << o.rc << "\n--- stdout\n" << o.out << "--- stderr\n" << o.err;
}

class WasiConformanceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("airlock-wasi-conformance-" + std::to_string(getpid())));
    fs::create_directories(*dir_);
    compiled_ = new std::map<std::string, std::string>;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
    delete compiled_;
    dir_ = nullptr;
    compiled_ = nullptr;
  }

  void SetUp() override {
    clang_ = FindOnPath("clang-16");
    if (clang_.empty()) GTEST_SKIP() << "needs clang-16 on PATH";
    if (!fs::exists("/usr/include/wasm32-wasi/stdio.h")) GTEST_SKIP() << "needs wasi-libc (/usr/include/wasm32-wasi)";
    if (!fs::exists(kAirlockJs)) GTEST_SKIP() << "needs " << kAirlockJs;
  }

  // tests/wasm/conformance/NAME.c compiled once per test suite; empty (and
  // a test failure) when it does not compile.
  std::string Compile(const std::string& name) {
    auto it = compiled_->find(name);
    if (it != compiled_->end()) return it->second;
    const fs::path src = kPrograms / (name + ".c");
    const fs::path wasm = *dir_ / (name + ".wasm");
    const fs::path log = *dir_ / (name + ".log");
    const int rc = Shell(Quote(clang_) + " --target=wasm32-wasi --sysroot=/usr -O2 -Wall -o " + Quote(wasm.string()) +
                         " " + Quote(src.string()) + " > " + Quote(log.string()) + " 2>&1");
    if (rc != 0 || !fs::exists(wasm)) {
      ADD_FAILURE() << "cannot compile " << src << ":\n" << ReadAll(log);
      return "";
    }
    (*compiled_)[name] = wasm.string();
    return wasm.string();
  }

  // The archive mounted at /lib: hello.txt, sub/data.txt and empty/.
  fs::path Tar() {
    const fs::path tar = *dir_ / "lib.tar";
    if (fs::exists(tar)) return tar;
    const fs::path src = *dir_ / "tar-src";
    WriteFile(src / "hello.txt", "hello from the tar\n");
    WriteFile(src / "sub/data.txt", "data\n");
    fs::create_directories(src / "empty");
    EXPECT_EQ(Shell("tar -C " + Quote(src.string()) + " -cf " + Quote(tar.string()) + " hello.txt sub empty"), 0);
    return tar;
  }

  Outcome Run(const std::string& name, const RunOptions& opts = {}) {
    const std::string wasm = Compile(name);
    if (wasm.empty()) return Outcome{};
    return RunModule(wasm, "", {name}, {}, opts);
  }

  // `airlock-js --wasi MODULE FLAGS ... -- ARGV... opts.args` over a fresh
  // work dir holding `files` and opts.work_files, with opts' stdin, env and
  // tar.
  Outcome RunModule(const std::string& module, const std::string& flags, const std::vector<std::string>& argv,
                    const std::map<std::string, std::string>& files, const RunOptions& opts) {
    Outcome o;
    const fs::path run = *dir_ / ("run-" + std::to_string(runs_++));  // fresh for every run
    fs::remove_all(run);
    o.work = run / "work";
    fs::create_directories(o.work);
    for (const auto& [path, data] : files) WriteFile(o.work / path, data);
    for (const auto& [path, data] : opts.work_files) WriteFile(o.work / path, data);
    WriteFile(run / "stdin", opts.stdin_bytes);
    std::string cmd = Quote(kAirlockJs) + " --wasi " + Quote(module) + " --deadline-ms 60000" + flags;
    if (opts.with_tar) cmd += " --tar " + Quote(Tar().string() + "=/lib");
    cmd += " --work " + Quote(o.work.string() + "=/work");
    for (const std::string& e : opts.env) cmd += " --env " + Quote(e);
    cmd += " --";
    for (const std::string& a : argv) cmd += " " + Quote(a);
    for (const std::string& a : opts.args) cmd += " " + Quote(a);
    cmd += " < " + Quote((run / "stdin").string()) + " > " + Quote((run / "stdout").string()) + " 2> " +
           Quote((run / "stderr").string());
    o.rc = Shell(cmd);
    o.out = ReadAll(run / "stdout");
    o.err = ReadAll(run / "stderr");
    return o;
  }

  // Every CHECK of NAME.c reported "ok", none failed, and the exit status
  // was 0.
  void ExpectAllChecksPass(const std::string& name, const Outcome& o) {
    static const std::regex kCheck(R"re(CHECK(?:_ERRNO)?\(\s*"([^"]+)")re");
    ExpectChecksOf(kPrograms / (name + ".c"), kCheck, o);
  }

  // Every check the program at `source` names (the regex's group 1)
  // reported "ok", none failed, and the exit status was 0.
  void ExpectChecksOf(const fs::path& source, const std::regex& check, const Outcome& o) {
    const std::string name = source.filename().string();
    EXPECT_EQ(o.rc, 0) << name << "\n" << o;
    for (const std::string& line : Lines(o.out)) {
      EXPECT_NE(line.rfind("FAIL", 0), 0u) << name << ": " << line;
    }
    const std::string src = ReadAll(source);
    size_t checks = 0;
    std::string missing;
    for (auto it = std::sregex_iterator(src.begin(), src.end(), check); it != std::sregex_iterator(); ++it) {
      ++checks;
      if (!HasLine(o.out, "ok " + std::string((*it)[1]))) missing += " " + std::string((*it)[1]);
    }
    EXPECT_GT(checks, 0u) << "no checks found in " << name;
    EXPECT_EQ(missing, "") << name << ": these checks did not pass\n" << o;
  }

  // Two runs' "sample " lines: 16 random bytes in hex each, different.
  static void ExpectDifferentSamples(const Outcome& a, const Outcome& b) {
    std::string sample_a, sample_b;
    for (const std::string& l : Lines(a.out)) if (l.rfind("sample ", 0) == 0) sample_a = l;
    for (const std::string& l : Lines(b.out)) if (l.rfind("sample ", 0) == 0) sample_b = l;
    EXPECT_EQ(sample_a.size(), 7u + 32u) << a;
    EXPECT_NE(sample_a, sample_b);
  }

  // 150 000 bytes of lines, and the line a program prints for them (its
  // length, its first 16 bytes, a 31-multiplier hash).
  static std::pair<std::string, std::string> StdinAndItsLine() {
    std::string input;
    for (int i = 0; input.size() < 150000; ++i) input += "line " + std::to_string(i) + " of the input\n";
    uint32_t hash = 0;
    for (unsigned char c : input) hash = hash * 31 + c;
    return {input, "stdin " + std::to_string(input.size()) + " bytes, first [" + input.substr(0, 16) + "], hash " +
                       std::to_string(hash)};
  }

  static fs::path* dir_;
  static std::map<std::string, std::string>* compiled_;
  static int runs_;
  std::string clang_;
};

fs::path* WasiConformanceTest::dir_ = nullptr;
std::map<std::string, std::string>* WasiConformanceTest::compiled_ = nullptr;
int WasiConformanceTest::runs_ = 0;

TEST_F(WasiConformanceTest, Files) {
  Outcome o = Run("files");
  ExpectAllChecksPass("files", o);
  // Files the guest wrote under /work come back to the host.
  EXPECT_EQ(ReadAll(o.work / "out.txt"), "written by the guest\n");
  EXPECT_EQ(ReadAll(o.work / "v.txt"), "abcdefg");
  EXPECT_FALSE(fs::exists(o.work / "gone.txt"));
}

TEST_F(WasiConformanceTest, StatFstatLstatAndTimes) { ExpectAllChecksPass("stat", Run("stat")); }

TEST_F(WasiConformanceTest, DirectoriesReaddirRenameUnlink) {
  Outcome o = Run("dirs");
  ExpectAllChecksPass("dirs", o);
  EXPECT_EQ(ReadAll(o.work / "d2/in"), "I");
  EXPECT_EQ(ReadAll(o.work / "empty/c"), "A");
  EXPECT_FALSE(fs::exists(o.work / "many"));
}

TEST_F(WasiConformanceTest, NoSymlinksAndNoDotDotPastAPreopen) {
  Outcome o = Run("links");
  ExpectAllChecksPass("links", o);
  EXPECT_FALSE(fs::exists(o.work.parent_path() / "moved.txt"));
  EXPECT_FALSE(fs::exists(o.work.parent_path() / "new.txt"));
}

TEST_F(WasiConformanceTest, ReadOnlyTarPreopen) {
  Outcome o = Run("readonly", {.with_tar = true});
  ExpectAllChecksPass("readonly", o);
  EXPECT_TRUE(fs::exists(o.work / "mine.txt"));
  EXPECT_FALSE(fs::exists(o.work / "stolen.txt"));
}

TEST_F(WasiConformanceTest, ClocksSleepAndSchedYield) { ExpectAllChecksPass("clocks", Run("clocks")); }

TEST_F(WasiConformanceTest, RandomVariesWithinAndAcrossRuns) {
  Outcome a = Run("random"), b = Run("random");
  ExpectAllChecksPass("random", a);
  ExpectAllChecksPass("random", b);
  ExpectDifferentSamples(a, b);
}

TEST_F(WasiConformanceTest, ArgsAndEnvironAreExactlyWhatWasGiven) {
  Outcome o = Run("args_env", {.args = {"a b", "", "q\"uote", "--", "-x"}});
  ExpectAllChecksPass("args_env", o);
  EXPECT_EQ(o.out.substr(0, o.out.find("ok ")),
            "argc 6\narg 0 [args_env]\narg 1 [a b]\narg 2 []\narg 3 [q\"uote]\narg 4 [--]\narg 5 [-x]\n");
  // No environment unless given: not even the host's.
  EXPECT_TRUE(HasLine(o.out, "envc 0")) << o;
  EXPECT_TRUE(HasLine(o.out, "getenv AIRLOCK_A [(null)]")) << o;

  o = Run("args_env", {.env = {"AIRLOCK_A=1", "B=x=y", "PATH=/given", "EMPTY="}});
  ExpectAllChecksPass("args_env", o);
  EXPECT_NE(o.out.find("env [AIRLOCK_A=1]\nenv [B=x=y]\nenv [PATH=/given]\nenv [EMPTY=]\nenvc 4\n"),
            std::string::npos)
      << o;
  EXPECT_TRUE(HasLine(o.out, "getenv AIRLOCK_A [1]")) << o;
}

TEST_F(WasiConformanceTest, StdinReadToTheEndAndPolled) {
  const auto [input, line] = StdinAndItsLine();
  Outcome o = Run("stdin", {.stdin_bytes = input});
  ExpectAllChecksPass("stdin", o);
  EXPECT_TRUE(HasLine(o.out, line)) << o;

  o = Run("stdin");
  ExpectAllChecksPass("stdin", o);
  EXPECT_TRUE(HasLine(o.out, "stdin 0 bytes, first [], hash 0")) << o;
}

TEST_F(WasiConformanceTest, ExitStatuses) {
  const std::vector<std::pair<std::string, int>> cases = {
      {"exit0", 0}, {"exit3", 3}, {"exit255", 255}, {"_exit9", 9}, {"return0", 0}, {"return7", 7}, {"other", 42},
  };
  for (const auto& [how, code] : cases) {
    Outcome o = Run("exit", {.args = {how}});
    EXPECT_EQ(o.rc, code) << how << "\n" << o;
    EXPECT_EQ(o.out, "leaving by " + how + "\n") << how;  // stdio flushed on the way out
  }
  Outcome o = Run("exit", {.args = {"atexit4"}});
  EXPECT_EQ(o.rc, 4) << o;
  EXPECT_EQ(o.out, "leaving by atexit4\natexit handler ran\n");
  o = Run("exit", {.args = {"abort"}});
  EXPECT_EQ(o.rc, 134) << o;
  EXPECT_NE(o.err.find("wasm trap"), std::string::npos) << o;
}

TEST_F(WasiConformanceTest, SocketsFail) {
  ExpectAllChecksPass("sockets", Run("sockets"));
  // A module importing socket calls the host does not have does not start.
  Outcome o = Run("sockets_import");
  EXPECT_EQ(o.rc, 2) << o;
  EXPECT_NE(o.err.find("invalid module"), std::string::npos) << o;
  EXPECT_EQ(o.out.find("sock_open returned"), std::string::npos) << o;
}

TEST_F(WasiConformanceTest, DescriptorErrors) { ExpectAllChecksPass("fd_errors", Run("fd_errors")); }

TEST_F(WasiConformanceTest, HostPathsAreInvisible) {
  ExpectAllChecksPass("escapes", Run("escapes", {.work_files = {{"input.txt", "input\n"}}, .with_tar = true}));
}

// ---------------------------------------------------------------- PHP

class PhpConformanceTest : public WasiConformanceTest {
 protected:
  void SetUp() override {
    if (!fs::exists(kAirlockJs)) GTEST_SKIP() << "needs " << kAirlockJs;
    const char* env = std::getenv("AIRLOCK_WASM_CACHE");
    php_ = std::string(env != nullptr ? env : "/var/cache/airlock/wasm") + "/php/php.wasm";
    if (!fs::exists(php_)) GTEST_SKIP() << "needs php.wasm (scripts/wasm/build_php.sh)";
  }

  // tests/wasm/conformance/php/NAME.php as /work/main.php (beside
  // check.php), run as `php main.php ARGS` by php.wasm.
  Outcome RunPhp(const std::string& name, const RunOptions& opts = {}) {
    return RunModule(php_, " --heap-mb 256 --wasm-max-mb 256", {"php", "-d", "display_errors=stderr", "main.php"},
                     {{"main.php", ReadAll(kPrograms / "php" / (name + ".php"))},
                      {"check.php", ReadAll(kPrograms / "php" / "check.php")}},
                     opts);
  }

  // Every check('...') of NAME.php reported "ok", none failed, exit 0.
  void ExpectAllPhpChecksPass(const std::string& name, const Outcome& o) {
    static const std::regex kCheck(R"re(check\(\s*'([^']+)')re");
    ExpectChecksOf(kPrograms / "php" / (name + ".php"), kCheck, o);
  }

  std::string php_;
};

TEST_F(PhpConformanceTest, Files) {
  Outcome o = RunPhp("files");
  ExpectAllPhpChecksPass("files", o);
  EXPECT_EQ(ReadAll(o.work / "out.txt"), "written by the guest\n");
  EXPECT_EQ(ReadAll(o.work / "v.txt"), "abcdefg");
  EXPECT_FALSE(fs::exists(o.work / "renamed.txt"));
}

TEST_F(PhpConformanceTest, StatAndTimes) { ExpectAllPhpChecksPass("stat", RunPhp("stat")); }

TEST_F(PhpConformanceTest, Directories) {
  Outcome o = RunPhp("dirs");
  ExpectAllPhpChecksPass("dirs", o);
  EXPECT_EQ(ReadAll(o.work / "d2/in"), "I");
  EXPECT_EQ(ReadAll(o.work / "empty/c"), "A");
  EXPECT_FALSE(fs::exists(o.work / "many"));
}

TEST_F(PhpConformanceTest, NoSymlinksAndNoDotDotPastAPreopen) {
  Outcome o = RunPhp("links");
  ExpectAllPhpChecksPass("links", o);
  for (const char* name : {"moved.txt", "new.txt", "new2.txt"}) {
    EXPECT_FALSE(fs::exists(o.work.parent_path() / name)) << name;
    EXPECT_FALSE(fs::exists(o.work.parent_path().parent_path() / name)) << name;
  }
}

TEST_F(PhpConformanceTest, ReadOnlyTarPreopen) {
  Outcome o = RunPhp("readonly", {.with_tar = true});
  ExpectAllPhpChecksPass("readonly", o);
  EXPECT_TRUE(fs::exists(o.work / "mine.txt"));
  EXPECT_FALSE(fs::exists(o.work / "stolen.txt"));
}

TEST_F(PhpConformanceTest, ClocksAndSleep) { ExpectAllPhpChecksPass("clocks", RunPhp("clocks")); }

TEST_F(PhpConformanceTest, RandomVariesWithinAndAcrossRuns) {
  Outcome a = RunPhp("random"), b = RunPhp("random");
  ExpectAllPhpChecksPass("random", a);
  ExpectAllPhpChecksPass("random", b);
  ExpectDifferentSamples(a, b);
}

TEST_F(PhpConformanceTest, ArgsAndEnvironmentAreExactlyWhatWasGiven) {
  Outcome o = RunPhp("args_env", {.args = {"a b", "", "q\"uote", "--", "-x"}});
  ExpectAllPhpChecksPass("args_env", o);
  EXPECT_EQ(o.out.substr(0, o.out.find("ok ")),
            "argc 6\narg 0 [main.php]\narg 1 [a b]\narg 2 []\narg 3 [q\"uote]\narg 4 [--]\narg 5 [-x]\nenvc 0\n"
            "getenv AIRLOCK_A [(false)]\n");
  o = RunPhp("args_env", {.env = {"AIRLOCK_A=1", "B=x=y", "PATH=/given", "EMPTY="}});
  ExpectAllPhpChecksPass("args_env", o);
  EXPECT_NE(o.out.find("env [AIRLOCK_A=1]\nenv [B=x=y]\nenv [PATH=/given]\nenv [EMPTY=]\nenvc 4\n"),
            std::string::npos)
      << o;
  EXPECT_TRUE(HasLine(o.out, "getenv AIRLOCK_A [1]")) << o;
}

TEST_F(PhpConformanceTest, StdinReadToTheEnd) {
  const auto [input, line] = StdinAndItsLine();
  Outcome o = RunPhp("stdin", {.stdin_bytes = input});
  ExpectAllPhpChecksPass("stdin", o);
  EXPECT_TRUE(HasLine(o.out, line)) << o;
  o = RunPhp("stdin");
  ExpectAllPhpChecksPass("stdin", o);
  EXPECT_TRUE(HasLine(o.out, "stdin 0 bytes, first [], hash 0")) << o;
}

TEST_F(PhpConformanceTest, ExitStatusesThroughTheBailout) {
  const std::vector<std::pair<std::string, int>> cases = {
      {"exit0", 0}, {"exit3", 3}, {"exit255", 255}, {"return", 0}, {"other", 42}, {"fatal", 255}, {"exception", 255},
  };
  for (const auto& [how, code] : cases) {
    Outcome o = RunPhp("exit", {.args = {how}});
    EXPECT_EQ(o.rc, code) << how << "\n" << o;
    EXPECT_EQ(o.out.rfind("leaving by " + how + "\n", 0), 0u) << how << "\n" << o;
  }
  Outcome o = RunPhp("exit", {.args = {"shutdown4"}});
  EXPECT_EQ(o.rc, 4) << o;
  EXPECT_EQ(o.out, "leaving by shutdown4\nshutdown ran\n");
  o = RunPhp("exit", {.args = {"fatal"}});
  EXPECT_NE(o.err.find("Call to undefined function nope()"), std::string::npos) << o;
}

TEST_F(PhpConformanceTest, SocketsFail) { ExpectAllPhpChecksPass("sockets", RunPhp("sockets")); }

TEST_F(PhpConformanceTest, DescriptorErrors) { ExpectAllPhpChecksPass("fd_errors", RunPhp("fd_errors")); }

TEST_F(PhpConformanceTest, HostPathsAreInvisible) {
  ExpectAllPhpChecksPass("escapes", RunPhp("escapes", {.work_files = {{"input.txt", "input\n"}}}));
}

// Every PHP program is run by a test above, one per C program's area.
TEST_F(PhpConformanceTest, EveryProgramIsCovered) {
  const std::set<std::string> covered = {"check", "files", "stat", "dirs", "links", "readonly", "clocks",
                                         "random", "args_env", "stdin", "exit", "sockets", "fd_errors", "escapes"};
  std::set<std::string> found;
  for (const auto& entry : fs::directory_iterator(kPrograms / "php")) found.insert(entry.path().stem().string());
  EXPECT_EQ(found, covered);
}

// Every program in tests/wasm/conformance is run by a test above.
TEST_F(WasiConformanceTest, EveryProgramIsCovered) {
  const std::set<std::string> covered = {"files",  "stat",    "dirs",          "links",     "readonly", "clocks",
                                         "random", "args_env", "stdin",        "exit",      "sockets",
                                         "sockets_import",     "fd_errors",     "escapes"};
  std::set<std::string> found;
  for (const auto& entry : fs::directory_iterator(kPrograms)) {
    if (entry.path().extension() == ".c") found.insert(entry.path().stem().string());
  }
  EXPECT_EQ(found, covered);
}

}  // namespace
}  // namespace airlock
