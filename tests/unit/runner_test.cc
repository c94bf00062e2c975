// Tests of the runner process (frame format, the runner loop) and of the
// MCP server's RunnerClient. The runner here is a forked copy of this test
// binary running RunnerMain with a fake executor, so crashes, hangs and
// cancellation are real process-level events.
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/frame.h"
#include "runner/runner_client.h"
#include "runner/runner_loop.h"
#include "runner/spawned_runner.h"
#include "runtimes/bridge_relay.h"

namespace airlock::runner {
namespace {

using Json = nlohmann::json;
using runtimes::LanguageInfo;
using runtimes::RunPhase;
using runtimes::RunRequest;
using runtimes::RunResult;
using runtimes::RunStatus;
using Clock = std::chrono::steady_clock;

int64_t MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

// Runs nothing: echoes the code to stdout and stdin to stderr. Special code:
//   "sleep N"  waits N ms (or until cancelled: then stdout "cancelled")
//   "ignore N" waits N ms, deaf to cancellation
//   "crash"    SIGKILLs the whole (runner) process
//   "exit3"    _exit(3)s the whole process
class FakeExecutor : public runtimes::CodeExecutor {
 public:
  RunResult Run(const RunRequest& request, const runtimes::ProgressFn& progress,
                CancelToken& cancel, runtimes::BridgeHandler* bridge = nullptr) override {
    ++runs_started;
    progress(RunPhase::kStarting);
    if (request.code == "crash") raise(SIGKILL);
    if (request.code == "exit3") _exit(3);
    if (request.language == "c") progress(RunPhase::kCompiling);
    progress(RunPhase::kRunning);
    if (request.code_mode) return FakeProgram(request, bridge);
    RunResult r;
    r.status = RunStatus::kOk;
    r.language = request.language;
    r.exit_code = 0;
    if (request.code.rfind("ignore ", 0) == 0) {  // deaf to cancellation
      std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(request.code.substr(7))));
    }
    if (request.code.rfind("sleep ", 0) == 0) {
      pollfd p{cancel.fd(), POLLIN, 0};
      poll(&p, 1, std::stoi(request.code.substr(6)));
      if (cancel.cancelled()) {
        ++runs_cancelled;
        r.status = RunStatus::kKilledSignal;
        r.signal = SIGKILL;
        r.stdout_text = "cancelled";
        progress(RunPhase::kDone);
        return r;
      }
    }
    r.stdout_text = request.code;
    r.stderr_text = request.stdin_data;
    progress(RunPhase::kDone);
    return r;
  }

  // Plays a code-mode program: "calls N" sends N call frames on the bridge
  // (as a jailed program would, through a real BridgeRelay), collects the
  // replies into stdout, then sends its result frame.
  static RunResult FakeProgram(const RunRequest& request, runtimes::BridgeHandler* bridge) {
    RunResult r;
    r.language = request.language;
    if (bridge == nullptr) return runtimes::InternalErrorResult(request.language, "invalid_request", "no bridge");
    StatusOr<std::unique_ptr<runtimes::BridgeRelay>> relay = runtimes::BridgeRelay::Start(*bridge);
    if (!relay.ok()) return runtimes::InternalErrorResult(request.language, "internal", relay.status().message());
    const int fd = (*relay)->jail_end();
    const int n = std::stoi(request.code.substr(6));
    for (int i = 1; i <= n; ++i) {
      (void)WriteJsonFrame(fd, {{"id", i}, {"op", "call"}, {"name", "x.y"}, {"args", {{"i", i}}}});
    }
    Json replies = Json::array();
    for (int i = 1; i <= n; ++i) {
      StatusOr<Json> reply = ReadJsonFrame(fd);
      if (!reply.ok()) break;
      replies.push_back(*reply);
    }
    (void)WriteJsonFrame(fd, {{"op", "result"}, {"value", "done"}});
    (*relay)->Finish();
    r.status = RunStatus::kOk;
    r.exit_code = 0;
    r.stdout_text = replies.dump();
    r.message = (*relay)->handed_over() ? "handed over" : "relayed";
    return r;
  }

  std::vector<LanguageInfo> Languages() override {
    ++language_calls;
    LanguageInfo py;
    py.name = "python";
    py.version = "3.11";
    py.notes = "call " + std::to_string(language_calls.load());
    LanguageInfo c;
    c.name = "c";
    c.compiled = true;
    return {py, c};
  }

  std::atomic<int> runs_started{0};
  std::atomic<int> runs_cancelled{0};
  std::atomic<int> language_calls{0};
};

// A spawn function: fork this test binary and serve RunnerMain in the child.
StatusOr<SpawnedRunner> ForkFakeRunner(RunnerOptions options = {}) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return ErrnoError("socketpair");
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return ErrnoError("fork");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    // Without exec nothing is closed for us: drop every other fd (other
    // runners' channels in particular) so EOF detection stays exact.
    const int keep = sv[1];
    if (keep > 3) close_range(3, keep - 1, 0);
    close_range(keep + 1, ~0U, 0);
    FakeExecutor executor;
    _exit(RunnerMain(keep, executor, options));
  }
  close(sv[1]);
  return SpawnedRunner(UniqueFd(sv[0]), pid);
}

RunnerClientOptions FakeOptions() {
  RunnerClientOptions o;
  o.spawn = [] { return ForkFakeRunner(); };
  o.max_concurrent = 4;
  o.max_queue = 4;
  return o;
}

RunRequest Request(const std::string& code, const std::string& language = "python") {
  RunRequest r;
  r.language = language;
  r.code = code;
  return r;
}

// Records progress phases; lets a test wait for one.
class ProgressLog {
 public:
  runtimes::ProgressFn Fn() {
    return [this](RunPhase p) {
      std::lock_guard<std::mutex> lock(mu_);
      phases_.push_back(p);
      cv_.notify_all();
    };
  }
  bool WaitFor(RunPhase p, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] {
      return std::find(phases_.begin(), phases_.end(), p) != phases_.end();
    });
  }
  std::vector<RunPhase> phases() {
    std::lock_guard<std::mutex> lock(mu_);
    return phases_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<RunPhase> phases_;
};

bool ProcessGone(pid_t pid) {
  errno = 0;
  const bool not_our_child = waitpid(pid, nullptr, WNOHANG) == -1 && errno == ECHILD;
  errno = 0;
  const bool no_process = kill(pid, 0) == -1 && errno == ESRCH;
  return not_our_child && no_process;
}

// ---------------------------------------------------------------- frames

struct SocketPair {
  SocketPair() {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    a.Reset(sv[0]);
    b.Reset(sv[1]);
  }
  UniqueFd a, b;
};

TEST(RunnerFrameTest, RoundTripsFramesInOrder) {
  SocketPair sp;
  ASSERT_TRUE(WriteFrame(sp.a.get(), "").ok());
  ASSERT_TRUE(WriteJsonFrame(sp.a.get(), {{"type", "ping"}, {"id", 7}}).ok());
  const std::string big(3 << 20, 'x');  // larger than the socket buffer: partial I/O
  std::thread writer([&] { EXPECT_TRUE(WriteFrame(sp.a.get(), big).ok()); });
  StatusOr<std::string> empty = ReadFrame(sp.b.get());
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
  StatusOr<Json> ping = ReadJsonFrame(sp.b.get());
  ASSERT_TRUE(ping.ok()) << ping.status().ToString();
  EXPECT_EQ((*ping)["id"], 7);
  StatusOr<std::string> got = ReadFrame(sp.b.get());
  writer.join();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, big);
}

// A descriptor rides with its frame: a reader that asks gets it
// (close-on-exec) with that frame and no other; one that does not ask
// never holds it (the kernel closes it), so its peer sees end of stream.
TEST(RunnerFrameTest, ADescriptorTravelsWithItsFrameOnlyToAReaderThatAsks) {
  SocketPair sp;
  int pipe_fds[2];
  ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK), 0);  // a leaked write end: EAGAIN, not a hang
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  ASSERT_TRUE(WriteJsonFrame(sp.a.get(), {{"n", 1}}).ok());
  ASSERT_TRUE(WriteJsonFrameWithFd(sp.a.get(), {{"n", 2}}, write_end.get()).ok());
  ASSERT_TRUE(WriteJsonFrame(sp.a.get(), {{"n", 3}}).ok());
  std::vector<UniqueFd> got;
  StatusOr<Json> one = ReadJsonFrame(sp.b.get(), kDefaultMaxFrameBytes, &got);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)["n"], 1);
  EXPECT_TRUE(got.empty());
  StatusOr<Json> two = ReadJsonFrame(sp.b.get(), kDefaultMaxFrameBytes, &got);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ((*two)["n"], 2);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(fcntl(got[0].get(), F_GETFD) & FD_CLOEXEC);
  ASSERT_EQ(write(got[0].get(), "z", 1), 1);  // the very pipe
  char c = 0;
  ASSERT_EQ(read(read_end.get(), &c, 1), 1);
  EXPECT_EQ(c, 'z');
  StatusOr<Json> three = ReadJsonFrame(sp.b.get(), kDefaultMaxFrameBytes, &got);
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(got.size(), 1u);
  got.clear();

  // A reader that does not ask: the descriptor is dropped with the frame.
  ASSERT_TRUE(WriteJsonFrameWithFd(sp.a.get(), {{"n", 4}}, write_end.get()).ok());
  write_end.Reset();
  StatusOr<Json> four = ReadJsonFrame(sp.b.get());
  ASSERT_TRUE(four.ok());
  EXPECT_EQ((*four)["n"], 4);
  EXPECT_EQ(read(read_end.get(), &c, 1), 0) << "no copy of the pipe's write end is left open";
}

TEST(RunnerFrameTest, InvalidUtf8IsReplacedNotThrown) {
  SocketPair sp;
  ASSERT_TRUE(WriteJsonFrame(sp.a.get(), {{"s", "a\xFF"}}).ok());
  StatusOr<Json> j = ReadJsonFrame(sp.b.get());
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["s"], "a\xEF\xBF\xBD");
}

TEST(RunnerFrameTest, PeerClosedIsUnavailable) {
  SocketPair sp;
  sp.a.Reset();
  StatusOr<std::string> r = ReadFrame(sp.b.get());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  // Writing to a closed peer: Unavailable, and no SIGPIPE kills the test.
  EXPECT_EQ(WriteFrame(sp.b.get(), "x").code(), StatusCode::kUnavailable);
}

TEST(RunnerFrameTest, TornFrameIsUnavailable) {
  SocketPair sp;
  const char partial[] = {0, 0, 0, 10, 'a', 'b'};
  ASSERT_EQ(write(sp.a.get(), partial, sizeof partial), 6);
  sp.a.Reset();
  StatusOr<std::string> r = ReadFrame(sp.b.get());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("middle of a frame"), std::string::npos);
}

TEST(RunnerFrameTest, BadJsonSkipsOneFrameOnly) {
  SocketPair sp;
  ASSERT_TRUE(WriteFrame(sp.a.get(), "{not json").ok());
  ASSERT_TRUE(WriteFrame(sp.a.get(), "[1,2]").ok());
  ASSERT_TRUE(WriteJsonFrame(sp.a.get(), {{"ok", true}}).ok());
  EXPECT_EQ(ReadJsonFrame(sp.b.get()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadJsonFrame(sp.b.get()).status().code(), StatusCode::kInvalidArgument);
  StatusOr<Json> j = ReadJsonFrame(sp.b.get());
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["ok"], true);
}

TEST(RunnerFrameTest, OversizedWriteIsRefusedAndNothingSent) {
  SocketPair sp;
  EXPECT_EQ(WriteFrame(sp.a.get(), std::string(100, 'x'), 99).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(WriteFrame(sp.a.get(), "next", 99).ok());
  StatusOr<std::string> r = ReadFrame(sp.b.get());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "next");
}

// The header announces 4 GiB and no payload follows. A correct reader
// refuses at once; one that allocated first would die under the address
// space limit, and one that tried to read the payload would hang.
TEST(RunnerFrameTest, TooLargeFrameRejectedBeforeAllocating) {
  SocketPair sp;
  const unsigned char header[] = {0xFF, 0xFF, 0xFF, 0xF0};
  ASSERT_EQ(write(sp.a.get(), header, sizeof header), 4);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit as{size_t{1} << 30, size_t{1} << 30};  // far below the 4 GiB announced
    // Our address space may already exceed 1 GiB (thread stacks); then keep
    // what we have plus 256 MiB.
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("VmSize:", 0) == 0) {
        const size_t kb = std::stoul(line.substr(7));
        as.rlim_cur = as.rlim_max = std::max<size_t>(as.rlim_cur, kb * 1024 + (size_t{256} << 20));
      }
    }
    if (setrlimit(RLIMIT_AS, &as) != 0) _exit(2);
    try {
      StatusOr<std::string> r = ReadFrame(sp.b.get(), size_t{64} << 20);
      _exit(r.status().code() == StatusCode::kResourceExhausted ? 0 : 1);
    } catch (...) {  // e.g. std::bad_alloc: it tried to allocate the payload
      _exit(3);
    }
  }
  SpawnedRunner child(UniqueFd(), pid);  // kills + reaps on scope exit
  std::optional<int> ws = child.WaitFor(std::chrono::seconds(5));
  ASSERT_TRUE(ws.has_value()) << "ReadFrame blocked reading a payload it should have refused";
  EXPECT_TRUE(WIFEXITED(*ws)) << DescribeWaitStatus(*ws);
  EXPECT_EQ(WEXITSTATUS(*ws), 0);

  // In-process too: the message names both sizes.
  ASSERT_EQ(write(sp.a.get(), header, sizeof header), 4);
  StatusOr<std::string> r = ReadFrame(sp.b.get(), 1024);
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("4294967280"), std::string::npos);
}

// ---------------------------------------------------------------- runner loop

// RunnerMain in a thread of this process, driven frame by frame.
class RunnerLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    loop_ = std::thread([this] { exit_code_ = RunnerMain(sp_.b.get(), executor_, options_); });
    StatusOr<Json> hello = Read();
    ASSERT_TRUE(hello.ok());
    EXPECT_EQ((*hello)["type"], "hello");
    EXPECT_EQ((*hello)["pid"], getpid());
    EXPECT_EQ((*hello)["version"], AIRLOCK_VERSION);
  }
  void TearDown() override {
    if (loop_.joinable()) {
      shutdown(sp_.a.get(), SHUT_RDWR);
      loop_.join();
    }
  }
  void Send(const Json& j) { ASSERT_TRUE(WriteJsonFrame(sp_.a.get(), j).ok()); }
  StatusOr<Json> Read() { return ReadJsonFrame(sp_.a.get()); }
  // Reads frames until the result of `id`, collecting its progress phases.
  Json ReadResult(uint64_t id, std::vector<std::string>* phases = nullptr) {
    for (;;) {
      StatusOr<Json> m = Read();
      if (!m.ok()) {
        ADD_FAILURE() << m.status().ToString();
        return Json();
      }
      if ((*m)["id"] != id) continue;
      if ((*m)["type"] == "progress" && phases) phases->push_back((*m)["phase"]);
      if ((*m)["type"] == "result") return (*m)["result"];
    }
  }

  SocketPair sp_;
  FakeExecutor executor_;
  RunnerOptions options_;
  std::thread loop_;
  int exit_code_ = -1;
};

TEST_F(RunnerLoopTest, RunPingAndLanguages) {
  RunRequest req = Request("int main(){}", "c");
  req.stdin_data = "in";
  Send({{"type", "run"}, {"id", 1}, {"request", ToJson(req)}});
  std::vector<std::string> phases;
  Json result = ReadResult(1, &phases);
  EXPECT_EQ(result["status"], "ok");
  EXPECT_EQ(result["stdout"], "int main(){}");
  EXPECT_EQ(result["stderr"], "in");
  // No "done" frame: the result ends the run (RunnerClient reports kDone).
  EXPECT_EQ(phases, (std::vector<std::string>{"starting", "compiling", "running"}));

  Send({{"type", "ping"}, {"id", 2}});
  StatusOr<Json> pong = Read();
  ASSERT_TRUE(pong.ok());
  EXPECT_EQ(*pong, (Json{{"type", "pong"}, {"id", 2}}));

  Send({{"type", "languages"}, {"id", 3}});
  StatusOr<Json> langs = Read();
  ASSERT_TRUE(langs.ok());
  EXPECT_EQ((*langs)["type"], "languages");
  ASSERT_EQ((*langs)["languages"].size(), 2u);
  EXPECT_EQ((*langs)["languages"][1]["name"], "c");
}

TEST_F(RunnerLoopTest, BadMessagesGetAnswersNotCrashes) {
  ASSERT_TRUE(WriteFrame(sp_.a.get(), "garbage").ok());
  Send({{"type", "run"}});                       // no id: ignored
  Send({{"type", "teleport"}, {"id", 9}});        // unknown type: ignored
  Send({{"type", "cancel"}, {"id", 12345}});      // unknown run: ignored
  Send({{"type", "run"}, {"id", 4}, {"request", {{"language", "python"}}}});
  Json bad = ReadResult(4);
  EXPECT_EQ(bad["status"], "internal_error");
  EXPECT_EQ(bad["error_code"], "invalid_request");
  EXPECT_NE(bad["message"].get<std::string>().find("code is required"), std::string::npos);
  // Still serving.
  Send({{"type", "run"}, {"id", 5}, {"request", ToJson(Request("x"))}});
  EXPECT_EQ(ReadResult(5)["status"], "ok");
}

TEST_F(RunnerLoopTest, DuplicateIdRejected) {
  Send({{"type", "run"}, {"id", 1}, {"request", ToJson(Request("sleep 5000"))}});
  Send({{"type", "run"}, {"id", 1}, {"request", ToJson(Request("x"))}});
  Json dup = ReadResult(1);
  EXPECT_EQ(dup["error_code"], "invalid_request");
  Send({{"type", "cancel"}, {"id", 1}});
  Json first = ReadResult(1);
  EXPECT_EQ(first["stdout"], "cancelled");
}

TEST_F(RunnerLoopTest, CancelStopsOnlyThatRun) {
  Send({{"type", "run"}, {"id", 1}, {"request", ToJson(Request("sleep 10000"))}});
  Send({{"type", "run"}, {"id", 2}, {"request", ToJson(Request("sleep 300"))}});
  const auto start = Clock::now();
  Send({{"type", "cancel"}, {"id", 1}});
  std::map<uint64_t, Json> results;
  while (results.size() < 2) {
    StatusOr<Json> m = Read();
    ASSERT_TRUE(m.ok());
    if ((*m)["type"] == "result") results[(*m)["id"]] = (*m)["result"];
  }
  EXPECT_LT(MsSince(start), 2000);
  EXPECT_EQ(results[1]["stdout"], "cancelled");
  EXPECT_EQ(results[2]["stdout"], "sleep 300");
  EXPECT_EQ(executor_.runs_cancelled, 1);
}

TEST_F(RunnerLoopTest, HardCapAnswersBusy) {
  TearDown();  // restart with a cap of 1
  sp_ = SocketPair();
  options_.max_concurrent_runs = 1;
  SetUp();
  Send({{"type", "run"}, {"id", 1}, {"request", ToJson(Request("sleep 10000"))}});
  Send({{"type", "run"}, {"id", 2}, {"request", ToJson(Request("x"))}});
  Json busy = ReadResult(2);
  EXPECT_EQ(busy["error_code"], "busy");
  Send({{"type", "cancel"}, {"id", 1}});
  EXPECT_EQ(ReadResult(1)["stdout"], "cancelled");
}

TEST_F(RunnerLoopTest, EofCancelsEverythingAndExitsZero) {
  for (int id = 1; id <= 3; ++id) {
    Send({{"type", "run"}, {"id", id}, {"request", ToJson(Request("sleep 30000"))}});
  }
  // Wait until all three are executing.
  int running = 0;
  while (running < 3) {
    StatusOr<Json> m = Read();
    ASSERT_TRUE(m.ok());
    if ((*m)["type"] == "progress" && (*m)["phase"] == "running") ++running;
  }
  const auto start = Clock::now();
  shutdown(sp_.a.get(), SHUT_RDWR);  // the server "dies"
  loop_.join();
  EXPECT_LT(MsSince(start), 2000);
  EXPECT_EQ(exit_code_, 0);
  EXPECT_EQ(executor_.runs_started, 3);
  EXPECT_EQ(executor_.runs_cancelled, 3);  // every run was cancelled, none left behind
}

TEST(RunnerLoopFdTest, MarksChannelCloexecAndRejectsBadFd) {
  FakeExecutor executor;
  EXPECT_EQ(RunnerMain(-1, executor, RunnerOptions{}), 1);
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);  // inherited: no CLOEXEC
  UniqueFd server(sv[0]), runner_end(sv[1]);
  ASSERT_EQ(fcntl(runner_end.get(), F_GETFD) & FD_CLOEXEC, 0);
  int rc = -1;
  std::thread loop([&] { rc = RunnerMain(runner_end.get(), executor, RunnerOptions{}); });
  ASSERT_TRUE(ReadJsonFrame(server.get()).ok());  // hello
  EXPECT_NE(fcntl(runner_end.get(), F_GETFD) & FD_CLOEXEC, 0);
  server.Reset();
  loop.join();
  EXPECT_EQ(rc, 0);
}

// ---------------------------------------------------------------- client

TEST(RunnerClientTest, RunRoundTrips) {
  RunnerClient client(FakeOptions());
  ASSERT_TRUE(client.Start().ok());
  const pid_t pid = client.runner_pid();
  EXPECT_GT(pid, 0);
  EXPECT_NE(pid, getpid());  // the code runs in another process
  CancelToken cancel;
  ProgressLog log;
  RunRequest req = Request("print(1)");
  req.stdin_data = "some input";
  req.files = {{"blob", std::string("\0\xFF", 2)}};
  RunResult r = client.Run(req, log.Fn(), cancel);
  EXPECT_EQ(r.status, RunStatus::kOk) << r.message;
  EXPECT_EQ(r.stdout_text, "print(1)");
  EXPECT_EQ(r.stderr_text, "some input");
  EXPECT_EQ(log.phases(),
            (std::vector<RunPhase>{RunPhase::kStarting, RunPhase::kRunning, RunPhase::kDone}));
}

TEST(RunnerClientTest, FourConcurrentRunsAllComplete) {
  RunnerClient client(FakeOptions());
  ASSERT_TRUE(client.Start().ok());
  std::vector<RunResult> results(4);
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      CancelToken cancel;
      results[i] = client.Run(Request("sleep 400"), nullptr, cancel);
    });
  }
  for (auto& t : threads) t.join();
  // Serially this would take 1.6 s.
  EXPECT_LT(MsSince(start), 1500);
  for (const RunResult& r : results) {
    EXPECT_EQ(r.status, RunStatus::kOk) << r.message;
    EXPECT_EQ(r.stdout_text, "sleep 400");
  }
}

TEST(RunnerClientTest, BusyWhenQueueFull) {
  RunnerClientOptions o = FakeOptions();
  o.max_concurrent = 1;
  o.max_queue = 1;
  RunnerClient client(o);
  ASSERT_TRUE(client.Start().ok());
  ProgressLog first_log, second_log;
  RunResult first, second;
  std::thread a([&] {
    CancelToken cancel;
    first = client.Run(Request("sleep 800"), first_log.Fn(), cancel);
  });
  ASSERT_TRUE(first_log.WaitFor(RunPhase::kRunning));
  std::thread b([&] {
    CancelToken cancel;
    second = client.Run(Request("second"), second_log.Fn(), cancel);
  });
  ASSERT_TRUE(second_log.WaitFor(RunPhase::kQueued));

  CancelToken cancel;
  ProgressLog third_log;
  const auto start = Clock::now();
  RunResult third = client.Run(Request("third"), third_log.Fn(), cancel);
  EXPECT_LT(MsSince(start), 200);  // fails fast
  EXPECT_EQ(third.status, RunStatus::kInternalError);
  EXPECT_EQ(third.error_code, "busy");
  EXPECT_EQ(third.message, "airlock is busy: 1 runs in flight and 1 queued; retry later");
  EXPECT_TRUE(third_log.phases().empty());

  a.join();
  b.join();
  EXPECT_EQ(first.status, RunStatus::kOk) << first.message;
  EXPECT_EQ(second.status, RunStatus::kOk) << second.message;
  EXPECT_EQ(second.stdout_text, "second");
  EXPECT_EQ(second_log.phases().front(), RunPhase::kQueued);
}

// Attack: one caller starts as many long runs as there are slots. With
// per-caller limits it holds only its share; another caller's run still
// starts and finishes while the first caller's runs go on, and the first
// caller's runs past its share and its queue places are refused as busy.
TEST(RunnerClientTest, OneCallerCannotTakeEverySlot) {
  RunnerClientOptions o = FakeOptions();
  o.max_concurrent = 3;
  o.max_queue = 16;
  o.max_concurrent_per_caller = 2;
  o.max_queue_per_caller = 1;
  RunnerClient client(o);
  ASSERT_TRUE(client.Start().ok());
  auto from = [](const std::string& caller, const std::string& code) {
    RunRequest r = Request(code);
    r.caller = caller;
    return r;
  };
  // Caller A: a run per slot (3), each long.
  constexpr int kA = 3;
  std::vector<ProgressLog> a_logs(kA);
  std::vector<CancelToken> a_cancel(kA);
  std::vector<RunResult> a_results(kA);
  std::atomic<int> a_done{0};
  std::vector<std::thread> a_threads;
  for (int i = 0; i < kA; ++i) {
    a_threads.emplace_back([&, i] {
      a_results[i] = client.Run(from("api_key:alice", "sleep 30000"), a_logs[i].Fn(), a_cancel[i]);
      ++a_done;
    });
    // Two start; the third waits in the queue (A's share is 2 slots).
    ASSERT_TRUE(a_logs[i].WaitFor(i < 2 ? RunPhase::kRunning : RunPhase::kQueued)) << "run " << i;
  }
  EXPECT_EQ(client.CurrentLoad().in_flight, 2u);

  // A's next run: over its share and its queue places: busy, at once.
  CancelToken cancel;
  RunResult refused = client.Run(from("api_key:alice", "one more"), nullptr, cancel);
  EXPECT_EQ(refused.status, RunStatus::kInternalError);
  EXPECT_EQ(refused.error_code, "busy");
  EXPECT_NE(refused.message.find("per-caller limit"), std::string::npos) << refused.message;

  // Caller B is served while every run of A is still going.
  ProgressLog b_log;
  RunResult b = client.Run(from("api_key:bob", "bob's run"), b_log.Fn(), cancel);
  EXPECT_EQ(b.status, RunStatus::kOk) << b.message;
  EXPECT_EQ(b.stdout_text, "bob's run");
  EXPECT_EQ(a_done.load(), 0) << "B only ran after A's runs ended";
  // A's queued run still waits: the free slot is not A's to take.
  EXPECT_FALSE(a_logs[2].WaitFor(RunPhase::kRunning, std::chrono::milliseconds(300)));

  // A's first run ends: its queued run takes the freed share.
  a_cancel[0].Cancel();
  EXPECT_TRUE(a_logs[2].WaitFor(RunPhase::kRunning, std::chrono::seconds(10)));
  a_cancel[1].Cancel();
  a_cancel[2].Cancel();
  for (auto& t : a_threads) t.join();
  for (const RunResult& r : a_results) EXPECT_EQ(r.error_code, "cancelled") << r.message;
  const RunnerClient::Load load = client.CurrentLoad();
  EXPECT_EQ(load.in_flight, 0u);
  EXPECT_EQ(load.queued, 0u);
}

TEST(RunnerClientTest, CancellationReturnsPromptly) {
  RunnerClient client(FakeOptions());
  ASSERT_TRUE(client.Start().ok());
  CancelToken cancel;
  ProgressLog log;
  RunResult r;
  std::thread t([&] { r = client.Run(Request("sleep 20000"), log.Fn(), cancel); });
  ASSERT_TRUE(log.WaitFor(RunPhase::kRunning));
  const auto start = Clock::now();
  cancel.Cancel();
  t.join();
  EXPECT_LT(MsSince(start), 1000);
  EXPECT_EQ(r.status, RunStatus::kInternalError);
  EXPECT_EQ(r.error_code, "cancelled");
  // The runner really stopped it (its partial result came back).
  EXPECT_EQ(r.stdout_text, "cancelled");
  // And the slot is free again.
  CancelToken fresh;
  EXPECT_EQ(client.Run(Request("after"), nullptr, fresh).status, RunStatus::kOk);
}

TEST(RunnerClientTest, CancellationWaitIsBoundedWhenTheRunnerIgnoresIt) {
  RunnerClientOptions o = FakeOptions();
  o.cancel_grace = std::chrono::milliseconds(200);
  RunnerClient client(o);
  ASSERT_TRUE(client.Start().ok());
  CancelToken cancel;
  ProgressLog log;
  RunResult r;
  std::thread t([&] { r = client.Run(Request("ignore 3000"), log.Fn(), cancel); });
  ASSERT_TRUE(log.WaitFor(RunPhase::kRunning));
  const auto start = Clock::now();
  cancel.Cancel();
  t.join();
  const int64_t waited = MsSince(start);
  EXPECT_GE(waited, 150);
  EXPECT_LT(waited, 1000);
  EXPECT_EQ(r.error_code, "cancelled");
  EXPECT_TRUE(r.stdout_text.empty());  // no result arrived in time
}

TEST(RunnerClientTest, CancellationWhileQueued) {
  RunnerClientOptions o = FakeOptions();
  o.max_concurrent = 1;
  RunnerClient client(o);
  ASSERT_TRUE(client.Start().ok());
  ProgressLog first_log, second_log;
  CancelToken first_cancel, second_cancel;
  RunResult first, second;
  std::thread a([&] { first = client.Run(Request("sleep 1000"), first_log.Fn(), first_cancel); });
  ASSERT_TRUE(first_log.WaitFor(RunPhase::kRunning));
  std::thread b([&] { second = client.Run(Request("never"), second_log.Fn(), second_cancel); });
  ASSERT_TRUE(second_log.WaitFor(RunPhase::kQueued));
  const auto start = Clock::now();
  second_cancel.Cancel();
  b.join();
  EXPECT_LT(MsSince(start), 500);
  EXPECT_EQ(second.error_code, "cancelled");
  EXPECT_EQ(second_log.phases(), std::vector<RunPhase>{RunPhase::kQueued});  // never started
  a.join();
  EXPECT_EQ(first.status, RunStatus::kOk);
}

TEST(RunnerClientTest, RunnerCrashFailsInFlightRunsAndRestarts) {
  RunnerClient client(FakeOptions());
  ASSERT_TRUE(client.Start().ok());
  const pid_t old_pid = client.runner_pid();
  ProgressLog sleeper_log;
  RunResult sleeper;
  std::thread t([&] {
    CancelToken cancel;
    sleeper = client.Run(Request("sleep 20000"), sleeper_log.Fn(), cancel);
  });
  ASSERT_TRUE(sleeper_log.WaitFor(RunPhase::kRunning));

  const auto start = Clock::now();
  CancelToken cancel;
  RunResult crash = client.Run(Request("crash"), nullptr, cancel);
  t.join();
  EXPECT_LT(MsSince(start), 3000);
  for (const RunResult* r : {&crash, &sleeper}) {
    EXPECT_EQ(r->status, RunStatus::kInternalError);
    EXPECT_EQ(r->error_code, "runner_unavailable");
    EXPECT_EQ(r->message,
              "the code runner process exited unexpectedly (signal 9); the run was aborted");
  }
  EXPECT_TRUE(ProcessGone(old_pid));  // reaped, not a zombie

  // The client restarts the runner; the next run succeeds.
  RunResult next = client.Run(Request("again"), nullptr, cancel);
  EXPECT_EQ(next.status, RunStatus::kOk) << next.message;
  EXPECT_EQ(next.stdout_text, "again");
  EXPECT_NE(client.runner_pid(), old_pid);

  // An exit (not a signal) is described as such.
  RunResult exited = client.Run(Request("exit3"), nullptr, cancel);
  EXPECT_EQ(exited.error_code, "runner_unavailable");
  EXPECT_NE(exited.message.find("(exit code 3)"), std::string::npos) << exited.message;
  EXPECT_EQ(client.Run(Request("fine"), nullptr, cancel).status, RunStatus::kOk);
}

TEST(RunnerClientTest, SpawnFailureMeansRunnerUnavailableAndNothingRuns) {
  std::atomic<int> spawn_calls{0};
  RunnerClientOptions o = FakeOptions();
  o.start_timeout = std::chrono::milliseconds(500);
  o.spawn = [&]() -> StatusOr<SpawnedRunner> {
    ++spawn_calls;
    return Unavailable("no runner for you");
  };
  RunnerClient client(o);
  Status st = client.Start();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("no runner for you"), std::string::npos);
  EXPECT_EQ(client.runner_pid(), -1);

  CancelToken cancel;
  ProgressLog log;
  const auto start = Clock::now();
  RunResult r = client.Run(Request("print(1)"), log.Fn(), cancel);
  EXPECT_LT(MsSince(start), 500);  // refused, not hung
  EXPECT_EQ(r.status, RunStatus::kInternalError);
  EXPECT_EQ(r.error_code, "runner_unavailable");
  EXPECT_NE(r.message.find("the local code runner process could not be started (no runner for you)"), std::string::npos)
      << r.message;
  EXPECT_TRUE(r.stdout_text.empty());  // nothing ran in-process
  EXPECT_TRUE(log.phases().empty());
  EXPECT_TRUE(client.Languages().empty());
  EXPECT_GE(spawn_calls, 1);
}

TEST(RunnerClientTest, RunnerThatNeverSaysHelloIsKilled) {
  pid_t child_pid = -1;
  RunnerClientOptions o = FakeOptions();
  o.start_timeout = std::chrono::milliseconds(300);
  o.restart_backoff_min = std::chrono::milliseconds(5000);
  o.spawn = [&]() -> StatusOr<SpawnedRunner> {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return ErrnoError("sp");
    const pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      pause();  // silent
      _exit(0);
    }
    close(sv[1]);
    child_pid = pid;
    return SpawnedRunner(UniqueFd(sv[0]), pid);
  };
  {
    RunnerClient client(o);
    Status st = client.Start();
    EXPECT_EQ(st.code(), StatusCode::kUnavailable);
    EXPECT_NE(st.message().find("did not report ready"), std::string::npos) << st.message();
    ASSERT_GT(child_pid, 0);
    EXPECT_TRUE(ProcessGone(child_pid));
  }
}

// A runner that cannot run code on this host (airlock runner without
// cgroups, as a normal user) says why in a "fatal" frame and exits 3: the
// cause reaches the run result, not only the server's stderr.
TEST(RunnerClientTest, RunnerFatalFrameCarriesTheCauseIntoRunUnavailable) {
  RunnerClientOptions o = FakeOptions();
  o.start_timeout = std::chrono::milliseconds(5000);
  o.restart_backoff_min = std::chrono::milliseconds(5000);
  const std::string cause = "cannot run code on this host: cgroup memory/pids controllers are not usable by uid 1000";
  o.spawn = [&]() -> StatusOr<SpawnedRunner> {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return ErrnoError("sp");
    const pid_t pid = fork();
    if (pid == 0) {
      (void)WriteJsonFrame(sv[1], {{"type", "fatal"}, {"message", cause}});
      _exit(3);
    }
    close(sv[1]);
    return SpawnedRunner(UniqueFd(sv[0]), pid);
  };
  RunnerClient client(o);
  Status st = client.Start();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find(cause), std::string::npos) << st.message();
  CancelToken cancel;
  RunResult r = client.Run(Request("print(1)"), nullptr, cancel);
  EXPECT_EQ(r.error_code, "runner_unavailable");
  EXPECT_NE(r.message.find(cause), std::string::npos) << r.message;
  EXPECT_EQ(client.Health().value("error", std::string()).find(cause), 0u) << client.Health().dump();
}

TEST(RunnerClientTest, LanguagesComeFromTheRunnerAndAreCached) {
  RunnerClientOptions o = FakeOptions();
  RunnerClient client(o);
  std::vector<LanguageInfo> first = client.Languages();  // starts lazily
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].name, "python");
  EXPECT_EQ(first[0].notes, "call 1");
  EXPECT_TRUE(first[1].compiled);
  EXPECT_EQ(client.Languages()[0].notes, "call 1");  // cached

  o.languages_ttl = std::chrono::milliseconds(0);
  RunnerClient uncached(o);
  EXPECT_EQ(uncached.Languages()[0].notes, "call 1");
  EXPECT_EQ(uncached.Languages()[0].notes, "call 2");
}

TEST(RunnerClientTest, NoZombieLeftAfterDestruction) {
  pid_t pid;
  RunResult in_flight;
  {
    RunnerClient client(FakeOptions());
    ASSERT_TRUE(client.Start().ok());
    pid = client.runner_pid();
    ASSERT_GT(pid, 0);
    CancelToken cancel;
    EXPECT_EQ(client.Run(Request("x"), nullptr, cancel).status, RunStatus::kOk);
    // Stop with a run in flight: the run fails cleanly, the runner is reaped.
    ProgressLog log;
    std::thread t([&] {
      CancelToken c;
      in_flight = client.Run(Request("sleep 30000"), log.Fn(), c);
    });
    ASSERT_TRUE(log.WaitFor(RunPhase::kRunning));
    const auto start = Clock::now();
    client.Stop();
    t.join();
    EXPECT_LT(MsSince(start), 3000);
    EXPECT_EQ(client.Run(Request("x"), nullptr, cancel).error_code, "runner_unavailable");
  }
  EXPECT_EQ(in_flight.error_code, "runner_unavailable");
  EXPECT_TRUE(ProcessGone(pid));
}

TEST(RunnerClientTest, DefaultSpawnGivesACleanChild) {
  char dir_template[] = "/tmp/airlock-runner-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string script = dir + "/fake-runner.sh";
  {
    std::ofstream s(script);
    s << "#!/bin/sh\n"
      << "echo \"$@\" > " << dir << "/args\n"
      << "env > " << dir << "/env\n"
      << "ls /proc/$$/fd > " << dir << "/fds\n"
      << "OUT=$(readlink /proc/$$/fd/1)\n"
      << "echo \"$OUT\" > " << dir << "/stdout\n"
      << "echo done > " << dir << "/done\n";
  }
  ASSERT_EQ(chmod(script.c_str(), 0755), 0);
  setenv("AIRLOCK_TEST_SECRET", "leak", 1);
  StatusOr<SpawnedRunner> runner = SpawnRunnerProcess(script);
  unsetenv("AIRLOCK_TEST_SECRET");
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  std::optional<int> ws = runner->WaitFor(std::chrono::seconds(5));
  ASSERT_TRUE(ws.has_value());
  EXPECT_TRUE(WIFEXITED(*ws) && WEXITSTATUS(*ws) == 0) << DescribeWaitStatus(*ws);
  auto slurp = [&](const std::string& name) {
    std::ifstream f(dir + "/" + name);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  const std::string args = slurp("args");
  ASSERT_EQ(args.rfind("runner --channel-fd ", 0), 0u) << args;
  const std::string channel_fd = args.substr(20, args.size() - 21);
  const std::string env = slurp("env");
  EXPECT_EQ(env.find("AIRLOCK_TEST_SECRET"), std::string::npos) << env;
  EXPECT_NE(env.find("PATH=/usr/local/sbin"), std::string::npos) << env;
  EXPECT_EQ(slurp("stdout"), "/dev/null\n");  // never our stdio channel
  // Only stdio, the channel, and whatever the shell opens itself (the
  // script, beyond 9). In particular none of this test binary's fds.
  std::istringstream fds(slurp("fds"));
  std::string fd;
  std::vector<std::string> low;
  while (fds >> fd) {
    if (std::stoi(fd) < 10) low.push_back(fd);
  }
  EXPECT_EQ(low, (std::vector<std::string>{"0", "1", "2", channel_fd})) << slurp("fds");
  std::system(("rm -rf " + dir).c_str());
}

// The server side of a code-mode run: answers each call from another thread
// (as the real BridgeSession does) and records every frame.
class RecordingBridge : public runtimes::BridgeHandler {
 public:
  ~RecordingBridge() override {
    for (std::thread& t : threads_) t.join();
  }
  void OnFrame(std::string frame, ReplyFn reply) override {
    std::lock_guard<std::mutex> lock(mu_);
    frames.push_back(frame);
    Json j = Json::parse(frame, nullptr, false);
    if (j.value("op", "") != "call") return;
    threads_.emplace_back([j, reply] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      reply(Json{{"id", j["id"]}, {"ok", true}, {"result", j["args"]["i"].get<int>() * 10}}.dump());
    });
  }
  std::vector<std::string> Frames() {
    std::lock_guard<std::mutex> lock(mu_);
    return frames;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> frames;
  std::vector<std::thread> threads_;
};

TEST(RunnerBridgeTest, FramesTravelBothWaysThroughTheRunnerProcess) {
  RunnerClient client(FakeOptions());
  RecordingBridge bridge;
  RunRequest req = Request("calls 5", "javascript");
  req.code_mode = true;
  CancelToken cancel;
  RunResult r = client.Run(req, nullptr, cancel, &bridge);
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
  Json replies = Json::parse(r.stdout_text);
  ASSERT_EQ(replies.size(), 5u) << r.stdout_text;
  std::set<int> values;
  for (const Json& reply : replies) {
    EXPECT_TRUE(reply["ok"].get<bool>());
    EXPECT_EQ(reply["result"].get<int>(), reply["id"].get<int>() * 10);
    values.insert(reply["result"].get<int>());
  }
  EXPECT_EQ(values, (std::set<int>{10, 20, 30, 40, 50}));
  std::vector<std::string> frames = bridge.Frames();
  ASSERT_EQ(frames.size(), 6u);  // 5 calls + the final result, in order
  EXPECT_EQ(Json::parse(frames[0])["id"], 1);
  EXPECT_EQ(Json::parse(frames[5]), (Json{{"op", "result"}, {"value", "done"}}));
}

// As `airlock runner` serves the local server: the runner hands the bridge
// socket over ("bridge_socket" with SCM_RIGHTS) and the client reads the
// program's frames itself; the run is the same to both ends.
TEST(RunnerBridgeTest, AHandedOverBridgeSocketCarriesTheSameFrames) {
  RunnerClientOptions options = FakeOptions();
  options.spawn = [] { return ForkFakeRunner(RunnerOptions{.pass_bridge_sockets = true}); };
  RunnerClient client(options);
  for (int round = 0; round < 3; ++round) {
    RecordingBridge bridge;
    RunRequest req = Request("calls 5", "javascript");
    req.code_mode = true;
    CancelToken cancel;
    RunResult r = client.Run(req, nullptr, cancel, &bridge);
    ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
    EXPECT_EQ(r.message, "handed over");
    Json replies = Json::parse(r.stdout_text);
    ASSERT_EQ(replies.size(), 5u) << r.stdout_text;
    for (const Json& reply : replies) EXPECT_EQ(reply["result"].get<int>(), reply["id"].get<int>() * 10);
    // Every frame, the final one included, reached the handler before Run returned.
    std::vector<std::string> frames = bridge.Frames();
    ASSERT_EQ(frames.size(), 6u);
    EXPECT_EQ(Json::parse(frames[5]), (Json{{"op", "result"}, {"value", "done"}}));
  }
  // Without the option (a runner host's channel) the frames are relayed.
  RunnerClient relayed(FakeOptions());
  RecordingBridge bridge;
  RunRequest req = Request("calls 2", "javascript");
  req.code_mode = true;
  CancelToken cancel;
  RunResult r = relayed.Run(req, nullptr, cancel, &bridge);
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
  EXPECT_EQ(r.message, "relayed");
  EXPECT_EQ(bridge.Frames().size(), 3u);
}

TEST(RunnerBridgeTest, CodeModeWithoutABridgeIsRefusedBeforeTheRunner) {
  RunnerClient client(FakeOptions());
  RunRequest req = Request("calls 1", "javascript");
  req.code_mode = true;
  CancelToken cancel;
  RunResult r = client.Run(req, nullptr, cancel, nullptr);
  EXPECT_EQ(r.status, RunStatus::kInternalError);
  EXPECT_EQ(r.error_code, "invalid_request");
}

// BridgeRelay on its own: frames in order, replies queued without blocking,
// an oversized frame ends the bridge with an error, Finish drains.
class CountingBridge : public runtimes::BridgeHandler {
 public:
  void OnFrame(std::string frame, ReplyFn reply) override {
    frames.push_back(std::move(frame));
    reply("{\"id\":" + std::to_string(frames.size()) + ",\"ok\":true,\"result\":null}");
  }
  void OnBridgeError(const std::string& message) override { errors.push_back(message); }
  std::vector<std::string> frames, errors;  // only the reader thread writes
};

TEST(BridgeRelayTest, FinishDeliversEveryBufferedFrame) {
  CountingBridge handler;
  auto relay = runtimes::BridgeRelay::Start(handler);
  ASSERT_TRUE(relay.ok());
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(WriteFrame((*relay)->jail_end(), "{\"n\":" + std::to_string(i) + "}").ok());
  (*relay)->Finish();  // the "program" has exited; everything it wrote arrives
  ASSERT_EQ(handler.frames.size(), 50u);
  EXPECT_EQ(handler.frames[49], "{\"n\":49}");
  EXPECT_TRUE(handler.errors.empty());
}

TEST(BridgeRelayTest, OversizedFrameEndsTheBridgeWithAnError) {
  CountingBridge handler;
  auto relay = runtimes::BridgeRelay::Start(handler);
  ASSERT_TRUE(relay.ok());
  const int fd = (*relay)->jail_end();
  const uint32_t huge = htonl(static_cast<uint32_t>(runtimes::kBridgeMaxFrameBytes + 1));
  ASSERT_EQ(write(fd, &huge, sizeof huge), static_cast<ssize_t>(sizeof huge));
  // The relay shuts the socket: the program's next read sees EOF.
  StatusOr<std::string> reply = ReadFrame(fd);
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  (*relay)->Finish();
  ASSERT_EQ(handler.errors.size(), 1u);
  EXPECT_NE(handler.errors[0].find("bridge protocol"), std::string::npos) << handler.errors[0];
}

TEST(BridgeRelayTest, AProgramThatNeverReadsCannotBlockTheHandler) {
  // Replies pile up in the relay's queue, not in the handler's thread.
  struct BigReplies : runtimes::BridgeHandler {
    void OnFrame(std::string, ReplyFn reply) override {
      for (int i = 0; i < 16; ++i) reply("\"" + std::string(1 << 20, 'y') + "\"");  // 16 MiB, never read
      ++frames;
    }
    std::atomic<int> frames{0};
  } flood;
  auto relay2 = runtimes::BridgeRelay::Start(flood);
  ASSERT_TRUE(relay2.ok());
  const auto start = Clock::now();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(WriteFrame((*relay2)->jail_end(), "{}").ok());
  while (flood.frames.load() < 3 && MsSince(start) < 5000) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(flood.frames.load(), 3);  // the reader kept going although nothing was read
  (*relay2)->Finish();                // and Finish does not hang on the full socket
  EXPECT_LT(MsSince(start), 5000);
}

TEST(BridgeRelayTest, RepliesArriveWholeAndInOrderWhenSomeAreSentAtOnceAndSomeQueued) {
  // Replies go out with a non-blocking send while the socket takes them and
  // through the writer thread once it is full (a partly sent reply's tail
  // first). A program that reads slowly while replies keep coming still
  // gets every reply, whole, in the order they were made: a reply never
  // overtakes queued bytes.
  struct Mixed : runtimes::BridgeHandler {
    void OnFrame(std::string, ReplyFn reply) override {
      for (int i = 0; i < 200; ++i) {
        const size_t size = (i % 3 == 0) ? (100u << 10) : 10u;  // large ones fill the socket
        reply("[" + std::to_string(i) + ",\"" + std::string(size, static_cast<char>('a' + i % 26)) + "\"]");
        if (i % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
      }
      done = true;
    }
    std::atomic<bool> done{false};
  } handler;
  auto relay = runtimes::BridgeRelay::Start(handler);
  ASSERT_TRUE(relay.ok());
  const int fd = (*relay)->jail_end();
  ASSERT_TRUE(WriteFrame(fd, "{}").ok());
  for (int i = 0; i < 200; ++i) {
    if (i % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(500));  // a slow reader
    StatusOr<std::string> frame = ReadFrame(fd, runtimes::kBridgeMaxFrameBytes);
    ASSERT_TRUE(frame.ok()) << i << ": " << frame.status().message();
    Json reply = Json::parse(*frame, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(reply.is_array()) << "reply " << i << " is torn";
    ASSERT_EQ(reply[0].get<int>(), i);
    const size_t size = (i % 3 == 0) ? (100u << 10) : 10u;
    ASSERT_EQ(reply[1].get<std::string>(), std::string(size, static_cast<char>('a' + i % 26)));
  }
  EXPECT_TRUE(handler.done.load());
  (*relay)->Finish();
}

}  // namespace
}  // namespace airlock::runner
