// The runner-host protocol end to end, without jails: a real gRPC server with
// mutual TLS (certificates made by openssl for each test binary run), a fake
// executor behind it, and the gateway's RunnerClient / RunnerFleet in front.
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <future>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "remote/frame_codec.h"
#include "remote/remote_link.h"
#include "remote/runner_fleet.h"
#include "remote/runner_host_server.h"
#include "remote/slot_limited_executor.h"
#include "remote/tls_files.h"
#include "runner/runner_client.h"
#include "runtimes/bridge_relay.h"

namespace airlock::remote {
namespace {

using nlohmann::json;
using runtimes::RunRequest;
using runtimes::RunResult;
using runtimes::RunStatus;
using namespace std::chrono_literals;

// "sleep N": waits N ms or until cancelled; a code-mode request plays a
// program that makes one call on its bridge and reports the reply (and
// whether the bridge was relayed or handed over); anything else is echoed.
class EchoExecutor : public runtimes::CodeExecutor {
 public:
  RunResult Run(const RunRequest& request, const runtimes::ProgressFn& progress, CancelToken& cancel,
                runtimes::BridgeHandler* bridge) override {
    ++started;
    if (request.code_mode) return BridgedProgram(request, bridge);
    progress(runtimes::RunPhase::kRunning);
    RunResult r;
    r.language = request.language;
    r.status = RunStatus::kOk;
    r.exit_code = 0;
    if (request.code.rfind("sleep ", 0) == 0) {
      pollfd p{cancel.fd(), POLLIN, 0};
      poll(&p, 1, std::stoi(request.code.substr(6)));
      if (cancel.cancelled()) {
        ++cancelled;
        r.status = RunStatus::kKilledSignal;
        r.signal = 9;
      }
    }
    r.stdout_text = request.session_id.empty() ? request.code : request.session_id + ":" + request.code;
    return r;
  }
  std::vector<runtimes::LanguageInfo> Languages() override {
    runtimes::LanguageInfo l;
    l.name = "python";
    l.tiers = {"native"};
    l.sessions = true;
    return {l};
  }
  Status OpenSession(const runtimes::SessionSpec& spec) override {
    std::lock_guard<std::mutex> lock(mu);
    sessions.insert(spec.id);
    specs[spec.id] = runtimes::ToJson(spec).dump();
    if (spec.code_mode) code_mode_sessions.insert(spec.id);
    return OkStatus();
  }

  static RunResult BridgedProgram(const RunRequest& request, runtimes::BridgeHandler* bridge) {
    if (bridge == nullptr) return runtimes::InternalErrorResult(request.language, "invalid_request", "no bridge");
    StatusOr<std::unique_ptr<runtimes::BridgeRelay>> relay = runtimes::BridgeRelay::Start(*bridge);
    if (!relay.ok()) return runtimes::InternalErrorResult(request.language, "internal", relay.status().message());
    const int fd = (*relay)->jail_end();
    (void)WriteJsonFrame(fd, {{"id", 1}, {"op", "call"}, {"name", "x.y"}, {"args", {{"cell", request.session_id}}}});
    StatusOr<json> reply = ReadJsonFrame(fd);
    (void)WriteJsonFrame(fd, {{"op", "result"}, {"value", "done"}});
    (*relay)->Finish();
    RunResult r;
    r.language = request.language;
    r.status = RunStatus::kOk;
    r.exit_code = 0;
    r.stdout_text = reply.ok() ? reply->dump() : reply.status().ToString();
    r.message = (*relay)->handed_over() ? "handed over" : "relayed";
    return r;
  }
  Status CloseSession(const std::string& id) override {
    std::lock_guard<std::mutex> lock(mu);
    paused.erase(id);
    return sessions.erase(id) ? OkStatus() : NotFound("no such session");
  }
  // Checkpoints: a session whose id starts "s_np" cannot be paused, as a
  // native one in the runner.
  Status PauseSession(const std::string& id) override {
    std::lock_guard<std::mutex> lock(mu);
    AIRLOCK_RETURN_IF_ERROR(PausableLocked(id));
    paused.insert(id);
    return OkStatus();
  }
  Status ResumeSession(const std::string& id) override {
    std::lock_guard<std::mutex> lock(mu);
    AIRLOCK_RETURN_IF_ERROR(PausableLocked(id));
    paused.erase(id);
    moving.erase(id);
    return OkStatus();
  }
  Status ForkSession(const std::string& id, const runtimes::SessionSpec& copy) override {
    std::lock_guard<std::mutex> lock(mu);
    AIRLOCK_RETURN_IF_ERROR(PausableLocked(id));
    sessions.insert(copy.id);
    return OkStatus();
  }
  Status PausableLocked(const std::string& id) {
    if (!sessions.count(id)) return NotFound("no such session");
    if (id.rfind("s_np", 0) == 0) return FailedPrecondition("E_SESSION_NOT_PAUSABLE: not this one");
    return OkStatus();
  }
  // Moves: a session's "image" is ImageOf(id), 9 MiB (three chunks); a
  // session whose id starts "s_refuse" is refused by every importer.
  static std::string ImageOf(const std::string& id) {
    std::string image(9u << 20, 'i');
    image.replace(0, id.size(), id);
    image.replace(image.size() - id.size(), id.size(), id);
    return image;
  }
  StatusOr<runtimes::SessionImageChunk> ExportSession(const std::string& id, uint64_t offset) override {
    std::lock_guard<std::mutex> lock(mu);
    AIRLOCK_RETURN_IF_ERROR(PausableLocked(id));
    paused.insert(id);
    moving.insert(id);
    const std::string image = ImageOf(id);
    if (offset > image.size()) return InvalidArgument("past the end");
    runtimes::SessionImageChunk c;
    if (offset == 0) c.spec_json = specs[id];
    c.data = image.substr(offset, runtimes::SessionImageChunk::kMaxBytes);
    c.size = image.size();
    return c;
  }
  Status ImportSession(const runtimes::SessionSpec& spec, uint64_t offset, const std::string& data,
                       bool last) override {
    std::lock_guard<std::mutex> lock(mu);
    if (spec.id.rfind("s_refuse", 0) == 0) return FailedPrecondition("E_SESSION_NOT_PAUSABLE: not here");
    if (offset == 0) imports[spec.id].clear();
    std::string& got = imports[spec.id];
    if (offset != got.size()) return InvalidArgument("out of order");
    got += data;
    if (last) {
      if (got != ImageOf(spec.id)) return InvalidArgument("a damaged image");
      sessions.insert(spec.id);
      paused.insert(spec.id);
      specs[spec.id] = runtimes::ToJson(spec).dump();
      imported.insert(spec.id);
    }
    return OkStatus();
  }

  std::atomic<int> started{0}, cancelled{0};
  std::mutex mu;
  std::set<std::string> sessions, code_mode_sessions, paused, moving, imported;
  std::map<std::string, std::string> specs, imports;
};

// Two CAs, with a server and a client certificate from each.
class Pki {
 public:
  Pki() {
    dir_ = std::filesystem::temp_directory_path() / ("airlock-pki-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    const std::string d = dir_.string();
    std::string script = "set -e\ncd " + d + "\nexec >/dev/null 2>&1\n";
    for (const char* ca : {"ca1", "ca2"}) {
      const std::string c = ca;
      script += "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=" + c +
                " -keyout " + c + ".key -out " + c + ".pem\n";
      for (const char* who : {"server", "client"}) {
        const std::string w = c + "-" + who;
        script += "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=" + std::string(who) +
                  " -keyout " + w + ".key -out " + w + ".csr\n";
        script += "printf 'subjectAltName=DNS:airlock-runner-host,IP:127.0.0.1\\nextendedKeyUsage=serverAuth,clientAuth\\n' > " +
                  w + ".ext\n";
        script += "openssl x509 -req -in " + w + ".csr -CA " + c + ".pem -CAkey " + c + ".key -CAcreateserial -days 2 -out " +
                  w + ".pem -extfile " + w + ".ext\n";
      }
    }
    std::ofstream(d + "/make.sh") << script;
    ok_ = std::system(("bash " + d + "/make.sh").c_str()) == 0;
  }
  ~Pki() { std::filesystem::remove_all(dir_); }
  bool ok() const { return ok_; }
  // ca: "ca1"/"ca2" to trust; who: e.g. "ca1-server".
  TlsFiles Files(const std::string& ca, const std::string& who) const {
    const std::string d = dir_.string() + "/";
    StatusOr<TlsFiles> t = ReadTlsFiles(d + ca + ".pem", d + who + ".pem", d + who + ".key");
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? *t : TlsFiles{};
  }

 private:
  std::filesystem::path dir_;
  bool ok_ = false;
};

const Pki& SharedPki() {
  static const Pki pki;  // made once per test process, removed at its exit
  return pki;
}

struct Host {
  EchoExecutor executor;
  std::unique_ptr<RunnerHostServer> server;
  std::string address;

  explicit Host(const TlsFiles& tls) {
    StatusOr<std::unique_ptr<RunnerHostServer>> s =
        RunnerHostServer::Start(executor, {.listen = "127.0.0.1:0", .tls = tls, .runner = {}, .max_streams = 8});
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (s.ok()) {
      server = std::move(s).value();
      address = "127.0.0.1:" + std::to_string(server->port());
    }
  }
};

std::unique_ptr<runner::RunnerClient> ClientFor(const std::string& address, const TlsFiles& tls) {
  runner::RunnerClientOptions ro;
  ro.max_concurrent = 8;
  ro.start_timeout = 3s;
  ro.restart_backoff_min = 100ms;
  ro.restart_backoff_max = 300ms;
  LinkOptions lo{.address = address,
                 .credentials = ClientCredentials(tls),
                 .server_name = "airlock-runner-host",
                 .connect_timeout = 2000ms};
  ro.spawn = [lo] { return ConnectRunnerHost(lo); };
  return std::make_unique<runner::RunnerClient>(ro);
}

RunRequest Req(const std::string& code) {
  RunRequest r;
  r.language = "python";
  r.code = code;
  return r;
}

class RemoteRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(SharedPki().ok()) << "openssl could not make the test certificates"; }
};

TEST(FrameCodecTest, EveryGatewayFrameRoundTrips) {
  const std::vector<json> frames = {
      {{"type", "run"}, {"id", 1}, {"request", {{"language", "python"}, {"code", "print(1)"}}}},
      {{"type", "cancel"}, {"id", 2}},
      {{"type", "languages"}, {"id", 3}},
      {{"type", "ping"}, {"id", 4}},
      {{"type", "health"}, {"id", 5}},
      {{"type", "bridge_reply"}, {"id", 6}, {"frame", "{\"ok\":true}"}},
      {{"type", "session_open"}, {"id", 7}, {"session", {{"id", "s_1"}, {"language", "python"}}}},
      {{"type", "session_close"}, {"id", 8}, {"session_id", "s_1"}},
      {{"type", "session_pause"}, {"id", 9}, {"session_id", "s_1"}},
      {{"type", "session_resume"}, {"id", 10}, {"session_id", "s_1"}},
      {{"type", "session_fork"},
       {"id", 11},
       {"session_id", "s_1"},
       {"session", {{"id", "s_2"}, {"language", "python"}, {"isolation", "wasm"}}}},
      {{"type", "session_export"}, {"id", 12}, {"session_id", "s_1"}, {"offset", 4194304}},
      {{"type", "session_import"},
       {"id", 13},
       {"session", {{"id", "s_1"}, {"language", "python"}}},
       {"offset", 0},
       {"data", "AAEC/w=="},  // bytes 00 01 02 ff: raw in the message
       {"last", true}},
      {{"type", "drained"}, {"id", 0}},
  };
  for (const json& f : frames) {
    StatusOr<v1::GatewayMessage> m = GatewayMessageFromFrame(f);
    ASSERT_TRUE(m.ok()) << f.dump() << ": " << m.status().ToString();
    StatusOr<json> back = FrameFromGatewayMessage(*m);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, f);
  }
}

TEST(FrameCodecTest, EveryRunnerFrameRoundTrips) {
  const std::vector<json> frames = {
      {{"type", "hello"}, {"pid", 42}, {"version", "0.1.0"}},
      {{"type", "progress"}, {"id", 1}, {"phase", "running"}},
      {{"type", "result"}, {"id", 1}, {"result", {{"status", "ok"}, {"stdout", "hi"}}}},
      {{"type", "languages"}, {"id", 2}, {"languages", json::array({{{"name", "python"}}})}},
      {{"type", "pong"}, {"id", 3}},
      {{"type", "health"}, {"id", 4}, {"health", {{"sessions", 0}}}},
      {{"type", "bridge"}, {"id", 5}, {"frame", "{\"call\":1}"}},
      {{"type", "bridge_error"}, {"id", 5}, {"message", "bad frame"}},
      {{"type", "session"}, {"id", 6}, {"ok", true}},
      {{"type", "session"}, {"id", 7}, {"ok", false}, {"code", "NOT_FOUND"}, {"message", "no such session"}},
      {{"type", "session"},
       {"id", 8},
       {"ok", true},
       {"chunk", {{"session", {{"id", "s_1"}, {"language", "python"}}}, {"data", "AAEC/w=="}, {"size", 9}}}},
      {{"type", "session"}, {"id", 9}, {"ok", true}, {"chunk", {{"data", ""}, {"size", 9}}}},
      {{"type", "draining"}, {"id", 0}, {"sessions", json::array({"s_1", "s_2"})}},
  };
  for (const json& f : frames) {
    StatusOr<v1::RunnerMessage> m = RunnerMessageFromFrame(f);
    ASSERT_TRUE(m.ok()) << f.dump() << ": " << m.status().ToString();
    StatusOr<json> back = FrameFromRunnerMessage(*m);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, f);
  }
}

TEST(FrameCodecTest, RefusesWhatItDoesNotKnow) {
  EXPECT_FALSE(GatewayMessageFromFrame({{"type", "exec"}, {"id", 1}}).ok());
  EXPECT_FALSE(GatewayMessageFromFrame({{"type", "session_import"},
                                        {"id", 1},
                                        {"session", {{"id", "s_1"}}},
                                        {"offset", 0},
                                        {"data", "not base64!"},
                                        {"last", true}})
                   .ok());
  EXPECT_FALSE(GatewayMessageFromFrame({{"type", "session_export"}, {"id", 1}, {"session_id", "s_1"}, {"offset", -1}}).ok());
  EXPECT_FALSE(GatewayMessageFromFrame({{"type", "run"}, {"id", 1}, {"request", "not an object"}}).ok());
  EXPECT_FALSE(GatewayMessageFromFrame({{"type", "cancel"}}).ok());  // no id
  EXPECT_FALSE(RunnerMessageFromFrame({{"type", "result"}, {"id", 1}}).ok());
  v1::RunnerMessage bad;
  bad.set_id(1);
  bad.mutable_result()->set_result_json("{not json");
  EXPECT_FALSE(FrameFromRunnerMessage(bad).ok());
  EXPECT_FALSE(FrameFromGatewayMessage(v1::GatewayMessage()).ok());
}

TEST_F(RemoteRunnerTest, RunsProgressLanguagesSessionsAndCancelCrossTheLink) {
  Host host(SharedPki().Files("ca1", "ca1-server"));
  auto client = ClientFor(host.address, SharedPki().Files("ca1", "ca1-client"));
  ASSERT_TRUE(client->Start().ok());
  EXPECT_EQ(host.server->streams(), 1u);

  std::vector<runtimes::RunPhase> phases;
  CancelToken none;
  RunResult r = client->Run(Req("hello"), [&](runtimes::RunPhase p) { phases.push_back(p); }, none);
  EXPECT_EQ(r.status, RunStatus::kOk) << r.message;
  EXPECT_EQ(r.stdout_text, "hello");
  EXPECT_NE(std::find(phases.begin(), phases.end(), runtimes::RunPhase::kRunning), phases.end());

  std::vector<runtimes::LanguageInfo> langs = client->Languages();
  ASSERT_EQ(langs.size(), 1u);
  EXPECT_EQ(langs[0].name, "python");

  ASSERT_TRUE(client->OpenSession({.id = "s_abc", .language = "python"}).ok());
  RunRequest cell = Req("x = 1");
  cell.session_id = "s_abc";
  EXPECT_EQ(client->Run(cell, nullptr, none).stdout_text, "s_abc:x = 1");
  EXPECT_TRUE(client->CloseSession("s_abc").ok());
  EXPECT_EQ(client->CloseSession("s_abc").code(), StatusCode::kNotFound);

  CancelToken cancel;
  auto start = std::chrono::steady_clock::now();
  auto pending = std::async(std::launch::async, [&] { return client->Run(Req("sleep 20000"), nullptr, cancel); });
  std::this_thread::sleep_for(200ms);
  cancel.Cancel();
  RunResult c = pending.get();
  EXPECT_EQ(c.error_code, "cancelled");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(host.executor.cancelled.load(), 1);
  client->Stop();
}

// Answers every call with its args, records every frame.
class ArgsBridge : public runtimes::BridgeHandler {
 public:
  void OnFrame(std::string frame, ReplyFn reply) override {
    const json j = json::parse(frame, nullptr, false);
    std::lock_guard<std::mutex> lock(mu);
    frames.push_back(j);
    if (j.value("op", "") == "call") reply(json{{"id", j["id"]}, {"ok", true}, {"result", j["args"]}}.dump());
  }
  std::mutex mu;
  std::vector<json> frames;
};

// A code-mode session on a runner host: the spec says so across the link,
// and each cell's bridge frames are relayed over the gRPC stream (a runner
// host cannot hand its socket to the gateway).
TEST_F(RemoteRunnerTest, ACodeModeSessionsCellBridgeCrossesTheLinkRelayed) {
  Host host(SharedPki().Files("ca1", "ca1-server"));
  auto client = ClientFor(host.address, SharedPki().Files("ca1", "ca1-client"));
  ASSERT_TRUE(client->Start().ok());
  ASSERT_TRUE(client->OpenSession({.id = "s_cm", .language = "python", .code_mode = true}).ok());
  {
    std::lock_guard<std::mutex> lock(host.executor.mu);
    EXPECT_EQ(host.executor.code_mode_sessions.count("s_cm"), 1u);
  }
  for (int cell = 0; cell < 2; ++cell) {
    ArgsBridge bridge;
    RunRequest r = Req("x");
    r.session_id = "s_cm";
    r.code_mode = true;
    CancelToken none;
    RunResult out = client->Run(r, nullptr, none, &bridge);
    ASSERT_EQ(out.status, RunStatus::kOk) << out.message;
    EXPECT_EQ(out.message, "relayed");
    EXPECT_EQ(json::parse(out.stdout_text)["result"], json({{"cell", "s_cm"}})) << out.stdout_text;
    std::lock_guard<std::mutex> lock(bridge.mu);
    ASSERT_EQ(bridge.frames.size(), 2u);  // the call and the final frame, both before Run returned
    EXPECT_EQ(bridge.frames[1], json({{"op", "result"}, {"value", "done"}}));
  }
  EXPECT_TRUE(client->CloseSession("s_cm").ok());
  client->Stop();
}

TEST_F(RemoteRunnerTest, AGatewayThatGoesAwayLeavesNoSessionBehind) {
  Host host(SharedPki().Files("ca1", "ca1-server"));
  auto client = ClientFor(host.address, SharedPki().Files("ca1", "ca1-client"));
  ASSERT_TRUE(client->Start().ok());
  ASSERT_TRUE(client->OpenSession({.id = "s_kept", .language = "python"}).ok());
  ASSERT_TRUE(client->OpenSession({.id = "s_closed", .language = "python"}).ok());
  ASSERT_TRUE(client->CloseSession("s_closed").ok());
  {
    std::lock_guard<std::mutex> lock(host.executor.mu);
    EXPECT_EQ(host.executor.sessions, (std::set<std::string>{"s_kept"}));
  }
  client->Stop();  // the stream ends as it does when a gateway dies
  for (int i = 0; i < 200 && host.server->streams() > 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(host.server->streams(), 0u);
  std::lock_guard<std::mutex> lock(host.executor.mu);
  EXPECT_TRUE(host.executor.sessions.empty()) << "the runner host kept a session of a gateway that left";
}

TEST_F(RemoteRunnerTest, AGatewayWithACertificateFromAnotherCaIsRefused) {
  Host host(SharedPki().Files("ca1", "ca1-server"));
  // Trusts the right CA for the server, but presents a client cert of CA2.
  TlsFiles wrong = SharedPki().Files("ca1", "ca2-client");
  auto client = ClientFor(host.address, wrong);
  EXPECT_FALSE(client->Start().ok());
  CancelToken none;
  RunResult r = client->Run(Req("hello"), nullptr, none);
  EXPECT_EQ(r.error_code, "runner_unavailable") << r.message;
  EXPECT_EQ(host.executor.started.load(), 0);
  EXPECT_EQ(host.server->streams(), 0u);
  client->Stop();
}

TEST_F(RemoteRunnerTest, ARunnerHostWithACertificateFromAnotherCaIsRefused) {
  Host impostor(SharedPki().Files("ca2", "ca2-server"));
  auto client = ClientFor(impostor.address, SharedPki().Files("ca1", "ca1-client"));
  Status st = client->Start();
  EXPECT_FALSE(st.ok());
  CancelToken none;
  EXPECT_EQ(client->Run(Req("hello"), nullptr, none).error_code, "runner_unavailable");
  EXPECT_EQ(impostor.executor.started.load(), 0);
  client->Stop();
}

TEST_F(RemoteRunnerTest, LosingTheHostFailsItsRunsInFlightAtOnce) {
  Host host(SharedPki().Files("ca1", "ca1-server"));
  auto client = ClientFor(host.address, SharedPki().Files("ca1", "ca1-client"));
  ASSERT_TRUE(client->Start().ok());
  CancelToken none;
  auto pending = std::async(std::launch::async, [&] { return client->Run(Req("sleep 30000"), nullptr, none); });
  while (host.executor.started.load() == 0) std::this_thread::sleep_for(10ms);
  const auto start = std::chrono::steady_clock::now();
  host.server->Shutdown(0ms);
  RunResult r = pending.get();
  EXPECT_EQ(r.error_code, "runner_unavailable") << r.message;
  EXPECT_NE(r.message.find("runner host"), std::string::npos) << r.message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  client->Stop();
}

TEST_F(RemoteRunnerTest, SlotsBoundRunsFromEveryCaller) {
  EchoExecutor inner;
  SlotLimitedExecutor bounded(inner, 1);
  CancelToken none;
  auto first = std::async(std::launch::async, [&] { return bounded.Run(Req("sleep 400"), [](auto) {}, none); });
  while (inner.started.load() == 0) std::this_thread::sleep_for(5ms);
  std::vector<runtimes::RunPhase> phases;
  auto second = std::async(std::launch::async, [&] {
    return bounded.Run(Req("b"), [&](runtimes::RunPhase p) { phases.push_back(p); }, none);
  });
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(inner.started.load(), 1);  // still waiting for the slot
  EXPECT_EQ(first.get().status, RunStatus::kOk);
  EXPECT_EQ(second.get().stdout_text, "b");
  ASSERT_FALSE(phases.empty());
  EXPECT_EQ(phases.front(), runtimes::RunPhase::kQueued);
  CancelToken cancel;
  auto held = std::async(std::launch::async, [&] { return bounded.Run(Req("sleep 5000"), [](auto) {}, none); });
  while (inner.started.load() < 3) std::this_thread::sleep_for(5ms);
  auto waiting = std::async(std::launch::async, [&] { return bounded.Run(Req("c"), [](auto) {}, cancel); });
  std::this_thread::sleep_for(50ms);
  cancel.Cancel();
  EXPECT_EQ(waiting.get().error_code, "cancelled");
  none.Cancel();
  held.get();
}

FleetOptions FleetFor(const std::vector<std::string>& hosts) {
  FleetOptions o;
  o.hosts = hosts;
  o.tls = SharedPki().Files("ca1", "ca1-client");
  o.server_name = "airlock-runner-host";
  o.health_interval = 100ms;
  o.health_timeout = 1000ms;
  o.connect_timeout = 2000ms;
  o.max_concurrent_per_host = 4;
  return o;
}

TEST_F(RemoteRunnerTest, FleetSpreadsRunsAndSessionsStickToTheirHost) {
  Host a(SharedPki().Files("ca1", "ca1-server"));
  Host b(SharedPki().Files("ca1", "ca1-server"));
  RunnerFleet fleet(FleetFor({a.address, b.address}));
  ASSERT_TRUE(fleet.Start().ok());
  EXPECT_EQ(fleet.UsableHosts().size(), 2u);
  std::set<std::string> used;
  CancelToken none;
  for (int i = 0; i < 6; ++i) {
    RunResult r = fleet.Run(Req("r" + std::to_string(i)), nullptr, none);
    EXPECT_EQ(r.status, RunStatus::kOk) << r.message;
    used.insert(r.runner_host);
  }
  EXPECT_EQ(used, (std::set<std::string>{a.address, b.address}));

  ASSERT_TRUE(fleet.OpenSession({.id = "s_1", .language = "python"}).ok());
  std::set<std::string> session_hosts;
  for (int i = 0; i < 4; ++i) {
    RunRequest cell = Req("c");
    cell.session_id = "s_1";
    RunResult r = fleet.Run(cell, nullptr, none);
    EXPECT_EQ(r.stdout_text, "s_1:c");
    session_hosts.insert(r.runner_host);
  }
  EXPECT_EQ(session_hosts.size(), 1u);
  EXPECT_TRUE(fleet.CloseSession("s_1").ok());
  RunRequest gone = Req("c");
  gone.session_id = "s_1";
  EXPECT_EQ(fleet.Run(gone, nullptr, none).error_code, "E_SESSION_NOT_FOUND");

  RunRequest cobol = Req("x");
  cobol.language = "cobol";
  RunResult nope = fleet.Run(cobol, nullptr, none);
  EXPECT_EQ(nope.error_code, "runner_unavailable");
  EXPECT_NE(nope.message.find("none of them offers it"), std::string::npos) << nope.message;

  json h = fleet.Health();
  EXPECT_TRUE(h["up"].get<bool>());
  EXPECT_EQ(h["hosts"].size(), 2u);
  fleet.Stop();
}

TEST_F(RemoteRunnerTest, CheckpointsCrossTheLinkAndAForkLivesOnItsSourcesHost) {
  Host a(SharedPki().Files("ca1", "ca1-server"));
  Host b(SharedPki().Files("ca1", "ca1-server"));
  RunnerFleet fleet(FleetFor({a.address, b.address}));
  ASSERT_TRUE(fleet.Start().ok());
  ASSERT_TRUE(fleet.OpenSession({.id = "s_1", .language = "python"}).ok());
  ASSERT_TRUE(fleet.OpenSession({.id = "s_np", .language = "python"}).ok());
  const std::string home = fleet.SessionHost("s_1");
  Host& holder = home == a.address ? a : b;
  Host& other = home == a.address ? b : a;

  ASSERT_TRUE(fleet.PauseSession("s_1").ok());
  {
    std::lock_guard<std::mutex> lock(holder.executor.mu);
    EXPECT_EQ(holder.executor.paused, (std::set<std::string>{"s_1"}));
  }
  ASSERT_TRUE(fleet.ResumeSession("s_1").ok());
  {
    std::lock_guard<std::mutex> lock(holder.executor.mu);
    EXPECT_TRUE(holder.executor.paused.empty());
  }
  EXPECT_EQ(fleet.PauseSession("s_none").code(), StatusCode::kNotFound);
  EXPECT_EQ(fleet.ForkSession("s_none", {.id = "s_x", .language = "python"}).code(), StatusCode::kNotFound);
  // A refusal crosses the link with its code and message.
  Status refused = fleet.PauseSession("s_np");
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.message(), "E_SESSION_NOT_PAUSABLE: not this one");

  ASSERT_TRUE(fleet.ForkSession("s_1", {.id = "s_2", .language = "python"}).ok());
  EXPECT_EQ(fleet.SessionHost("s_2"), home) << "a fork lives where its source does";
  EXPECT_EQ(fleet.ForkSession("s_1", {.id = "s_2", .language = "python"}).code(), StatusCode::kInvalidArgument);
  CancelToken none;
  for (int i = 0; i < 3; ++i) {
    RunRequest cell = Req("c");
    cell.session_id = "s_2";
    RunResult r = fleet.Run(cell, nullptr, none);
    EXPECT_EQ(r.stdout_text, "s_2:c");
    EXPECT_EQ(r.runner_host, home);
  }
  {
    std::lock_guard<std::mutex> lock(other.executor.mu);
    EXPECT_EQ(other.executor.sessions.count("s_2"), 0u);
  }
  // The fork is the stream's, as an opened session is: gone with it.
  fleet.Stop();
  for (int i = 0; i < 200 && holder.server->streams() > 0; ++i) std::this_thread::sleep_for(10ms);
  std::lock_guard<std::mutex> lock(holder.executor.mu);
  EXPECT_TRUE(holder.executor.sessions.empty()) << "the runner host kept a fork of a gateway that left";
}

TEST_F(RemoteRunnerTest, FleetLosesOneHostOnlyItsRunsFailAndNewRunsGoElsewhere) {
  Host a(SharedPki().Files("ca1", "ca1-server"));
  auto b = std::make_unique<Host>(SharedPki().Files("ca1", "ca1-server"));
  const std::string b_address = b->address;
  RunnerFleet fleet(FleetFor({a.address, b_address}));
  ASSERT_TRUE(fleet.Start().ok());
  CancelToken none;
  std::vector<std::future<RunResult>> runs;
  for (int i = 0; i < 4; ++i) {
    runs.push_back(std::async(std::launch::async, [&] { return fleet.Run(Req("sleep 1500"), nullptr, none); }));
  }
  while (a.executor.started.load() + b->executor.started.load() < 4) std::this_thread::sleep_for(10ms);
  ASSERT_GT(b->executor.started.load(), 0);
  ASSERT_GT(a.executor.started.load(), 0);
  b->server->Shutdown(0ms);
  int ok = 0, unavailable = 0;
  for (auto& f : runs) {
    RunResult r = f.get();
    if (r.status == RunStatus::kOk) {
      ++ok;
      EXPECT_EQ(r.runner_host, a.address);
    } else {
      EXPECT_EQ(r.error_code, "runner_unavailable") << r.message;
      EXPECT_EQ(r.runner_host, b_address);
      ++unavailable;
    }
  }
  EXPECT_EQ(ok, a.executor.started.load());
  EXPECT_EQ(unavailable, 4 - ok);
  b.reset();
  for (int i = 0; i < 5; ++i) {
    RunResult r = fleet.Run(Req("after"), nullptr, none);
    EXPECT_EQ(r.status, RunStatus::kOk) << r.message;
    EXPECT_EQ(r.runner_host, a.address);
  }
  fleet.Stop();
}

TEST_F(RemoteRunnerTest, ASessionWhoseHostDiedFailsNamingTheHostNotALocalProcess) {
  auto a = std::make_unique<Host>(SharedPki().Files("ca1", "ca1-server"));
  const std::string address = a->address;
  RunnerFleet fleet(FleetFor({address}));
  ASSERT_TRUE(fleet.Start().ok());
  ASSERT_TRUE(fleet.OpenSession({.id = "s_1", .language = "python"}).ok());
  a.reset();  // the runner host dies
  CancelToken none;
  RunRequest cell = Req("c");
  cell.session_id = "s_1";
  RunResult r = fleet.Run(cell, nullptr, none);
  EXPECT_EQ(r.error_code, "runner_unavailable") << r.message;
  EXPECT_NE(r.message.find("runner host " + address), std::string::npos) << r.message;
  EXPECT_EQ(r.message.find("process"), std::string::npos) << r.message;
  fleet.Stop();
}

TEST_F(RemoteRunnerTest, ASharedSessionOpenedThroughOneFleetServesAnotherAndOutlivesItsStream) {
  Host host(SharedPki().Files("ca1", "ca1-server"));
  auto a = std::make_unique<RunnerFleet>(FleetFor({host.address}));
  RunnerFleet b(FleetFor({host.address}));
  ASSERT_TRUE(a->Start().ok());
  ASSERT_TRUE(b.Start().ok());
  ASSERT_TRUE(a->OpenSession({.id = "s_shared", .language = "python", .shared = true, .max_lifetime_s = 600}).ok());
  ASSERT_TRUE(a->OpenSession({.id = "s_own", .language = "python"}).ok());
  EXPECT_EQ(a->SessionHost("s_shared"), host.address);
  EXPECT_EQ(b.SessionHost("s_shared"), "");

  CancelToken none;
  RunRequest cell = Req("c");
  cell.session_id = "s_shared";
  EXPECT_EQ(b.Run(cell, nullptr, none).error_code, "E_SESSION_NOT_FOUND") << "B does not know it yet";
  ASSERT_TRUE(b.AdoptSession("s_shared", host.address).ok());
  RunResult r = b.Run(cell, nullptr, none);
  EXPECT_EQ(r.stdout_text, "s_shared:c") << r.error_code << " " << r.message;
  EXPECT_EQ(r.runner_host, host.address);

  a.reset();  // gateway A's stream ends (it died, or was rolled)
  for (int i = 0; i < 200 && host.server->streams() > 1; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(host.server->streams(), 1u);
  {
    std::lock_guard<std::mutex> lock(host.executor.mu);
    EXPECT_EQ(host.executor.sessions, (std::set<std::string>{"s_shared"}))
        << "a shared session went with its gateway's stream, or an unshared one stayed";
  }
  EXPECT_EQ(host.server->shared_sessions(), 1u);
  r = b.Run(cell, nullptr, none);
  EXPECT_EQ(r.stdout_text, "s_shared:c") << r.error_code << " " << r.message;
  EXPECT_TRUE(b.CloseSession("s_shared").ok());
  EXPECT_EQ(host.server->shared_sessions(), 0u);
  std::lock_guard<std::mutex> lock(host.executor.mu);
  EXPECT_TRUE(host.executor.sessions.empty());
}

TEST_F(RemoteRunnerTest, AdoptingASessionOnAHostNotInTheFleetFailsNamingTheHost) {
  Host host(SharedPki().Files("ca1", "ca1-server"));
  RunnerFleet fleet(FleetFor({host.address}));
  ASSERT_TRUE(fleet.Start().ok());
  Status st = fleet.AdoptSession("s_elsewhere", "10.9.9.9:7700");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("10.9.9.9:7700"), std::string::npos) << st.message();
  EXPECT_EQ(fleet.SessionHost("s_elsewhere"), "");
  fleet.Stop();
}

TEST_F(RemoteRunnerTest, ARunnerHostClosesASharedSessionPastItsLifetimeWhenNoGatewayDoes) {
  EchoExecutor executor;
  StatusOr<std::unique_ptr<RunnerHostServer>> server =
      RunnerHostServer::Start(executor, {.listen = "127.0.0.1:0",
                                         .tls = SharedPki().Files("ca1", "ca1-server"),
                                         .runner = {},
                                         .max_streams = 8,
                                         .shared_session_grace = 0ms});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto client =
      ClientFor("127.0.0.1:" + std::to_string((*server)->port()), SharedPki().Files("ca1", "ca1-client"));
  ASSERT_TRUE(client->Start().ok());
  ASSERT_TRUE(client->OpenSession({.id = "s_short", .language = "python", .shared = true, .max_lifetime_s = 1}).ok());
  ASSERT_TRUE(client->OpenSession({.id = "s_long", .language = "python", .shared = true, .max_lifetime_s = 600}).ok());
  client->Stop();  // every gateway is gone
  bool closed = false;
  for (int i = 0; i < 400 && !closed; ++i) {
    std::this_thread::sleep_for(10ms);
    std::lock_guard<std::mutex> lock(executor.mu);
    closed = !executor.sessions.count("s_short");
  }
  EXPECT_TRUE(closed) << "a shared session outlived its lifetime on the runner host";
  std::lock_guard<std::mutex> lock(executor.mu);
  EXPECT_EQ(executor.sessions.count("s_long"), 1u);
}

// Draining: a runner host that stops hands its sessions to the fleet's other
// hosts, image and all; calls then go there and the book is told.
TEST_F(RemoteRunnerTest, ADrainingHostsSessionsMoveToAnotherHostAndTheirCallsFollow) {
  Host a(SharedPki().Files("ca1", "ca1-server"));
  Host b(SharedPki().Files("ca1", "ca1-server"));
  RunnerFleet fleet(FleetFor({a.address, b.address}));
  ASSERT_TRUE(fleet.Start().ok());
  std::mutex moves_mu;
  std::vector<std::string> moves;
  fleet.SetSessionMovedHandler([&](const std::string& id, const std::string& from, const std::string& to) {
    std::lock_guard<std::mutex> lock(moves_mu);
    moves.push_back(id + " " + from + " " + to);
  });
  // Open until each kind is on host a (placement spreads them).
  auto open_on_a = [&](const std::string& id, bool shared) {
    for (int i = 0; i < 8; ++i) {
      const std::string sid = id + std::to_string(i);
      EXPECT_TRUE(fleet.OpenSession({.id = sid, .language = "python", .shared = shared, .max_lifetime_s = 600}).ok());
      if (fleet.SessionHost(sid) == a.address) return sid;
    }
    ADD_FAILURE() << "no " << id << " session landed on host a";
    return std::string();
  };
  const std::string own = open_on_a("s_own", false);
  const std::string shared = open_on_a("s_shared", true);
  const std::string native = open_on_a("s_np", false);
  const std::string refused = open_on_a("s_refuse", false);

  const size_t left = a.server->DrainSessions(20s);
  EXPECT_EQ(left, 2u) << "the unpausable and the refused session stay; the others moved";
  for (const std::string& id : {own, shared}) {
    EXPECT_EQ(fleet.SessionHost(id), b.address) << id;
    CancelToken none;
    RunRequest cell = Req("c");
    cell.session_id = id;
    RunResult r = fleet.Run(cell, nullptr, none);
    EXPECT_EQ(r.stdout_text, id + ":c") << r.error_code << " " << r.message;
    EXPECT_EQ(r.runner_host, b.address);
  }
  {
    std::lock_guard<std::mutex> lock(a.executor.mu);
    EXPECT_EQ(a.executor.sessions, (std::set<std::string>{native, refused})) << "a moved session stayed on a";
    EXPECT_EQ(a.executor.moving.count(refused), 0u) << "a refused move did not give the session back";
  }
  {
    std::lock_guard<std::mutex> lock(b.executor.mu);
    EXPECT_EQ(b.executor.imported, (std::set<std::string>{own, shared}));
  }
  {
    std::lock_guard<std::mutex> lock(moves_mu);
    EXPECT_EQ(moves.size(), 2u);
    for (const std::string& m : moves) EXPECT_NE(m.find(a.address + " " + b.address), std::string::npos) << m;
  }
  EXPECT_EQ(fleet.SessionHost(native), a.address) << "a session that cannot move stays where it is";
  // A stale book row (read before the move) does not send calls back.
  EXPECT_TRUE(fleet.AdoptSession(shared, a.address).ok());
  EXPECT_EQ(fleet.SessionHost(shared), b.address);
  // The draining host takes nothing new.
  CancelToken none;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(fleet.Run(Req("r"), nullptr, none).runner_host, b.address);
  ASSERT_TRUE(fleet.OpenSession({.id = "s_new", .language = "python"}).ok());
  EXPECT_EQ(fleet.SessionHost("s_new"), b.address);
  bool draining = false;
  const json health = fleet.Health();
  for (const auto& h : health["hosts"]) {
    if (h["address"] == a.address) draining = h["draining"].get<bool>();
  }
  EXPECT_TRUE(draining);
  fleet.Stop();
}

TEST_F(RemoteRunnerTest, FleetWithNoHostRefusesAndNeverRunsLocally) {
  RunnerFleet fleet(FleetFor({"127.0.0.1:1"}));  // nothing listens there
  EXPECT_FALSE(fleet.Start().ok());
  CancelToken none;
  RunResult r = fleet.Run(Req("print(1)"), nullptr, none);
  EXPECT_EQ(r.error_code, "runner_unavailable");
  EXPECT_FALSE(fleet.Health()["up"].get<bool>());
}

}  // namespace
}  // namespace airlock::remote
