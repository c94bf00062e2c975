// SpiderMonkey's self-hosted code from a cache file
// (engine/js/self_hosted_cache.h): airlock-js writes it once and starts from
// it after; a missing, foreign or damaged file is parsed instead; the
// runner's store writes it and gives it to every airlock-js it starts, only
// while the file is the runner's own (runtimes/wasm_code_store.h).
//
// "Decoded" is the engine's own word, not assumed: `--self-hosted-status`
// starts an engine that would keep the encoding of what it parsed, and the
// engine only parses (and so only hands over an encoding) when it did not
// start from the file.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "base/cancel.h"
#include "cli_run_util.h"
#include "jail/host.h"
#include "runtimes/language.h"
#include "runtimes/local_executor.h"
#include "runtimes/wasm_code_store.h"
#include "test_jail_host.h"
#include "wasm/code_cache_file.h"

namespace airlock {
namespace {

namespace fs = std::filesystem;
using testing::RunCommandLine;

const std::string kAirlockJs = std::string(AIRLOCK_BINARY_DIR) + "/airlock-js";

class SelfHostedCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kAirlockJs)) GTEST_SKIP() << "needs airlock-js";
    dir_ = fs::temp_directory_path() / ("airlock-self-hosted-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms(0755));
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // What the engine says it did with `cache` ("" for none).
  std::string Status(const std::string& cache) {
    const std::string flag = cache.empty() ? "" : " --self-hosted-cache " + cache;
    testing::CliOutcome o = RunCommandLine(kAirlockJs + flag + " --self-hosted-status 2>&1");
    EXPECT_EQ(o.rc, 0) << o.out;
    return o.out;
  }

  fs::path dir_;
};

TEST_F(SelfHostedCacheTest, WrittenOnceThenTheEngineStartsFromIt) {
  testing::CliOutcome w = RunCommandLine(kAirlockJs + " --self-hosted-cache-write " + Path("sh.code") + " 2>&1");
  ASSERT_EQ(w.rc, 0) << w.out;
  EXPECT_NE(w.out.find("bytes of self-hosted code"), std::string::npos) << w.out;
  // A second writer keeps the file, and removes what a killed writer left.
  std::ofstream(Path("sh.code.tmp.999999")) << "half a file";
  testing::CliOutcome again = RunCommandLine(kAirlockJs + " --self-hosted-cache-write " + Path("sh.code") + " 2>&1");
  ASSERT_EQ(again.rc, 0) << again.out;
  EXPECT_NE(again.out.find("up to date"), std::string::npos) << again.out;
  EXPECT_FALSE(fs::exists(Path("sh.code.tmp.999999")));

  EXPECT_EQ(Status(Path("sh.code")), "decoded\n");
  EXPECT_EQ(Status(""), "parsed\n");
  EXPECT_EQ(Status(Path("none.code")), "parsed\n") << "a missing file is parsed, never an error";
}

TEST_F(SelfHostedCacheTest, AFileForAnotherEngineOrDamagedIsParsedInstead) {
  ASSERT_EQ(RunCommandLine(kAirlockJs + " --self-hosted-cache-write " + Path("sh.code")).rc, 0);
  auto key = wasm::ReadCodeCacheKey(Path("sh.code"));
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  auto mapped = wasm::ReadCodeCache(Path("sh.code"), *key);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();

  // Another engine build's file: refused by its key.
  wasm::CodeCacheKey other = *key;
  other.build_id = "another-engine-build";
  ASSERT_TRUE(wasm::WriteCodeCache(Path("other.code"), other, mapped->encoding()).ok());
  EXPECT_EQ(Status(Path("other.code")), "parsed\n");
  // The right key, but not an encoding: the engine does not decode it.
  ASSERT_TRUE(wasm::WriteCodeCache(Path("junk.code"), *key, std::string(4096, '\x5a')).ok());
  EXPECT_EQ(Status(Path("junk.code")), "parsed\n");
  // Not a regular file: parsed.
  EXPECT_EQ(Status("/dev/null"), "parsed\n");
}

TEST_F(SelfHostedCacheTest, ScriptsBehaveTheSameDecodedOrParsed) {
  ASSERT_EQ(RunCommandLine(kAirlockJs + " --self-hosted-cache-write " + Path("sh.code")).rc, 0);
  // Built-ins SpiderMonkey writes in JavaScript: sort, replace with a
  // function, Array.from, iterator helpers, TypedArray methods, Intl,
  // string padding, flat, async functions and generators.
  std::ofstream(Path("main.js")) << R"JS(
const out = [];
out.push([10, 9, 1, 100].sort().join(), [10, 9, 1, 100].sort((a, b) => a - b).join());
out.push("a-b-c".replace(/-/g, (m) => "+"), "x".padStart(4, "ab"), [[1, [2]], [3]].flat(2).join());
out.push(Array.from({ length: 3 }, (_, i) => i * i).join(), new Int16Array([3, 1, 2]).sort().join());
out.push(new Intl.NumberFormat("en-US").format(1234567.891), [..."héllo"].reverse().join(""));
function* gen() { yield 1; yield 2; }
out.push([...gen()].map(String).join());
(async () => { out.push(String(await Promise.all([1, Promise.resolve(2)]))); console.log(out.join(" | ")); })();
)JS";
  const std::string js = " --bridge-fd none " + Path("main.js") + " 2>&1";
  testing::CliOutcome parsed = RunCommandLine(kAirlockJs + js);
  testing::CliOutcome decoded = RunCommandLine(kAirlockJs + " --self-hosted-cache " + Path("sh.code") + js);
  ASSERT_EQ(parsed.rc, 0) << parsed.out;
  EXPECT_EQ(parsed.out, "1,10,100,9 | 1,9,10,100 | a+b+c | abax | 1,2,3 | 0,1,4 | 1,2,3 | 1,234,567.891 | olléh | 1,2 | 1,2\n");
  EXPECT_EQ(decoded.rc, 0) << decoded.out;
  EXPECT_EQ(decoded.out, parsed.out);
}

// ---------------------------------------------------------------- the runner

// A language whose "interpreter" is airlock-js saying how it started: what
// every airlock-js the runner starts (WASM tier, code mode) would do.
runtimes::LanguageSpec Probe() {
  runtimes::LanguageSpec probe;
  probe.name = "probe";
  probe.display_name = "airlock-js start probe";
  probe.source_file = "main.txt";
  probe.version_argv = {kAirlockJs, "--version"};
  probe.isolation = "wasm";  // a host binary mapped into the jail, as the tier's engine is
  probe.run_argv = {runtimes::kJailAirlockJsPath, "--self-hosted-status"};
  probe.binds = {{kAirlockJs, false, runtimes::kJailAirlockJsPath}};
  return probe;
}

TEST_F(SelfHostedCacheTest, EveryEngineTheRunnerStartsDecodesOnlyTheRunnersOwnFile) {
  auto host = tests::CreateJailHost();
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  auto ex = runtimes::LocalExecutor::Create(**host, {}, {Probe()});
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  auto run = [&]() {
    runtimes::RunRequest r;
    r.language = "probe";
    r.isolation = "wasm";
    r.code = "";
    CancelToken cancel;
    runtimes::RunResult result = (*ex)->Run(r, nullptr, cancel);
    EXPECT_EQ(result.status, runtimes::RunStatus::kOk) << result.message << result.stderr_text;
    return result.stdout_text;
  };
  EXPECT_EQ(run(), "parsed\n") << "no store yet";

  auto store = runtimes::WasmCodeStore::Open(Path("code"), kAirlockJs);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  runtimes::WasmCodeStore* s = store->get();
  (*ex)->EnableWasmCodeStore(std::move(*store));
  s->WaitIdle();
  EXPECT_EQ(s->stats().written, 1u);
  ASSERT_EQ(s->SelfHostedJailPath(), std::string(runtimes::kJailWasmCodeDir) + "/self-hosted.code");
  EXPECT_EQ(run(), "decoded\n");

  // Writable by others, or in a directory others can write: not named, so
  // the engine parses.
  const std::string file = Path("code/self-hosted.code");
  ASSERT_EQ(chmod(file.c_str(), 0666), 0);
  EXPECT_EQ(s->SelfHostedJailPath(), "");
  EXPECT_EQ(run(), "parsed\n");
  ASSERT_EQ(chmod(file.c_str(), 0644), 0);
  EXPECT_EQ(run(), "decoded\n");
  ASSERT_EQ(chmod(Path("code").c_str(), 0775), 0);
  EXPECT_EQ(s->SelfHostedJailPath(), "");
  EXPECT_EQ(run(), "parsed\n");
}

}  // namespace
}  // namespace airlock
