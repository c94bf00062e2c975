// The gateway against real downstream MCP servers: our test server
// (tests/fixtures/mcp-servers/test-server.mjs) and the npm reference servers
// @modelcontextprotocol/server-everything and server-memory, over stdio and
// Streamable HTTP. Needs node and `npm install` in tests/fixtures/mcp-servers
// (scripts/setup.sh does it).
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "gateway/child_process.h"
#include "gateway/gateway.h"
#include "gateway/http_client_transport.h"
#include "gateway/stdio_client_transport.h"
#include "mcp_fixture_servers.h"

namespace airlock::gateway {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

const std::string kFixtures = std::string(AIRLOCK_SOURCE_DIR) + "/tests/fixtures/mcp-servers";

bool FixturesInstalled() {
  return std::filesystem::exists(kFixtures + "/node_modules/@modelcontextprotocol/sdk") &&
         !FindExecutable("node", getenv("PATH") ? getenv("PATH") : "").empty();
}

#define REQUIRE_FIXTURES()                                                                        \
  if (!FixturesInstalled()) GTEST_SKIP() << "run scripts/setup.sh (npm install in " << kFixtures \
                                         << ") and install node"

ConnectorConfig TestServer(const std::string& name, std::vector<std::string> extra_args = {}) {
  ConnectorConfig c;
  c.name = name;
  c.command = "node";
  c.args = {kFixtures + "/test-server.mjs"};
  c.args.insert(c.args.end(), extra_args.begin(), extra_args.end());
  c.stderr_mode = StderrMode::kDiscard;
  c.timeout_ms = 20000;
  return c;
}

ConnectorConfig Everything() {
  ConnectorConfig c;
  c.name = "everything";
  c.command = "node";
  c.args = {kFixtures + "/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"};
  c.stderr_mode = StderrMode::kDiscard;
  c.trusted = true;
  return c;
}

ConnectorConfig Memory(const std::string& file) {
  ConnectorConfig c;
  c.name = "memory";
  c.command = "node";
  c.args = {kFixtures + "/node_modules/@modelcontextprotocol/server-memory/dist/index.js"};
  c.env = {{"MEMORY_FILE_PATH", file}};
  c.stderr_mode = StderrMode::kDiscard;
  return c;
}

std::set<std::string> Names(const std::vector<ToolEntry>& tools) {
  std::set<std::string> names;
  for (const ToolEntry& t : tools) names.insert(t.name);
  return names;
}

const ToolEntry* Find(const std::vector<ToolEntry>& tools, const std::string& name) {
  for (const ToolEntry& t : tools) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

json Stats(Gateway& gw, const std::string& connector) {
  CallOutcome r = gw.CallTool(connector + ".stats", json::object(), nullptr, milliseconds(10000));
  EXPECT_TRUE(r.ok) << r.error_message;
  return r.value;
}

// Polls `pred` until true or `budget` passes.
template <typename Pred>
bool Eventually(Pred pred, milliseconds budget = milliseconds(5000)) {
  const auto until = Clock::now() + budget;
  while (Clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return pred();
}

// One gateway with all three servers over stdio, shared by the suite (each
// server start costs a few hundred ms of node start-up).
class GatewayStdio : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!FixturesInstalled()) return;
    memory_dir_ = new std::string(std::filesystem::temp_directory_path() / ("airlock-gw-" + std::to_string(getpid())));
    std::filesystem::create_directories(*memory_dir_);
    setenv("AIRLOCK_GATEWAY_TEST_AMBIENT", "must-not-leak", 1);
    ConnectorConfig test = TestServer("test", {"--page-size", "4"});
    test.env = {{"SECRET_TOKEN", "xyz"}};
    test.read_only_tools = {"write_note"};
    ConnectorConfig trusted = TestServer("trusted");
    trusted.trusted = true;
    GatewayOptions options;
    options.log = [](const std::string& line) {
      std::lock_guard<std::mutex> lock(*log_mu_);
      log_->push_back(line);
    };
    log_mu_ = new std::mutex;
    log_ = new std::vector<std::string>;
    gw_ = new Gateway({test, trusted, Everything(), Memory(*memory_dir_ + "/memory.jsonl")}, options);
    connect_status_ = new std::map<std::string, Status>(gw_->ConnectAll(milliseconds(30000)));
  }
  static void TearDownTestSuite() {
    delete gw_;
    gw_ = nullptr;
    if (memory_dir_ != nullptr) std::filesystem::remove_all(*memory_dir_);
    delete memory_dir_;
    delete connect_status_;
    delete log_;
    delete log_mu_;
    unsetenv("AIRLOCK_GATEWAY_TEST_AMBIENT");
  }
  void SetUp() override { REQUIRE_FIXTURES(); }

  static Gateway* gw_;
  static std::string* memory_dir_;
  static std::map<std::string, Status>* connect_status_;
  static std::mutex* log_mu_;
  static std::vector<std::string>* log_;
};
Gateway* GatewayStdio::gw_ = nullptr;
std::string* GatewayStdio::memory_dir_ = nullptr;
std::map<std::string, Status>* GatewayStdio::connect_status_ = nullptr;
std::mutex* GatewayStdio::log_mu_ = nullptr;
std::vector<std::string>* GatewayStdio::log_ = nullptr;

TEST_F(GatewayStdio, ConnectsToAllThreeServersAndListsQualifiedNames) {
  for (const auto& [name, st] : *connect_status_) EXPECT_TRUE(st.ok()) << name << ": " << st.ToString();
  std::vector<ToolEntry> tools = gw_->ListTools();
  std::set<std::string> names = Names(tools);
  EXPECT_TRUE(names.count("everything.echo"));
  EXPECT_TRUE(names.count("everything.get-sum"));
  EXPECT_TRUE(names.count("memory.create_entities"));
  EXPECT_TRUE(names.count("memory.read_graph"));
  EXPECT_TRUE(names.count("test.echo"));
  EXPECT_TRUE(std::is_sorted(tools.begin(), tools.end(),
                             [](const ToolEntry& a, const ToolEntry& b) { return a.name < b.name; }));
  for (const ToolEntry& t : tools) {
    EXPECT_LE(t.name.size(), kMaxQualifiedNameBytes);
    EXPECT_EQ(t.name, t.connector + "." + t.tool);
    EXPECT_TRUE(t.input_schema.is_object());
  }
}

TEST_F(GatewayStdio, PagesThroughToolsList) {
  // The test server cuts tools/list into pages of 4; every tool arrives.
  std::set<std::string> names = Names(gw_->ListTools());
  for (const char* tool : {"echo", "slow", "stats", "huge", "deep", "fail", "json_text", "structured", "env", "write_note",
                           "add_tool", "crash", "complex"}) {
    EXPECT_TRUE(names.count(std::string("test.") + tool)) << tool;
  }
  // Same set as the unpaged server.
  std::set<std::string> paged, unpaged;
  for (const std::string& n : names) {
    if (n.rfind("test.", 0) == 0) paged.insert(n.substr(5));
    if (n.rfind("trusted.", 0) == 0) unpaged.insert(n.substr(8));
  }
  EXPECT_EQ(paged, unpaged);
  EXPECT_GT(paged.size(), 8u);  // more than two pages
}

TEST_F(GatewayStdio, TooLongQualifiedNameIsSkippedWithWarning) {
  std::set<std::string> names = Names(gw_->ListTools());
  const std::string long_tool = "this_tool_name_is_deliberately_much_too_long_for_airlock_gateway_limit";
  EXPECT_FALSE(names.count("test." + long_tool));
  std::lock_guard<std::mutex> lock(*log_mu_);
  bool warned = false;
  for (const std::string& l : *log_) warned |= l.find("test." + long_tool) != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_FALSE(gw_->FindTool("test." + long_tool).ok());
}

TEST_F(GatewayStdio, EffectiveClassRules) {
  std::vector<ToolEntry> tools = gw_->ListTools();
  auto ro = [&](const std::string& n) {
    const ToolEntry* t = Find(tools, n);
    EXPECT_NE(t, nullptr) << n;
    return t != nullptr && t->read_only;
  };
  EXPECT_TRUE(ro("trusted.echo"));         // trusted + readOnlyHint true
  EXPECT_FALSE(ro("test.echo"));           // untrusted + readOnlyHint true
  EXPECT_TRUE(ro("test.write_note"));      // pinned by the admin
  EXPECT_FALSE(ro("trusted.write_note"));  // readOnlyHint false
  EXPECT_FALSE(ro("trusted.crash"));       // no annotations
  EXPECT_FALSE(ro("trusted.add_tool"));
  EXPECT_FALSE(ro("memory.read_graph"));   // untrusted connector
  EXPECT_TRUE(ro("everything.echo"));
  EXPECT_FALSE(ro("everything.toggle-simulated-logging"));
  const ToolEntry* echo = Find(tools, "trusted.echo");
  ASSERT_NE(echo, nullptr);
  EXPECT_EQ(echo->annotations.value("readOnlyHint", false), true);  // upstream annotations kept verbatim
}

TEST_F(GatewayStdio, SearchRanksByNameThenParamsThenDescription) {
  SearchResult r = gw_->Search("echo", 2);
  ASSERT_FALSE(r.tools.empty());
  EXPECT_EQ(r.tools[0].name, "everything.echo");
  EXPECT_TRUE(r.tools[0].read_only);
  EXPECT_FALSE(r.tools[0].summary.empty());
  EXPECT_EQ(r.tools[0].summary.find('\n'), std::string::npos);
  EXPECT_TRUE(r.truncated);  // everything.echo, test.echo, trusted.echo, and more
  json j = r.ToJson();
  EXPECT_EQ(j["tools"].size(), 2u);
  EXPECT_EQ(j["tools"][0]["name"], "everything.echo");
  EXPECT_TRUE(j["truncated"].get<bool>());
  // Parameter names count: "entities" is a parameter of memory.create_entities
  // and memory.delete_entities (names) -> both are found.
  SearchResult ents = gw_->Search("observations", 20);
  std::set<std::string> found;
  for (const SearchHit& h : ents.tools) found.insert(h.name);
  EXPECT_TRUE(found.count("memory.add_observations"));
  EXPECT_TRUE(found.count("memory.delete_observations"));
  EXPECT_EQ(ents.tools[0].name.find("memory."), 0u);
  // The filter hides tools entirely.
  SearchResult only_test = gw_->Search("echo", 10, [](const ToolEntry& t) { return t.connector == "test"; });
  ASSERT_EQ(only_test.tools.size(), 1u);
  EXPECT_EQ(only_test.tools[0].name, "test.echo");
  EXPECT_FALSE(only_test.truncated);
  EXPECT_TRUE(gw_->Search("zzqqxx_nomatch", 10).tools.empty());
}

TEST_F(GatewayStdio, DescribeGivesSchemaAndSignature) {
  auto d = gw_->Describe("test.complex");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->name, "test.complex");
  EXPECT_FALSE(d->read_only);
  EXPECT_TRUE(d->input_schema["properties"].contains("fields"));
  const std::string& sig = d->signature;
  EXPECT_NE(sig.find("function \"test.complex\"(args: {"), std::string::npos) << sig;
  EXPECT_NE(sig.find("/** Record id */"), std::string::npos) << sig;
  EXPECT_NE(sig.find("id: number;"), std::string::npos) << sig;
  EXPECT_NE(sig.find("fields?: string[];"), std::string::npos) << sig;
  EXPECT_NE(sig.find("mode: \"fast\" | \"full\";"), std::string::npos) << sig;
  EXPECT_NE(sig.find("filter?: { name: string; min_age?: number };"), std::string::npos) << sig;
  EXPECT_NE(sig.find("key: string | number;"), std::string::npos) << sig;
  json j = d->ToJson();
  for (const char* key : {"name", "description", "input_schema", "signature", "read_only"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  auto sum = gw_->Describe("everything.get-sum");
  ASSERT_TRUE(sum.ok());
  EXPECT_NE(sum->signature.find("a: number;"), std::string::npos) << sum->signature;
  EXPECT_NE(sum->signature.find("b: number;"), std::string::npos) << sum->signature;
  EXPECT_EQ(gw_->Describe("test.nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(gw_->Describe("TEST.echo").status().code(), StatusCode::kNotFound);  // exact bytes
  EXPECT_EQ(gw_->Describe("test.echo", [](const ToolEntry&) { return false; }).status().code(),
            StatusCode::kNotFound);
}

TEST_F(GatewayStdio, CallsEachBehaviour) {
  CallOutcome echo = gw_->CallTool("test.echo", {{"text", "hello"}}, nullptr);
  ASSERT_TRUE(echo.ok) << echo.error_message;
  EXPECT_EQ(echo.value, "hello");

  CallOutcome structured = gw_->CallTool("test.structured", json::object(), nullptr);
  ASSERT_TRUE(structured.ok);
  EXPECT_EQ(structured.value, json({{"answer", 42}}));

  CallOutcome json_text = gw_->CallTool("test.json_text", nullptr, nullptr);
  ASSERT_TRUE(json_text.ok);
  EXPECT_EQ(json_text.value, json::parse(R"({"a":1,"b":[true]})"));

  CallOutcome fail = gw_->CallTool("test.fail", {{"message", "boom happened"}}, nullptr);
  EXPECT_FALSE(fail.ok);
  EXPECT_EQ(fail.error_code, "E_TOOL_ERROR");
  EXPECT_EQ(fail.error_message, "boom happened");
  EXPECT_TRUE(fail.status.ok());

  CallOutcome huge = gw_->CallTool("test.huge", {{"bytes", 3000000}}, nullptr);
  ASSERT_TRUE(huge.ok) << huge.error_message;
  ASSERT_TRUE(huge.value.is_string());
  EXPECT_EQ(huge.value.get<std::string>().size(), 3000000u);

  CallOutcome note = gw_->CallTool("test.write_note", {{"key", "k1"}, {"text", "remember"}}, nullptr);
  ASSERT_TRUE(note.ok) << note.error_message;
  EXPECT_GE(note.value["count"].get<int>(), 1);

  CallOutcome sum = gw_->CallTool("everything.get-sum", {{"a", 2}, {"b", 40}}, nullptr);
  ASSERT_TRUE(sum.ok) << sum.error_message;
  EXPECT_NE(sum.value.dump().find("42"), std::string::npos) << sum.value.dump();

  CallOutcome everything_echo = gw_->CallTool("everything.echo", {{"message", "hi there"}}, nullptr);
  ASSERT_TRUE(everything_echo.ok);
  EXPECT_NE(everything_echo.value.dump().find("hi there"), std::string::npos);

  CallOutcome created = gw_->CallTool(
      "memory.create_entities",
      json::parse(R"({"entities":[{"name":"Ada","entityType":"person","observations":["wrote notes"]}]})"),
      nullptr);
  ASSERT_TRUE(created.ok) << created.error_message;
  CallOutcome graph = gw_->CallTool("memory.read_graph", json::object(), nullptr);
  ASSERT_TRUE(graph.ok) << graph.error_message;
  EXPECT_NE(graph.value.dump().find("Ada"), std::string::npos) << graph.value.dump();
}

// A downstream result nested deeper than code that serializes values can
// take (jsonrpc_client.h kMaxMessageDepth) stays the text it came as; a
// shallow one is parsed as before. 200 000 levels would overflow a thread's
// stack in json::dump if it were parsed.
TEST_F(GatewayStdio, DeeplyNestedResultStaysText) {
  CallOutcome shallow = gw_->CallTool("test.deep", {{"depth", 3}}, nullptr);
  ASSERT_TRUE(shallow.ok) << shallow.error_message;
  EXPECT_EQ(shallow.value, json::parse("[[[]]]"));
  CallOutcome deep = gw_->CallTool("test.deep", {{"depth", 200000}}, nullptr);
  ASSERT_TRUE(deep.ok) << deep.error_message;
  ASSERT_TRUE(deep.value.is_string());
  EXPECT_EQ(deep.value.get<std::string>().size(), 400000u);
  EXPECT_EQ(deep.value.dump().size(), 400002u);
}

TEST_F(GatewayStdio, BadCallsGetStableCodes) {
  CallOutcome unknown = gw_->CallTool("test.no_such_tool", json::object(), nullptr);
  EXPECT_EQ(unknown.error_code, "E_TOOL_NOT_DECLARED");
  CallOutcome no_connector = gw_->CallTool("nobody.echo", json::object(), nullptr);
  EXPECT_EQ(no_connector.error_code, "E_TOOL_NOT_DECLARED");
  CallOutcome not_object = gw_->CallTool("test.echo", json::array({1}), nullptr);
  EXPECT_EQ(not_object.error_code, "E_INVALID_ARGS");
  CallOutcome filtered = gw_->CallTool("test.echo", {{"text", "x"}}, nullptr, milliseconds(0),
                                       [](const ToolEntry& t) { return t.connector != "test"; });
  EXPECT_EQ(filtered.error_code, "E_TOOL_NOT_DECLARED");
  // The server rejects arguments that do not match its schema: a tool error.
  CallOutcome bad_args = gw_->CallTool("test.echo", {{"text", 5}}, nullptr);
  EXPECT_FALSE(bad_args.ok);
  EXPECT_EQ(bad_args.error_code, "E_TOOL_ERROR");
}

TEST_F(GatewayStdio, ConcurrentCallsAreCorrelated) {
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int i = 0; i < 12; ++i) {
    threads.emplace_back([&, i] {
      const std::string text = "msg-" + std::to_string(i);
      CallOutcome r = gw_->CallTool(i % 2 ? "test.echo" : "trusted.echo", {{"text", text}}, nullptr);
      if (r.ok && r.value == text) {
        good.fetch_add(1);
      } else {
        ADD_FAILURE() << i << ": " << r.error_code << " " << r.error_message << " " << r.value.dump();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 12);
  // No test of this suite kills these servers: each was started exactly once
  // (a restart would hide a server dying under us).
  EXPECT_EQ(gw_->connector("test")->connect_count(), 1);
  EXPECT_EQ(gw_->connector("trusted")->connect_count(), 1);
  EXPECT_EQ(gw_->connector("everything")->connect_count(), 1);
}

TEST_F(GatewayStdio, TimeoutCancelsDownstream) {
  const int before = Stats(*gw_, "test")["cancelled_count"].get<int>();
  const auto start = Clock::now();
  CallOutcome r = gw_->CallTool("test.slow", {{"ms", 10000}}, nullptr, milliseconds(400));
  const auto took = Clock::now() - start;
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.status.code(), StatusCode::kDeadlineExceeded) << r.status.ToString();
  EXPECT_EQ(r.error_code, "E_TOOL_ERROR");
  EXPECT_LT(took, milliseconds(2000));
  // The server saw notifications/cancelled and aborted the handler.
  EXPECT_TRUE(Eventually([&] { return Stats(*gw_, "test")["cancelled_count"].get<int>() == before + 1; }));
}

TEST_F(GatewayStdio, CancelTokenCancelsDownstream) {
  const int before = Stats(*gw_, "test")["cancelled_count"].get<int>();
  CancelToken cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(300));
    cancel.Cancel();
  });
  const auto start = Clock::now();
  CallOutcome r = gw_->CallTool("test.slow", {{"ms", 10000}}, &cancel, milliseconds(15000));
  const auto took = Clock::now() - start;
  canceller.join();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error_code, "E_CANCELLED");
  EXPECT_EQ(r.status.code(), StatusCode::kCancelled);
  EXPECT_LT(took, milliseconds(2000));
  EXPECT_TRUE(Eventually([&] { return Stats(*gw_, "test")["cancelled_count"].get<int>() == before + 1; }));
  // The connection is still good.
  EXPECT_TRUE(gw_->CallTool("test.echo", {{"text", "after"}}, nullptr).ok);
}

TEST_F(GatewayStdio, ListChangedPicksUpNewTool) {
  const uint64_t generation = gw_->connector("trusted")->tools_generation();
  EXPECT_FALSE(Names(gw_->ListTools()).count("trusted.late_tool"));
  CallOutcome added = gw_->CallTool("trusted.add_tool", {{"name", "late_tool"}}, nullptr);
  ASSERT_TRUE(added.ok) << added.error_message;
  EXPECT_TRUE(Eventually([&] { return Names(gw_->ListTools()).count("trusted.late_tool") == 1; }));
  EXPECT_GT(gw_->connector("trusted")->tools_generation(), generation);
  CallOutcome late = gw_->CallTool("trusted.late_tool", json::object(), nullptr);
  ASSERT_TRUE(late.ok) << late.error_message;
  EXPECT_EQ(late.value, "I am late_tool");
}

TEST_F(GatewayStdio, ConnectorEnvReachesServerButAirlockEnvDoesNot) {
  CallOutcome secret = gw_->CallTool("test.env", {{"name", "SECRET_TOKEN"}}, nullptr);
  ASSERT_TRUE(secret.ok) << secret.error_message;
  EXPECT_EQ(secret.value, json({{"set", true}, {"value", "xyz"}}));
  // Set in this (airlock's) process before the server started: not inherited.
  ASSERT_STREQ(getenv("AIRLOCK_GATEWAY_TEST_AMBIENT"), "must-not-leak");
  CallOutcome ambient = gw_->CallTool("test.env", {{"name", "AIRLOCK_GATEWAY_TEST_AMBIENT"}}, nullptr);
  ASSERT_TRUE(ambient.ok);
  EXPECT_EQ(ambient.value["set"], false);
  // Only PATH and HOME come from airlock.
  CallOutcome path = gw_->CallTool("test.env", {{"name", "PATH"}}, nullptr);
  EXPECT_EQ(path.value["set"], true);
  // Another connector's secret does not reach this one.
  CallOutcome other = gw_->CallTool("trusted.env", {{"name", "SECRET_TOKEN"}}, nullptr);
  ASSERT_TRUE(other.ok);
  EXPECT_EQ(other.value["set"], false);
}

TEST(GatewayStdioEnv, EnvironmentIsOnlyConfiguredPlusPathAndHome) {
  ConnectorConfig c;
  c.env = {{"A", "1"}, {"HOME", "/custom"}};
  std::vector<std::string> env = StdioClientTransport::BuildEnvironment(c);
  std::set<std::string> keys;
  for (const std::string& kv : env) keys.insert(kv.substr(0, kv.find('=')));
  EXPECT_EQ(keys, (std::set<std::string>{"A", "HOME", "PATH"}));
  EXPECT_NE(std::find(env.begin(), env.end(), "HOME=/custom"), env.end());
}

TEST(GatewayConnector, CrashGivesUnavailableThenRestarts) {
  REQUIRE_FIXTURES();
  std::vector<std::string> log;
  std::mutex log_mu;
  ConnectorOptions options;
  options.log = [&](const std::string& l) {
    std::lock_guard<std::mutex> lock(log_mu);
    log.push_back(l);
  };
  ConnectorConfig config = TestServer("crashy");
  config.env = {{"SECRET_TOKEN", "never-in-logs-42"}};
  Connector c(config, options);
  ASSERT_TRUE(c.Connect(nullptr, milliseconds(20000)).ok());
  EXPECT_EQ(c.connect_count(), 1);

  // A slow call in flight while another call crashes the server.
  StatusOr<ToolCallResult> in_flight = Internal("not run");
  std::thread slow([&] { in_flight = c.CallTool("slow", {{"ms", 8000}}, nullptr, milliseconds(15000)); });
  std::this_thread::sleep_for(milliseconds(200));
  auto crashed = c.CallTool("crash", json::object(), nullptr, milliseconds(10000));
  slow.join();
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.status().code(), StatusCode::kUnavailable) << crashed.status().ToString();
  ASSERT_FALSE(in_flight.ok());
  EXPECT_EQ(in_flight.status().code(), StatusCode::kUnavailable) << in_flight.status().ToString();
  EXPECT_FALSE(c.connected());

  // A call that cannot wait out the backoff fails fast...
  auto impatient = c.CallTool("echo", {{"text", "x"}}, nullptr, milliseconds(50));
  EXPECT_EQ(impatient.status().code(), StatusCode::kUnavailable) << impatient.status().ToString();
  // ...one that can, restarts the server and works.
  auto echo = c.CallTool("echo", {{"text", "back"}}, nullptr, milliseconds(20000));
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_EQ(echo->raw["content"][0]["text"], "back");
  EXPECT_EQ(c.connect_count(), 2);
  EXPECT_TRUE(c.connected());

  std::lock_guard<std::mutex> lock(log_mu);
  ASSERT_FALSE(log.empty());
  for (const std::string& l : log) EXPECT_EQ(l.find("never-in-logs-42"), std::string::npos) << l;
}

TEST(GatewayConnector, BackoffGrowsWhileServerCannotStart) {
  ConnectorConfig config;
  config.name = "broken";
  config.command = "/nonexistent/mcp-server";
  ConnectorOptions options;
  options.log = [](const std::string&) {};
  options.initial_backoff = milliseconds(100);
  Connector c(config, options);
  auto first = c.Connect(nullptr, milliseconds(1000));
  EXPECT_EQ(first.code(), StatusCode::kUnavailable);
  // Inside the backoff window: fails at once without trying.
  const auto start = Clock::now();
  auto second = c.CallTool("x", json::object(), nullptr, milliseconds(50));
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find("next restart in"), std::string::npos) << second.status().message();
  EXPECT_LT(Clock::now() - start, milliseconds(50));
  EXPECT_EQ(c.connect_count(), 0);
}

TEST(GatewayConnector, ChildIsReapedOnDestruction) {
  REQUIRE_FIXTURES();
  pid_t pid;
  {
    auto transport = std::make_unique<StdioClientTransport>(TestServer("reap"));
    StdioClientTransport* raw = transport.get();
    McpClient client(std::move(transport), "reap");
    ASSERT_TRUE(client.Start().ok());
    pid = raw->pid();
    ASSERT_GT(pid, 0);
    EXPECT_EQ(kill(pid, 0), 0);
  }
  EXPECT_NE(kill(pid, 0), 0);  // gone and reaped (no zombie left to signal)
  EXPECT_EQ(errno, ESRCH);
}

// --- Streamable HTTP -------------------------------------------------------

GatewayOptions QuietOptions() {
  GatewayOptions options;
  options.log = [](const std::string&) {};
  return options;
}

// The test server over --http on a free localhost port (chosen by the kernel).
class HttpServer : public tests::FixtureHttpServer {
 public:
  explicit HttpServer(std::vector<std::string> extra = {})
      : tests::FixtureHttpServer("test-server.mjs", std::move(extra), {"TEST_SERVER_REQUIRE_HEADER=X-Api-Key=k-123"}) {}
};

ConnectorConfig HttpConnector(const HttpServer& server, const std::string& name = "web") {
  ConnectorConfig c;
  c.name = name;
  c.transport = TransportKind::kHttp;
  c.url = server.url();
  c.headers = {{"X-Api-Key", "k-123"}};
  c.trusted = true;
  c.timeout_ms = 20000;
  return c;
}

TEST(GatewayHttp, ListsCallsAndFollowsListChangedOverSse) {
  REQUIRE_FIXTURES();
  HttpServer server({"--page-size", "5"});
  ASSERT_GT(server.port(), 0);
  Gateway gw({HttpConnector(server)}, QuietOptions());
  auto connected = gw.ConnectAll(milliseconds(20000));
  ASSERT_TRUE(connected["web"].ok()) << connected["web"].ToString();
  std::vector<ToolEntry> tools = gw.ListTools();
  EXPECT_TRUE(Find(tools, "web.echo") != nullptr);
  EXPECT_TRUE(Find(tools, "web.complex") != nullptr);
  EXPECT_TRUE(Find(tools, "web.echo")->read_only);

  CallOutcome echo = gw.CallTool("web.echo", {{"text", "over http"}}, nullptr);
  ASSERT_TRUE(echo.ok) << echo.error_message;
  EXPECT_EQ(echo.value, "over http");
  CallOutcome structured = gw.CallTool("web.structured", json::object(), nullptr);
  EXPECT_EQ(structured.value, json({{"answer", 42}}));
  CallOutcome fail = gw.CallTool("web.fail", {{"message", "nope"}}, nullptr);
  EXPECT_EQ(fail.error_code, "E_TOOL_ERROR");
  EXPECT_EQ(fail.error_message, "nope");
  CallOutcome huge = gw.CallTool("web.huge", {{"bytes", 1500000}}, nullptr);
  ASSERT_TRUE(huge.ok) << huge.error_message;
  EXPECT_EQ(huge.value.get<std::string>().size(), 1500000u);

  // list_changed arrives on the standalone GET stream.
  ASSERT_TRUE(gw.CallTool("web.add_tool", {{"name", "http_late"}}, nullptr).ok);
  EXPECT_TRUE(Eventually([&] { return Find(gw.ListTools(), "web.http_late") != nullptr; }));
}

TEST(GatewayHttp, TimeoutAndCancelReachTheServer) {
  REQUIRE_FIXTURES();
  HttpServer server;
  ASSERT_GT(server.port(), 0);
  Gateway gw({HttpConnector(server)}, QuietOptions());
  ASSERT_TRUE(gw.ConnectAll(milliseconds(20000))["web"].ok());
  const auto start = Clock::now();
  CallOutcome r = gw.CallTool("web.slow", {{"ms", 10000}}, nullptr, milliseconds(400));
  EXPECT_EQ(r.status.code(), StatusCode::kDeadlineExceeded) << r.status.ToString();
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
  EXPECT_TRUE(Eventually([&] { return Stats(gw, "web")["cancelled_count"].get<int>() == 1; }));

  CancelToken cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(300));
    cancel.Cancel();
  });
  CallOutcome c = gw.CallTool("web.slow", {{"ms", 10000}}, &cancel);
  canceller.join();
  EXPECT_EQ(c.error_code, "E_CANCELLED");
  EXPECT_TRUE(Eventually([&] { return Stats(gw, "web")["cancelled_count"].get<int>() == 2; }));
  EXPECT_TRUE(gw.CallTool("web.echo", {{"text", "still fine"}}, nullptr).ok);
}

TEST(GatewayHttp, JsonResponsesSessionsAndHeaders) {
  REQUIRE_FIXTURES();
  HttpServer server({"--json-response"});
  ASSERT_GT(server.port(), 0);
  {
    Connector c(HttpConnector(server));
    ASSERT_TRUE(c.Connect(nullptr, milliseconds(20000)).ok());
    auto r = c.CallTool("echo", {{"text", "json mode"}}, nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->raw["content"][0]["text"], "json mode");
  }
  // Without the configured header the server refuses (401): Unavailable, and
  // the error does not echo header values.
  ConnectorConfig no_key = HttpConnector(server);
  no_key.headers = {{"X-Api-Key", "wrong-secret-77"}};
  ConnectorOptions quiet;
  quiet.log = [](const std::string&) {};
  Connector refused(no_key, quiet);
  Status st = refused.Connect(nullptr, milliseconds(5000));
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("401"), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find("wrong-secret-77"), std::string::npos);
}

TEST(GatewayHttp, SessionIdIsKeptAndDeletedOnClose) {
  REQUIRE_FIXTURES();
  HttpServer server;
  ASSERT_GT(server.port(), 0);
  ConnectorConfig config = HttpConnector(server);
  auto transport = std::make_unique<HttpClientTransport>(config);
  HttpClientTransport* raw = transport.get();
  McpClient client(std::move(transport), "web");
  ASSERT_TRUE(client.Start().ok());
  auto init = client.Call("initialize",
                          {{"protocolVersion", "2025-06-18"},
                           {"capabilities", json::object()},
                           {"clientInfo", {{"name", "t"}, {"version", "1"}}}},
                          nullptr, milliseconds(10000));
  ASSERT_TRUE(init.ok()) << init.status().ToString();
  const std::string session = raw->session_id();
  EXPECT_FALSE(session.empty());
  client.OnInitialized("2025-06-18");
  ASSERT_TRUE(client.Notify("notifications/initialized", nullptr).ok());
  auto list = client.Call("tools/list", json::object(), nullptr, milliseconds(10000));
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  client.Close();
  // The session is gone on the server: a request with its id gets 404.
  httplib::Client probe("127.0.0.1", server.port());
  auto res = probe.Post("/mcp", {{"Mcp-Session-Id", session}, {"X-Api-Key", "k-123"},
                                  {"Accept", "application/json, text/event-stream"}},
                        R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
}

}  // namespace
}  // namespace airlock::gateway
