// Pause, resume and fork of the WASM tier's Python sessions
// (SandboxSession::Pause/Resume/Fork, engine/js/python_session.h), through
// the executor as the MCP tools drive it: a paused session holds no
// process, the next call (or an explicit resume) brings back its variables,
// files, open files and working directory in a new jail, and a fork is a
// copy that goes its own way. Native sessions refuse. Skipped where the
// CPython WASI build (with python-session.wasm) is not cached.
#include <unistd.h>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "jail/host.h"
#include "runtimes/language.h"
#include "runtimes/local_executor.h"
#include "selftest/host_snapshot.h"
#include "session_test_util.h"
#include "test_jail_host.h"

namespace airlock::runtimes {
namespace {

using Clock = std::chrono::steady_clock;

class WasmCheckpointTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto host = tests::CreateJailHost();
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(host).value().release();
    std::unique_ptr<LocalExecutor> ex = sessiontest::WasmTierExecutor(*host_);
    ASSERT_NE(ex, nullptr);
    executor_ = ex.release();
  }
  static void TearDownTestSuite() {
    delete executor_;
    executor_ = nullptr;
    delete host_;
    host_ = nullptr;
  }
  void SetUp() override {
    const LanguageSpec* py = executor_->Find("python", false, "wasm");
    if (py == nullptr || !py->session_checkpoints) {
      GTEST_SKIP() << "no CPython WASI session reactor (scripts/wasm/build_python.sh)";
    }
  }

  // A session whose engine is told apart by its memory cap (tests run in
  // parallel): `memory_mb` - 64 is its --wasm-max-mb.
  std::string Open(uint64_t memory_mb) {
    return sessiontest::OpenTestSession(*executor_, "ckpt", "python", "wasm", memory_mb);
  }
  static std::string Mine(uint64_t memory_mb) {
    return "--wasm-max-mb " + std::to_string(memory_mb - 64) + " --work";
  }
  static size_t Engines(uint64_t memory_mb) { return selftest::ProcessesWithCmdline(Mine(memory_mb)).size(); }
  // Waits (bounded) until `n` engines of that cap run.
  static size_t EnginesSettle(uint64_t memory_mb, size_t n) {
    const auto end = Clock::now() + std::chrono::seconds(10);
    while (Engines(memory_mb) != n && Clock::now() < end) usleep(20'000);
    return Engines(memory_mb);
  }
  RunResult Cell(const std::string& id, const std::string& code, std::vector<std::string> globs = {}) {
    return sessiontest::RunCell(*executor_, id, code, 20'000, {}, std::move(globs));
  }

  static jail::JailHost* host_;
  static LocalExecutor* executor_;
};

jail::JailHost* WasmCheckpointTest::host_ = nullptr;
LocalExecutor* WasmCheckpointTest::executor_ = nullptr;

constexpr char kSetUp[] = R"PY(
import json, os
data = {"rows": [1, 2, 3], "name": "kept"}
def double(n):
    return 2 * n
os.makedirs("sub", exist_ok=True)
with open("sub/notes.txt", "w") as f:
    f.write("written before the pause")
log = open("log.txt", "w")
log.write("one,")
log.flush()
os.chdir("sub")  # the guest's cwd starts at "/" (the work dir is preopened there too)
print("ready")
)PY";

constexpr char kAfter[] = R"PY(
log.write("two")
log.close()
print(json.dumps(data), double(21), os.getcwd(), open("notes.txt").read())
print(open("/work/log.txt").read())
)PY";

TEST_F(WasmCheckpointTest, APausedSessionHoldsNoProcessAndComesBackWhole) {
  constexpr uint64_t kMem = 207;
  const std::string id = Open(kMem);
  RunResult r = Cell(id, kSetUp);
  ASSERT_EQ(r.stdout_text, "ready\n") << r.stderr_text << r.message;
  EXPECT_EQ(Engines(kMem), 1u);

  const auto t0 = Clock::now();
  Status paused = executor_->PauseSession(id);
  const auto t1 = Clock::now();
  ASSERT_TRUE(paused.ok()) << paused.ToString();
  EXPECT_EQ(EnginesSettle(kMem, 0), 0u) << "a paused session's engine still runs";
  EXPECT_TRUE(executor_->PauseSession(id).ok()) << "pausing a paused session is a no-op";

  // The next call restores it transparently, files and output files too.
  const auto t2 = Clock::now();
  r = Cell(id, kAfter, {"sub/notes.txt"});
  const auto t3 = Clock::now();
  EXPECT_EQ(r.stdout_text, "{\"rows\": [1, 2, 3], \"name\": \"kept\"} 42 /sub written before the pause\n"
                           "one,two\n")
      << r.stderr_text << r.message;
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].content, "written before the pause");
  EXPECT_EQ(Engines(kMem), 1u);
  std::printf("[ figures  ] pause %lld ms, first call after it (restore + cell) %lld ms\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(t1 - t0).count()),
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(t3 - t2).count()));

  // Explicit resume; resuming a live session is a no-op.
  ASSERT_TRUE(executor_->PauseSession(id).ok());
  EXPECT_EQ(EnginesSettle(kMem, 0), 0u);
  ASSERT_TRUE(executor_->ResumeSession(id).ok());
  EXPECT_EQ(Engines(kMem), 1u);
  EXPECT_TRUE(executor_->ResumeSession(id).ok());
  r = Cell(id, "print(double(data['rows'][2]))");
  EXPECT_EQ(r.stdout_text, "6\n") << r.stderr_text << r.message;

  // Closing a paused session leaves nothing either.
  ASSERT_TRUE(executor_->PauseSession(id).ok());
  EXPECT_TRUE(executor_->CloseSession(id).ok());
  EXPECT_EQ(EnginesSettle(kMem, 0), 0u);
  EXPECT_EQ(Cell(id, "print(1)").error_code, "E_SESSION_NOT_FOUND");
}

TEST_F(WasmCheckpointTest, AForkIsACopyThatGoesItsOwnWay) {
  constexpr uint64_t kMem = 211;
  const std::string id = Open(kMem);
  ASSERT_EQ(Cell(id, "import random\nx = [1]\nopen('f.txt', 'w').write('a')\nprint('ok')").stdout_text, "ok\n");
  const std::string copy = id + "_copy";
  Status forked = executor_->ForkSession(id, {.id = copy, .language = "python", .isolation = "wasm",
                                              .memory_mb = kMem, .cpu_budget_ms = 60'000});
  ASSERT_TRUE(forked.ok()) << forked.ToString();
  EXPECT_EQ(Engines(kMem), 2u) << "the copy has a jail and engine of its own";
  EXPECT_EQ(Cell(id, "x.append(2)\nopen('f.txt', 'a').write('b')\nprint(x, open('f.txt').read())").stdout_text,
            "[1, 2] ab\n");
  RunResult c = Cell(copy, "x.append(3)\nprint(x, open('f.txt').read())");
  EXPECT_EQ(c.stdout_text, "[1, 3] a\n") << c.stderr_text << c.message;
  EXPECT_EQ(Cell(id, "print(x)").stdout_text, "[1, 2]\n");

  // A paused session forks too, and stays paused.
  ASSERT_TRUE(executor_->PauseSession(id).ok());
  const std::string second = id + "_second";
  ASSERT_TRUE(executor_->ForkSession(id, {.id = second, .language = "python", .isolation = "wasm",
                                          .memory_mb = kMem, .cpu_budget_ms = 60'000})
                  .ok());
  EXPECT_EQ(EnginesSettle(kMem, 2), 2u);  // the first copy and the second; the source is paused
  EXPECT_EQ(Cell(second, "print(x)").stdout_text, "[1, 2]\n");
  for (const std::string& s : {id, copy, second}) EXPECT_TRUE(executor_->CloseSession(s).ok()) << s;
  EXPECT_EQ(EnginesSettle(kMem, 0), 0u);
}

TEST_F(WasmCheckpointTest, ARestoredSessionKeepsItsLimits) {
  constexpr uint64_t kMem = 213;
  const std::string id = Open(kMem);
  ASSERT_EQ(Cell(id, "hold = []\nprint('ok')").stdout_text, "ok\n");
  ASSERT_TRUE(executor_->PauseSession(id).ok());
  // Memory: the cap is the restored engine's too.
  RunResult r = Cell(id, "try:\n    hold.append(bytearray(400 << 20))\nexcept MemoryError:\n    print('capped')");
  EXPECT_EQ(r.stdout_text, "capped\n") << r.stderr_text << r.message;
  // Time: a restored session's cell that runs too long loses it, as ever.
  ASSERT_TRUE(executor_->PauseSession(id).ok());
  RunResult slow = sessiontest::RunCell(*executor_, id, "while True: pass", 1'000);
  EXPECT_EQ(slow.status, RunStatus::kTimeout);
  EXPECT_EQ(slow.error_code, "E_SESSION_LOST");
  EXPECT_TRUE(executor_->CloseSession(id).ok());
  EXPECT_EQ(EnginesSettle(kMem, 0), 0u);
}

TEST_F(WasmCheckpointTest, NativeSessionsRefuseAndGoOn) {
  const std::string id = sessiontest::OpenTestSession(*executor_, "ckpt_native", "python", "native", 0);
  ASSERT_EQ(Cell(id, "y = 5\nprint(y)").stdout_text, "5\n");
  Status st = executor_->PauseSession(id);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("E_SESSION_NOT_PAUSABLE"), std::string::npos) << st.ToString();
  EXPECT_FALSE(executor_->ForkSession(id, {.id = id + "_f", .language = "python", .isolation = "native"}).ok());
  EXPECT_EQ(Cell(id, "print(y + 1)").stdout_text, "6\n");
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

// Across a runner restart: over a persistent image directory
// (sessions.image_dir), a runner that stops pauses its live sessions and
// leaves every image; the next one over the same directory takes them back
// under their ids. A directory another user could enter is refused.
class WasmCheckpointRestartTest : public WasmCheckpointTest {
 protected:
  std::unique_ptr<LocalExecutor> Runner(const std::string& image_dir, uint64_t adopted_ttl_s = 7 * 86400) {
    ExecutorLimits limits;
    limits.session_image_dir = image_dir;
    limits.pause_after_s = 0;
    limits.adopted_image_ttl_s = adopted_ttl_s;
    return sessiontest::WasmTierExecutor(*host_, limits);
  }
  static size_t FilesIn(const std::string& dir, const std::string& ext) {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.path().extension() == ext;
    return n;
  }
  static std::string Cell(LocalExecutor& ex, const std::string& id, const std::string& code) {
    RunResult r = sessiontest::RunCell(ex, id, code, 20'000);
    return r.stdout_text + (r.error_code.empty() ? "" : "[" + r.error_code + ": " + r.message + "]");
  }
};

TEST_F(WasmCheckpointRestartTest, SessionsOutliveTheRunnerOverAPersistentDirectory) {
  char tmpl[] = "/tmp/airlock-images-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  constexpr uint64_t kMem = 217;
  {
    std::unique_ptr<LocalExecutor> first = Runner(dir);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->AdoptPausedSessions(), 0u);
    ASSERT_TRUE(first->OpenSession({.id = "s_live", .language = "python", .isolation = "wasm", .memory_mb = kMem}).ok());
    ASSERT_TRUE(first->OpenSession({.id = "s_idle", .language = "python", .isolation = "wasm", .memory_mb = kMem}).ok());
    EXPECT_EQ(Cell(*first, "s_live", "x = 'live'\nopen('a.txt', 'w').write('A')\nprint(x)"), "live\n");
    EXPECT_EQ(Cell(*first, "s_idle", "y = 'idle'\nprint(y)"), "idle\n");
    ASSERT_TRUE(first->PauseSession("s_idle").ok());
    EXPECT_EQ(FilesIn(dir, ".image"), 1u);
    EXPECT_EQ(FilesIn(dir, ".json"), 1u);
  }  // the runner stops: the live one is paused too, both images stay
  EXPECT_EQ(EnginesSettle(kMem, 0), 0u) << "the stopped runner's engines are gone";
  EXPECT_EQ(FilesIn(dir, ".image"), 2u);
  EXPECT_EQ(FilesIn(dir, ".json"), 2u);
  // A manifest the next runner cannot use is dropped with its image.
  {
    std::ofstream bad(dir + "/0000.json");
    bad << R"({"session": {"id": "s_cobol", "language": "cobol", "isolation": "wasm"}, "image": "0000.image", )"
        << "\"paused_at\": " << time(nullptr) << "}";
    std::ofstream(dir + "/0000.image") << "x";
  }
  {
    std::unique_ptr<LocalExecutor> second = Runner(dir);
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(second->AdoptPausedSessions(), 2u);
    EXPECT_FALSE(std::filesystem::exists(dir + "/0000.json"));
    EXPECT_FALSE(std::filesystem::exists(dir + "/0000.image"));
    EXPECT_EQ(EnginesSettle(kMem, 0), 0u) << "adopted sessions stay paused until used";
    EXPECT_EQ(Cell(*second, "s_live", "print(x, open('a.txt').read())"), "live A\n");
    EXPECT_EQ(Cell(*second, "s_idle", "print(y)"), "idle\n");
    EXPECT_NE(Cell(*second, "s_other", "print(1)").find("E_SESSION_NOT_FOUND"), std::string::npos)
        << "only the sessions that were there";
    EXPECT_TRUE(second->CloseSession("s_live").ok());
    EXPECT_TRUE(second->CloseSession("s_idle").ok());
  }
  EXPECT_EQ(FilesIn(dir, ".image"), 0u) << "closed sessions leave no image behind";
  EXPECT_EQ(FilesIn(dir, ".json"), 0u);
  std::filesystem::remove_all(dir);
}

TEST_F(WasmCheckpointRestartTest, AnAdoptedSessionNoGatewayAsksForEndsWithItsLifetime) {
  char tmpl[] = "/tmp/airlock-images-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  {
    std::unique_ptr<LocalExecutor> first = Runner(dir);
    ASSERT_NE(first, nullptr);
    ASSERT_TRUE(first->OpenSession({.id = "s_orphan", .language = "python", .isolation = "wasm"}).ok());
    ASSERT_TRUE(first->OpenSession({.id = "s_wanted", .language = "python", .isolation = "wasm"}).ok());
    EXPECT_EQ(Cell(*first, "s_wanted", "z = 3\nprint(z)"), "3\n");
  }
  ASSERT_EQ(FilesIn(dir, ".image"), 2u);
  // Their lifetime (from the pause) is 3 s here; one is used in time.
  std::unique_ptr<LocalExecutor> second = Runner(dir, /*adopted_ttl_s=*/3);
  ASSERT_NE(second, nullptr);
  ASSERT_EQ(second->AdoptPausedSessions(), 2u);
  EXPECT_EQ(Cell(*second, "s_wanted", "print(z)"), "3\n");
  const auto end = Clock::now() + std::chrono::seconds(10);
  while (second->session_count() > 1 && Clock::now() < end) usleep(50'000);
  EXPECT_EQ(second->session_count(), 1u) << "the orphan is closed at the end of its lifetime";
  EXPECT_EQ(FilesIn(dir, ".image"), 0u) << "with its image (the used one is live, its image restored)";
  EXPECT_NE(Cell(*second, "s_orphan", "print(1)").find("E_SESSION_NOT_FOUND"), std::string::npos);
  EXPECT_EQ(Cell(*second, "s_wanted", "print(z + 1)"), "4\n") << "the used one is the gateway's to close";
  EXPECT_TRUE(second->CloseSession("s_wanted").ok());
  second.reset();
  std::filesystem::remove_all(dir);
}

TEST_F(WasmCheckpointRestartTest, ADirectoryOthersCanEnterIsRefused) {
  char tmpl[] = "/tmp/airlock-images-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  ASSERT_EQ(chmod(dir.c_str(), 0755), 0);
  std::unique_ptr<LocalExecutor> ex = Runner(dir);
  ASSERT_NE(ex, nullptr);
  ASSERT_TRUE(ex->OpenSession({.id = "s_open", .language = "python", .isolation = "wasm", .memory_mb = 219}).ok());
  Status st = ex->PauseSession("s_open");
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("E_SESSION_NOT_PAUSABLE"), std::string::npos) << st.ToString();
  EXPECT_EQ(Cell(*ex, "s_open", "print(2)"), "2\n");
  EXPECT_TRUE(ex->CloseSession("s_open").ok());
  ex.reset();
  EXPECT_EQ(FilesIn(dir, ".image"), 0u);
  std::filesystem::remove_all(dir);
}

// Moving a paused session to another runner host (a host that drains hands
// its sessions to the others): ExportSession reads the image in chunks,
// ImportSession takes them on the other runner, and the state goes on
// there. Two executors on one machine stand for the two hosts.
class WasmCheckpointMoveTest : public WasmCheckpointRestartTest {
 protected:
  // The whole image of session `id` from `from`, chunk by chunk (the
  // first also gives the spec).
  static std::string ExportAll(LocalExecutor& from, const std::string& id, SessionSpec* spec) {
    std::string image;
    uint64_t size = 0;
    do {
      StatusOr<SessionImageChunk> chunk = from.ExportSession(id, image.size());
      EXPECT_TRUE(chunk.ok()) << chunk.status().ToString();
      if (!chunk.ok()) return "";
      if (image.empty()) {
        StatusOr<SessionSpec> parsed = SessionSpecFromJson(nlohmann::json::parse(chunk->spec_json, nullptr, false));
        EXPECT_TRUE(parsed.ok()) << chunk->spec_json;
        if (parsed.ok()) *spec = *parsed;
      }
      size = chunk->size;
      if (chunk->data.empty()) break;
      image += chunk->data;
    } while (image.size() < size);
    EXPECT_EQ(image.size(), size);
    return image;
  }
  // `image` into `to` in pieces of `piece` bytes.
  static Status ImportAll(LocalExecutor& to, const SessionSpec& spec, const std::string& image, size_t piece) {
    for (size_t at = 0; at < image.size(); at += piece) {
      const std::string data = image.substr(at, piece);
      AIRLOCK_RETURN_IF_ERROR(to.ImportSession(spec, at, data, at + data.size() == image.size()));
    }
    return OkStatus();
  }
};

TEST_F(WasmCheckpointMoveTest, APausedSessionMovesToAnotherRunnerWithItsState) {
  char tmpl[] = "/tmp/airlock-images-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;  // the second runner's, persistent
  constexpr uint64_t kMem = 223;
  std::unique_ptr<LocalExecutor> a = Runner("");
  std::unique_ptr<LocalExecutor> b = Runner(dir);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const std::string id = "s_moving";
  ASSERT_TRUE(a->OpenSession({.id = id, .language = "python", .isolation = "wasm", .memory_mb = kMem,
                              .cpu_budget_ms = 60'000})
                  .ok());
  EXPECT_EQ(Cell(*a, id, "x = 41\nopen('moved.txt', 'w').write('carried over')\nprint('ok')"), "ok\n");

  SessionSpec spec;
  const std::string image = ExportAll(*a, id, &spec);
  ASSERT_FALSE(image.empty());
  EXPECT_EQ(spec.id, id);
  EXPECT_EQ(spec.memory_mb, kMem);
  EXPECT_EQ(EnginesSettle(kMem, 0), 0u) << "the export paused it";
  // A later chunk reads on from its offset; past the end is refused.
  StatusOr<SessionImageChunk> mid = a->ExportSession(id, image.size() / 2);
  ASSERT_TRUE(mid.ok()) << mid.status().ToString();
  EXPECT_EQ(mid->data, image.substr(image.size() / 2, SessionImageChunk::kMaxBytes));
  EXPECT_TRUE(mid->spec_json.empty());
  EXPECT_EQ(a->ExportSession(id, image.size() + 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(a->ExportSession("s_nobody", 0).status().code(), StatusCode::kNotFound);

  // While it moves, the first runner refuses its cells and forks.
  RunResult busy = sessiontest::RunCell(*a, id, "print(x)", 20'000);
  EXPECT_EQ(busy.error_code, "E_SESSION_BUSY");
  EXPECT_NE(busy.message.find("moving to another runner host"), std::string::npos) << busy.message;
  Status fork = a->ForkSession(id, {.id = id + "_f", .language = "python", .isolation = "wasm", .memory_mb = kMem});
  EXPECT_EQ(fork.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(fork.message().find("E_SESSION_BUSY"), std::string::npos) << fork.ToString();
  EXPECT_TRUE(a->PauseSession(id).ok()) << "paused already: nothing to do";

  // Chunks out of order are refused, and the staging dropped.
  SessionSpec other = spec;
  other.id = "s_out_of_order";
  ASSERT_TRUE(b->ImportSession(other, 0, image.substr(0, 1000), false).ok());
  EXPECT_EQ(FilesIn(dir, ".part"), 1u) << "staged in the image directory";
  EXPECT_EQ(b->ImportSession(other, 5000, image.substr(5000, 1000), false).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(b->ImportSession(other, 1000, image.substr(1000), true).code(), StatusCode::kInvalidArgument)
      << "the staging is gone";
  EXPECT_EQ(FilesIn(dir, ".part"), 0u);
  // An image made under another memory cap is another build's: refused.
  other.id = "s_other_cap";
  other.memory_mb = kMem + 6;
  Status other_cap = ImportAll(*b, other, image, image.size());
  EXPECT_EQ(other_cap.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(other_cap.message().find("E_SESSION_LOST"), std::string::npos) << other_cap.ToString();
  // An id in use is refused.
  EXPECT_EQ(ImportAll(*a, spec, image, image.size()).code(), StatusCode::kInvalidArgument);

  // The move itself, in pieces of its own size.
  Status imported = ImportAll(*b, spec, image, image.size() / 3 + 1);
  ASSERT_TRUE(imported.ok()) << imported.ToString();
  EXPECT_EQ(ImportAll(*b, spec, image, image.size()).code(), StatusCode::kInvalidArgument) << "in use now";
  EXPECT_EQ(FilesIn(dir, ".image"), 1u);
  EXPECT_EQ(FilesIn(dir, ".json"), 1u) << "a manifest beside the imported image";
  EXPECT_EQ(FilesIn(dir, ".part"), 0u);
  EXPECT_EQ(EnginesSettle(kMem, 0), 0u) << "imported paused";
  ASSERT_TRUE(a->CloseSession(id).ok());  // the move succeeded
  EXPECT_EQ(Cell(*b, id, "print(x + 1, open('moved.txt').read())"), "42 carried over\n");
  EXPECT_EQ(Engines(kMem), 1u);

  // It survives the second runner's restart like any paused session.
  b.reset();
  EXPECT_EQ(EnginesSettle(kMem, 0), 0u);
  std::unique_ptr<LocalExecutor> c = Runner(dir);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->AdoptPausedSessions(), 1u);
  EXPECT_EQ(Cell(*c, id, "print(x)"), "41\n");
  EXPECT_TRUE(c->CloseSession(id).ok());
  c.reset();
  EXPECT_EQ(FilesIn(dir, ".image"), 0u);
  EXPECT_EQ(FilesIn(dir, ".json"), 0u);
  std::filesystem::remove_all(dir);
}

TEST_F(WasmCheckpointMoveTest, AFailedMoveLetsTheSessionGoOnWhereItWas) {
  constexpr uint64_t kMem = 227;
  std::unique_ptr<LocalExecutor> a = Runner("");
  ASSERT_NE(a, nullptr);
  const std::string id = "s_stays";
  ASSERT_TRUE(a->OpenSession({.id = id, .language = "python", .isolation = "wasm", .memory_mb = kMem}).ok());
  EXPECT_EQ(Cell(*a, id, "y = 7\nprint(y)"), "7\n");
  StatusOr<SessionImageChunk> first = a->ExportSession(id, 0);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_GT(first->size, 0u);
  EXPECT_NE(Cell(*a, id, "print(y)").find("E_SESSION_BUSY"), std::string::npos);
  // The move failed: resuming ends it, and the session goes on here.
  ASSERT_TRUE(a->ResumeSession(id).ok());
  EXPECT_EQ(Cell(*a, id, "print(y * 6)"), "42\n");
  EXPECT_EQ(a->ExportSession(id, 1).status().code(), StatusCode::kFailedPrecondition) << "no longer moving";
  EXPECT_TRUE(a->CloseSession(id).ok());
  EXPECT_EQ(EnginesSettle(kMem, 0), 0u);

  // A native session cannot move.
  const std::string native = sessiontest::OpenTestSession(*a, "move_native", "python", "native", 0);
  StatusOr<SessionImageChunk> refused = a->ExportSession(native, 0);
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("E_SESSION_NOT_PAUSABLE"), std::string::npos)
      << refused.status().ToString();
  EXPECT_EQ(Cell(*a, native, "print(3)"), "3\n") << "and goes on";
  EXPECT_TRUE(a->CloseSession(native).ok());
}

}  // namespace
}  // namespace airlock::runtimes
