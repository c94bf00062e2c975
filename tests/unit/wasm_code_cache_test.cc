// The WASM tier's compiled-code cache: the file format (wasm/code_cache_file.h),
// airlock-js writing and loading it (--wasm-code-cache, --code-cache), and the
// runner's store handing it to jails (runtimes/wasm_code_store.h).
//
// "Loaded instead of compiled" is shown, not assumed: a cache file holding
// the code of one program, re-keyed to another module, makes that module's
// run print the first program's output. A stale, foreign or unsafe file is
// never used: the run prints its own output.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/cancel.h"
#include "cli_run_util.h"
#include "containment_env.h"
#include "jail/host.h"
#include "runtimes/language.h"
#include "runtimes/local_executor.h"
#include "runtimes/wasm_code_store.h"
#include "selftest/containment_suite.h"
#include "test_jail_host.h"
#include "wasm/code_cache_file.h"
#include "wasm/tar_index.h"

namespace airlock {
namespace {

namespace fs = std::filesystem;
using testing::RunCommandLine;

const std::string kAirlockJs = std::string(AIRLOCK_BINARY_DIR) + "/airlock-js";

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag)
      : path_(fs::temp_directory_path() / ("airlock-code-" + tag + "-" + std::to_string(getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
    fs::permissions(path_, fs::perms(0755));
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

void WriteFile(const std::string& path, const std::string& content) { std::ofstream(path) << content; }

std::string U64(uint64_t v) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A WASI program printing `text`, compiled on the host by clang-16.
bool BuildWasiProgram(const std::string& text, const std::string& out) {
  const std::string src = out + ".c";
  WriteFile(src, "#include <stdio.h>\nint main(void) { puts(\"" + text + "\"); return 0; }\n");
  return RunCommandLine("/usr/bin/clang-16 --target=wasm32-wasi --sysroot=/usr -O2 -o " + out + " " + src +
                        " 2>&1")
             .rc == 0;
}

// ---------------------------------------------------------------- the file

TEST(CodeCacheFileTest, WhatWasWrittenIsReadOnlyUnderItsOwnKey) {
  ScratchDir dir("file");
  WriteFile(dir / "m.wasm", "not really a module");
  auto key = wasm::CodeCacheKeyFor(dir / "m.wasm", 256u << 20, "engine-1");
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  ASSERT_TRUE(wasm::WriteCodeCache(dir / "m.code", *key, "machine code").ok());

  auto read = wasm::ReadCodeCache(dir / "m.code", *key);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->encoding(), "machine code");
  auto stored = wasm::ReadCodeCacheKey(dir / "m.code");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->build_id, "engine-1");
  EXPECT_EQ(stored->memory_cap_bytes, 256u << 20);
  struct stat st{};
  ASSERT_EQ(stat((dir / "m.code").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);

  // Any part of the key that differs: another engine build, memory cap,
  // module size, modification time or inode.
  std::vector<wasm::CodeCacheKey> others(5, *key);
  others[0].build_id = "engine-2";
  others[1].memory_cap_bytes = 512u << 20;
  others[2].module_size += 1;
  others[3].module_mtime_ns += 1;
  others[4].module_inode += 1;
  for (const wasm::CodeCacheKey& other : others) {
    auto r = wasm::ReadCodeCache(dir / "m.code", other);
    EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().ToString();
  }
  // A rebuilt module (new inode and time) no longer matches the old key.
  fs::remove(dir / "m.wasm");
  WriteFile(dir / "m.wasm", "not really a module");
  auto rebuilt = wasm::CodeCacheKeyFor(dir / "m.wasm", 256u << 20, "engine-1");
  ASSERT_TRUE(rebuilt.ok());
  EXPECT_FALSE(wasm::ReadCodeCache(dir / "m.code", *rebuilt).ok());

  // Cut short, or not there.
  const std::string whole = ReadFile(dir / "m.code");
  WriteFile(dir / "cut.code", whole.substr(0, whole.size() - 3));
  EXPECT_EQ(wasm::ReadCodeCache(dir / "cut.code", *key).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(wasm::ReadCodeCache(dir / "none.code", *key).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(wasm::CodeCacheKeyFor(dir / "m.wasm", 1, "").ok()) << "no build id, no key";
}

// ---------------------------------------------------------------- airlock-js

class EngineCodeCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kAirlockJs)) GTEST_SKIP() << "needs airlock-js";
    if (!fs::exists("/usr/bin/clang-16")) GTEST_SKIP() << "needs clang-16 (scripts/setup.sh)";
    ASSERT_TRUE(BuildWasiProgram("I am A", dir_ / "a.wasm"));
    ASSERT_TRUE(BuildWasiProgram("I am B", dir_ / "b.wasm"));
  }
  testing::CliOutcome Run(const std::string& module, const std::string& extra) {
    return RunCommandLine(kAirlockJs + " --wasi " + module + " " + extra + " -- prog 2>&1");
  }
  // `code`'s encoding under `module`'s key (the same engine build).
  void Rekey(const std::string& code, const std::string& module, const std::string& out) {
    auto stored = wasm::ReadCodeCacheKey(code);
    ASSERT_TRUE(stored.ok()) << stored.status().ToString();
    auto mapped = wasm::ReadCodeCache(code, *stored);
    ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
    auto key = wasm::CodeCacheKeyFor(module, stored->memory_cap_bytes, stored->build_id);
    ASSERT_TRUE(key.ok());
    ASSERT_TRUE(wasm::WriteCodeCache(out, *key, mapped->encoding()).ok());
  }
  ScratchDir dir_{"engine"};
};

TEST_F(EngineCodeCacheTest, TheCodeIsLoadedInsteadOfCompilingTheModule) {
  testing::CliOutcome w = RunCommandLine(kAirlockJs + " --wasm-code-cache " + (dir_ / "a.wasm") + " " +
                                         (dir_ / "a.code") + " --wasm-max-mb 256 2>&1");
  ASSERT_EQ(w.rc, 0) << w.out;
  EXPECT_NE(w.out.find("bytes of code"), std::string::npos) << w.out;
  // A second writer keeps the file, and removes what a killed writer left.
  WriteFile(dir_ / "a.code.tmp.999999", "half a file");
  testing::CliOutcome again = RunCommandLine(kAirlockJs + " --wasm-code-cache " + (dir_ / "a.wasm") + " " +
                                             (dir_ / "a.code") + " --wasm-max-mb 256 2>&1");
  ASSERT_EQ(again.rc, 0) << again.out;
  EXPECT_NE(again.out.find("up to date"), std::string::npos) << again.out;
  EXPECT_FALSE(fs::exists(dir_ / "a.code.tmp.999999"));
  EXPECT_TRUE(fs::exists(dir_ / "a.code"));

  // A's own code runs A.
  EXPECT_EQ(Run(dir_ / "a.wasm", "--code-cache " + (dir_ / "a.code")).out, "I am A\n");
  // A's code keyed to B: B's run is A's code. So the engine loaded the code
  // and did not compile b.wasm.
  Rekey(dir_ / "a.code", dir_ / "b.wasm", dir_ / "a-as-b.code");
  EXPECT_EQ(Run(dir_ / "b.wasm", "--code-cache " + (dir_ / "a-as-b.code")).out, "I am A\n");
  // The same file for B with another memory cap, or A's file for B (made
  // for another module): not used, B runs its own code.
  EXPECT_EQ(Run(dir_ / "b.wasm", "--wasm-max-mb 128 --code-cache " + (dir_ / "a-as-b.code")).out, "I am B\n");
  EXPECT_EQ(Run(dir_ / "b.wasm", "--code-cache " + (dir_ / "a.code")).out, "I am B\n");
  // Garbage with a matching key is rejected by the engine; B compiles.
  auto key = wasm::ReadCodeCacheKey(dir_ / "a-as-b.code");
  ASSERT_TRUE(key.ok());
  ASSERT_TRUE(wasm::WriteCodeCache(dir_ / "junk.code", *key, std::string(4096, '\x5a')).ok());
  EXPECT_EQ(Run(dir_ / "b.wasm", "--code-cache " + (dir_ / "junk.code")).out, "I am B\n");
  // No file at all: compiled, as without the flag.
  EXPECT_EQ(Run(dir_ / "b.wasm", "--code-cache " + (dir_ / "none.code")).out, "I am B\n");
}

TEST_F(EngineCodeCacheTest, AModuleThatDoesNotCompileWritesNothing) {
  WriteFile(dir_ / "bad.wasm", std::string("\0asm\x01\0\0\0\x01\x05garbage", 18));
  testing::CliOutcome w = RunCommandLine(kAirlockJs + " --wasm-code-cache " + (dir_ / "bad.wasm") + " " +
                                         (dir_ / "bad.code") + " 2>&1");
  EXPECT_NE(w.rc, 0) << w.out;
  EXPECT_FALSE(fs::exists(dir_ / "bad.code"));
}

// ---------------------------------------------------------------- the runner's store

class WasmCodeStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kAirlockJs)) GTEST_SKIP() << "needs airlock-js";
    for (runtimes::LanguageSpec& l : runtimes::WasmTierLanguages(kAirlockJs, runtimes::DefaultWasmCacheDir())) {
      if (l.name == "python") python_ = l;
    }
    if (python_.wasm_module.empty()) GTEST_SKIP() << "needs the CPython WASI build (scripts/wasm/build_python.sh)";
    auto host = tests::CreateJailHost();
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(host).value();
  }

  std::unique_ptr<runtimes::LocalExecutor> Executor() {
    auto ex = runtimes::LocalExecutor::Create(*host_, {}, {python_});
    EXPECT_TRUE(ex.ok()) << ex.status().ToString();
    return ex.ok() ? std::move(ex).value() : nullptr;
  }

  runtimes::RunResult RunPython(runtimes::LocalExecutor& ex, const std::string& code) {
    runtimes::RunRequest r;
    r.language = "python";
    r.isolation = "wasm";
    r.code = code;
    r.timeout_ms = 20'000;
    CancelToken cancel;
    return ex.Run(r, nullptr, cancel);
  }

  // An executor with a store in dir_/code, its files written; *store is
  // the store, owned by the executor.
  std::unique_ptr<runtimes::LocalExecutor> ExecutorWithStore(runtimes::WasmCodeStore** store) {
    auto opened = runtimes::WasmCodeStore::Open(dir_ / "code", kAirlockJs);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<runtimes::LocalExecutor> ex = Executor();
    if (!opened.ok() || ex == nullptr) return nullptr;
    *store = opened->get();
    ex->EnableWasmCodeStore(std::move(*opened));
    (*store)->WaitIdle();
    return ex;
  }

  runtimes::LanguageSpec python_;
  std::unique_ptr<jail::JailHost> host_;
  ScratchDir dir_{"store"};
};

TEST_F(WasmCodeStoreTest, RunsLoadTheCodeTheStoreWroteAndOnlyWhileItIsTheRunnersOwn) {
  runtimes::WasmCodeStore* s = nullptr;
  std::unique_ptr<runtimes::LocalExecutor> ex = ExecutorWithStore(&s);
  ASSERT_NE(ex, nullptr);
  // CPython's code (and its session reactor's, when the build has one),
  // its standard library's index and the engine's self-hosted code.
  EXPECT_EQ(s->stats().written, python_.wasm_session_module.empty() ? 3u : 4u);
  EXPECT_EQ(s->stats().failed, 0u);
  const uint64_t heap_mb = python_.default_memory_mb - 64;
  if (!python_.wasm_session_module.empty()) {
    EXPECT_EQ(s->JailPath("python-session", heap_mb),
              std::string(runtimes::kJailWasmCodeDir) + "/python-session." + std::to_string(heap_mb) + "mb.code");
  }
  const std::string jail_path = s->JailPath("python", heap_mb);
  ASSERT_EQ(jail_path, std::string(runtimes::kJailWasmCodeDir) + "/python." + std::to_string(heap_mb) + "mb.code");
  EXPECT_EQ(s->JailPath("python", heap_mb + 1), "") << "written for the default memory only";
  const std::string file = dir_ / ("code/" + fs::path(jail_path).filename().string());

  runtimes::RunResult r = RunPython(*ex, "print(6 * 7)");
  EXPECT_EQ(r.status, runtimes::RunStatus::kOk) << r.message << r.stderr_text;
  EXPECT_EQ(r.stdout_text, "42\n");

  // Replace the code with a C program's, keyed to python.wasm: the run is
  // that program. The runner hands the file to the jail and the engine
  // loads it instead of compiling CPython.
  if (!fs::exists("/usr/bin/clang-16")) GTEST_SKIP() << "needs clang-16 for the rest";
  ASSERT_TRUE(BuildWasiProgram("not python", dir_ / "c.wasm"));
  ASSERT_EQ(RunCommandLine(kAirlockJs + " --wasm-code-cache " + (dir_ / "c.wasm") + " " + (dir_ / "c.code") +
                           " --wasm-max-mb " + std::to_string(heap_mb))
                .rc,
            0);
  auto stored = wasm::ReadCodeCacheKey(dir_ / "c.code");
  ASSERT_TRUE(stored.ok());
  auto mapped = wasm::ReadCodeCache(dir_ / "c.code", *stored);
  ASSERT_TRUE(mapped.ok());
  auto key = wasm::CodeCacheKeyFor(python_.wasm_module, uint64_t{heap_mb} << 20, stored->build_id);
  ASSERT_TRUE(key.ok());
  ASSERT_TRUE(wasm::WriteCodeCache(file, *key, mapped->encoding()).ok());
  r = RunPython(*ex, "print(6 * 7)");
  EXPECT_EQ(r.stdout_text, "not python\n") << runtimes::RunStatusName(r.status) << " " << r.stderr_text;

  // Writable by others: the runner no longer names it, CPython compiles.
  ASSERT_EQ(chmod(file.c_str(), 0666), 0);
  EXPECT_EQ(s->JailPath("python", heap_mb), "");
  r = RunPython(*ex, "print(6 * 7)");
  EXPECT_EQ(r.stdout_text, "42\n") << runtimes::RunStatusName(r.status) << " " << r.stderr_text;
  ASSERT_EQ(chmod(file.c_str(), 0644), 0);
  ASSERT_EQ(chmod((dir_ / "code").c_str(), 0775), 0);
  EXPECT_EQ(s->JailPath("python", heap_mb), "") << "a directory others can write is not trusted either";
}

// The standard library's tar index (wasm/tar_index.h): written by the
// store, used by runs, and only while it is the runner's own. "Used" is
// shown: an index that also lists a module the archive does not have (its
// bytes those of __hello__.py) makes that module importable.
TEST_F(WasmCodeStoreTest, RunsLoadTheStandardLibraryFromTheStoresIndex) {
  ASSERT_FALSE(python_.wasm_tar.empty());
  runtimes::WasmCodeStore* s = nullptr;
  std::unique_ptr<runtimes::LocalExecutor> ex = ExecutorWithStore(&s);
  ASSERT_NE(ex, nullptr);
  ASSERT_EQ(s->TarIndexJailPath("python"), std::string(runtimes::kJailWasmCodeDir) + "/python.tar-index");
  const std::string file = dir_ / "code/python.tar-index";
  const std::string probe = "import sys\ntry:\n    import airlock_probe\n    airlock_probe.main()\nexcept ImportError:\n"
                            "    print('no probe')\nimport json\nprint(json.dumps([1]))\n";
  runtimes::RunResult r = RunPython(*ex, probe);
  EXPECT_EQ(r.stdout_text, "no probe\n[1]\n") << runtimes::RunStatusName(r.status) << " " << r.stderr_text;

  // The store's index plus one entry: lib/python3.11/airlock_probe.py with
  // __hello__.py's bytes.
  auto key = wasm::TarIndexKeyFor(python_.wasm_tar);
  ASSERT_TRUE(key.ok());
  auto index = wasm::ReadCodeCache(file, *key);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  const std::string archive = ReadFile(python_.wasm_tar);
  auto entries = wasm::DecodeTarIndex(archive, index->encoding());
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  std::string added;
  for (const wasm::TarEntry& e : *entries) {
    if (e.path != "lib/python3.11/__hello__.py") continue;
    wasm::TarEntry probe_entry = e;
    probe_entry.path = "lib/python3.11/airlock_probe.py";
    added = std::string(1, static_cast<char>(probe_entry.kind)) + U64(probe_entry.offset) + U64(probe_entry.size) +
            U64(probe_entry.path.size()) + probe_entry.path;
  }
  ASSERT_FALSE(added.empty()) << "no __hello__.py in the archive";
  std::string crafted = U64(entries->size() + 1) + std::string(index->encoding().substr(8)) + added;
  ASSERT_TRUE(wasm::WriteCodeCache(file, *key, crafted).ok());
  r = RunPython(*ex, probe);
  EXPECT_EQ(r.stdout_text, "Hello world!\n[1]\n") << runtimes::RunStatusName(r.status) << " " << r.stderr_text;

  // Writable by others: not named; the run walks the archive itself.
  ASSERT_EQ(chmod(file.c_str(), 0666), 0);
  EXPECT_EQ(s->TarIndexJailPath("python"), "");
  r = RunPython(*ex, probe);
  EXPECT_EQ(r.stdout_text, "no probe\n[1]\n") << runtimes::RunStatusName(r.status) << " " << r.stderr_text;
  // Named again, but made for another archive (its key): walked.
  ASSERT_EQ(chmod(file.c_str(), 0644), 0);
  wasm::CodeCacheKey other = *key;
  other.module_size += 1;
  ASSERT_TRUE(wasm::WriteCodeCache(file, other, crafted).ok());
  ASSERT_NE(s->TarIndexJailPath("python"), "");
  r = RunPython(*ex, probe);
  EXPECT_EQ(r.stdout_text, "no probe\n[1]\n") << runtimes::RunStatusName(r.status) << " " << r.stderr_text;
}

TEST_F(WasmCodeStoreTest, AModuleThatCannotBeCompiledLeavesRunsCompilingAsBefore) {
  auto store = runtimes::WasmCodeStore::Open(dir_ / "code", kAirlockJs);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  (*store)->Prepare("python", dir_ / "missing.wasm", 448);
  (*store)->WaitIdle();
  EXPECT_EQ((*store)->stats().failed, 1u);
  EXPECT_EQ((*store)->JailPath("python", 448), "");
  EXPECT_FALSE(fs::exists(dir_ / "code/python.448mb.code"));
}

TEST(WasmCodeStoreOpenTest, ASymbolicLinkOrAMissingEngineIsRefused) {
  if (!fs::exists(kAirlockJs)) GTEST_SKIP() << "needs airlock-js";
  ScratchDir dir("open");
  // Open makes its directory 0755 itself, so never through a link.
  ASSERT_EQ(symlink("/tmp", (dir / "link").c_str()), 0);
  EXPECT_FALSE(runtimes::WasmCodeStore::Open(dir / "link", kAirlockJs).ok());
  EXPECT_FALSE(runtimes::WasmCodeStore::Open(dir / "code", dir / "no-airlock-js").ok());
  EXPECT_TRUE(runtimes::WasmCodeStore::Open(dir / "code", kAirlockJs).ok());
}

// ---------------------------------------------------------------- containment

// The WASM tier's containment cases, with CPython and PHP running on the
// code the store wrote and every engine starting from the store's
// self-hosted code: loaded code changes nothing a program can reach.
class CompiledCodeContainmentTest : public ::testing::TestWithParam<selftest::SelftestCase> {
 protected:
  static selftest::ContainmentEnv& Env() {
    static selftest::ContainmentEnv env(std::nullopt, /*wasm_tier=*/true, /*wasm_code=*/true);
    return env;
  }
};

TEST_P(CompiledCodeContainmentTest, HoldsOnLoadedCode) {
  selftest::ContainmentEnv& env = Env();
  ASSERT_TRUE(env.error().empty()) << env.error();
  const selftest::SelftestCase& c = GetParam();
  const runtimes::LanguageSpec* spec = env.executor()->Find(c.language, false, "wasm");
  if (spec == nullptr) GTEST_SKIP() << c.language << " is not in the WASM tier here";
  if (!spec->wasm_module.empty()) {
    EXPECT_NE(env.executor()->wasm_code_store()->JailPath(c.language, spec->default_memory_mb - 64), "")
        << "the case would compile, not load";
  }
  EXPECT_NE(env.executor()->wasm_code_store()->SelfHostedJailPath(), "")
      << "the engine would parse its self-hosted code, not decode it";
  if (!spec->wasm_tar.empty()) {
    EXPECT_NE(env.executor()->wasm_code_store()->TarIndexJailPath(c.language), "")
        << "the case would walk the standard library's tar, not load its index";
  }
  const selftest::CaseOutcome outcome = RunContainmentCase(*env.executor(), c, *env.bait());
  if (outcome.skipped) GTEST_SKIP() << outcome.detail;
  EXPECT_TRUE(outcome.passed) << c.name << " (" << c.description << ") on loaded code: expected "
                              << outcome.expected << ", observed " << outcome.observed << ": " << outcome.detail;
}

INSTANTIATE_TEST_SUITE_P(WasmTier, CompiledCodeContainmentTest,
                         ::testing::ValuesIn(selftest::WasmTierContainmentCases()),
                         [](const ::testing::TestParamInfo<selftest::SelftestCase>& info) { return info.param.name; });

}  // namespace
}  // namespace airlock
