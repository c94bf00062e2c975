// The MCP Tasks extension (io.modelcontextprotocol/tasks) for run_code and
// execute: the task table's rules with a fake clock (tasks/task_store.h:
// owner, TTL, lease, cap), and the modern Streamable HTTP front end to end
// with a fake executor (discover advertises it, a long run_code becomes a
// task polled to its result, tasks/cancel stops the run, another caller's
// task is unknown, -32021 without the capability, Mcp-Name, the cap, the
// longer task timeout).
#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <thread>

#include "audit/audit_log.h"
#include "mcp/http_transport.h"
#include "mcp/modern.h"
#include "mcp/server.h"
#include "mcp/task_manager.h"
#include "mcp_http_test_util.h"
#include "mcp_test_util.h"
#include "db/pg_database.h"
#include "pg_test_server.h"
#include "tasks/pg_task_store.h"
#include "tasks/task_store.h"
#include "test_audit_log.h"

namespace airlock {
namespace {

using nlohmann::json;
using tasks::MemoryTaskStore;
using tasks::TaskRecord;
using tasks::TaskStatus;

// ---- tasks/task_store.h -----------------------------------------------------

TaskRecord Row(const std::string& id, const std::string& owner, int64_t now) {
  TaskRecord t;
  t.id = id;
  t.owner = owner;
  t.tool = "run_code";
  t.created_ms = t.updated_ms = now;
  t.ttl_ms = 60'000;
  t.lease_owner = "gw_a";
  t.lease_expires_ms = now + 10'000;
  return t;
}

// The same rules for both implementations: in memory, and PostgreSQL (a
// throwaway server, tests/unit/pg_test_server.h).
class TaskStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "memory") {
      store_ = std::make_unique<MemoryTaskStore>();
      return;
    }
    const std::string dsn = airlock::testing::PgTestServer::Get().NewDatabase();
    ASSERT_FALSE(dsn.empty()) << airlock::testing::PgTestServer::Get().error();
    auto db = state::PgDatabase::Connect(dsn);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto pg = tasks::PgTaskStore::Open(*db);
    ASSERT_TRUE(pg.ok()) << pg.status().ToString();
    store_ = std::move(*pg);
  }
  std::unique_ptr<tasks::TaskStore> store_;
};

INSTANTIATE_TEST_SUITE_P(Backends, TaskStoreTest, ::testing::Values("memory", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(TaskIdTest, IdsAreRandom128Bits) {
  StatusOr<std::string> a = tasks::NewTaskId();
  StatusOr<std::string> b = tasks::NewTaskId();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 2u + 32u);
  EXPECT_NE(*a, *b);
}

TEST_P(TaskStoreTest, OwnerOnlyAndFinishOnce) {
  tasks::TaskStore& store = *store_;
  ASSERT_TRUE(store.Create(Row("t1", "key:alice", 1000), 8, 1000).ok());
  StatusOr<TaskRecord> t = store.Get("t1", "key:alice", 1500);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->status, TaskStatus::kWorking);
  // Another owner's task is exactly an unknown one.
  EXPECT_EQ(store.Get("t1", "key:bob", 1500).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store.Get("t1", "key:bob", 1500).status().message(),
            store.Get("nope", "key:alice", 1500).status().message());
  ASSERT_TRUE(store.Finish("t1", TaskStatus::kCompleted, {{"content", json::array()}}, nullptr, "done", 2000).ok());
  EXPECT_EQ(store.Finish("t1", TaskStatus::kCancelled, nullptr, nullptr, "", 2100).code(),
            StatusCode::kFailedPrecondition);
  t = store.Get("t1", "key:alice", 2200);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->status, TaskStatus::kCompleted);
  EXPECT_EQ(t->updated_ms, 2000);
  EXPECT_TRUE(t->result.contains("content"));
}

TEST_P(TaskStoreTest, GoneAfterTtl) {
  tasks::TaskStore& store = *store_;
  ASSERT_TRUE(store.Create(Row("t1", "o", 0), 8, 0).ok());
  ASSERT_TRUE(store.Finish("t1", TaskStatus::kCompleted, json::object(), nullptr, "", 5).ok());
  EXPECT_TRUE(store.Get("t1", "o", 59'999).ok());
  EXPECT_EQ(store.Get("t1", "o", 60'000).status().code(), StatusCode::kNotFound);
  (void)store.Sweep(60'000);  // drops it (the memory store's Get already has)
  EXPECT_EQ(store.Sweep(60'000), 0u);
}

TEST_P(TaskStoreTest, ExpiredLeaseReadsFailedNeverWorking) {
  tasks::TaskStore& store = *store_;
  ASSERT_TRUE(store.Create(Row("t1", "o", 0), 8, 0).ok());
  EXPECT_EQ(store.Get("t1", "o", 9'999)->status, TaskStatus::kWorking);
  StatusOr<TaskRecord> t = store.Get("t1", "o", 10'000);  // the gateway died: no Finish came
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->status, TaskStatus::kFailed);
  EXPECT_EQ(t->error["code"], -32603);
  EXPECT_NE(t->error["message"].get<std::string>().find("lease expired"), std::string::npos);
  EXPECT_EQ(t->updated_ms, 10'000);
  // A late Finish does not revive it.
  EXPECT_EQ(store.Finish("t1", TaskStatus::kCompleted, json::object(), nullptr, "", 11'000).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(store.LiveCount("o", 11'000), 0u);
}

TEST_P(TaskStoreTest, RenewedLeaseKeepsItWorking) {
  tasks::TaskStore& store = *store_;
  ASSERT_TRUE(store.Create(Row("t1", "o", 0), 8, 0).ok());
  ASSERT_TRUE(store.RenewLease("t1", "gw_a", 30'000, 5'000).ok());
  EXPECT_EQ(store.RenewLease("t1", "gw_b", 40'000, 5'000).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store.Get("t1", "o", 20'000)->status, TaskStatus::kWorking);
  EXPECT_EQ(store.Get("t1", "o", 30'000)->status, TaskStatus::kFailed);
}

TEST_P(TaskStoreTest, CapCountsWorkingTasksPerOwner) {
  tasks::TaskStore& store = *store_;
  ASSERT_TRUE(store.Create(Row("a1", "alice", 0), 2, 0).ok());
  ASSERT_TRUE(store.Create(Row("a2", "alice", 0), 2, 0).ok());
  EXPECT_EQ(store.Create(Row("a3", "alice", 0), 2, 0).code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(store.Create(Row("b1", "bob", 0), 2, 0).ok());
  ASSERT_TRUE(store.Finish("a1", TaskStatus::kCompleted, json::object(), nullptr, "", 1).ok());
  EXPECT_TRUE(store.Create(Row("a3", "alice", 1), 2, 1).ok());
  EXPECT_EQ(store.LiveCount("alice", 1), 2u);
}

TEST_P(TaskStoreTest, ACancelRequestIsMarkedForTheRunningGateway) {
  tasks::TaskStore& store = *store_;
  ASSERT_TRUE(store.Create(Row("c1", "alice", 0), 8, 0).ok());
  EXPECT_FALSE(store.Get("c1", "alice", 1)->cancel_requested);
  EXPECT_EQ(store.RequestCancel("c1", "bob", 1).code(), StatusCode::kNotFound);  // like an unknown id
  EXPECT_FALSE(store.Get("c1", "alice", 1)->cancel_requested);
  EXPECT_EQ(store.RequestCancel("nope", "alice", 1).code(), StatusCode::kNotFound);
  ASSERT_TRUE(store.RequestCancel("c1", "alice", 2).ok());
  EXPECT_TRUE(store.Get("c1", "alice", 3)->cancel_requested);
  EXPECT_EQ(store.Get("c1", "alice", 3)->status, TaskStatus::kWorking);  // the running gateway ends it
  ASSERT_TRUE(store.Finish("c1", TaskStatus::kCancelled, nullptr, nullptr, "", 4).ok());
  EXPECT_TRUE(store.RequestCancel("c1", "alice", 5).ok());  // terminal: acknowledged, unchanged
  EXPECT_EQ(store.Get("c1", "alice", 5)->status, TaskStatus::kCancelled);
}

// ---- the modern HTTP front ---------------------------------------------------

namespace mcpns = airlock::mcp;
namespace jsonrpc = airlock::protocol::jsonrpc;
using mcpns::testing::FakeExecutor;

json TaskMeta(bool declare) {
  json caps = json::object();
  if (declare) caps["extensions"] = {{mcpns::kTasksExtension, json::object()}};
  return {{mcpns::modern::kMetaProtocolVersion, "2026-07-28"},
          {mcpns::modern::kMetaClientCapabilities, caps},
          {mcpns::modern::kMetaClientInfo, {{"name", "tasks-test"}, {"version", "1"}}}};
}

json Req(int id, const std::string& method, json params, bool declare = true) {
  params["_meta"] = TaskMeta(declare);
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

json RunCode(int id, uint64_t timeout_ms, bool declare = true) {
  return Req(id, "tools/call",
             {{"name", "run_code"},
              {"arguments",
               {{"language", "python"}, {"code", "import time; time.sleep(1)"}, {"timeout_ms", timeout_ms}}}},
             declare);
}

// One request on `session`; its answer.
json SendOn(const std::shared_ptr<mcpns::Session>& session, const json& msg) {
  auto ch = std::make_shared<mcpns::testing::RecordingChannel>();
  session->HandleText(msg.dump(), ch);
  return ch->Wait();
}

// Asks `get()` (one tasks/get) until the answer is no longer a working task,
// every 50 ms, at most `tries` times; the last answer.
json PollWhileWorking(const std::function<json()>& get, int tries = 100) {
  json r;
  for (int i = 0; i < tries; ++i) {
    r = get();
    if (!r.contains("result") || r["result"]["status"] != "working") return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return r;
}

class McpTasksHttpTest : public ::testing::Test {
 protected:
  void Start(config::Config c = config::DefaultConfig()) {
    server_ = std::make_unique<mcpns::McpServer>(c, executor_);
    mcpns::HttpOptions o;
    o.authenticate = [](std::string_view token) -> std::optional<governance::Caller> {
      auto as = [](const char* user, const char* key_id) {
        return governance::Caller{.user = user, .role = "reader", .auth = "api_key", .key_id = key_id};
      };
      if (token == "key-alice") return as("alice", "k1");
      if (token == "key-bob") return as("bob", "k2");
      return std::nullopt;
    };
    Status st = mcpns::testing::StartTestHttpFront(*server_, o, &http_, &client_);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  void TearDown() override {
    if (http_) http_->Stop();
  }
  // A modern POST as `key`, with the headers a conforming client sends.
  std::pair<int, json> Post(const json& body, const std::string& key = "key-alice", std::string name = "") {
    const std::string method = body.value("method", "");
    if (name.empty() && method == "tools/call") name = body["params"]["name"];
    if (name.empty() && method.rfind("tasks/", 0) == 0) name = body["params"].value("taskId", "");
    httplib::Headers h = {{"Accept", "application/json, text/event-stream"},
                          {"MCP-Protocol-Version", "2026-07-28"},
                          {"Mcp-Method", method},
                          {"Authorization", "Bearer " + key}};
    if (!name.empty()) h.insert({"Mcp-Name", name});
    auto res = client_->Post("/mcp", h, body.dump(), "application/json");
    if (!res) return {0, json()};
    return {res->status, json::parse(res->body, nullptr, false)};
  }
  json Get(const std::string& task_id, const std::string& key = "key-alice") {
    return Post(Req(90, "tasks/get", {{"taskId", task_id}}), key).second;
  }
  // Polls tasks/get until the task leaves "working" (at most 10 s).
  json WaitTerminal(const std::string& task_id) {
    return PollWhileWorking([&] { return Get(task_id); }, 200);
  }

  FakeExecutor executor_;
  std::unique_ptr<mcpns::McpServer> server_;
  std::unique_ptr<mcpns::HttpTransport> http_;
  std::unique_ptr<httplib::Client> client_;
};

// A run that takes `ms` unless cancelled.
FakeExecutor::Handler Sleeps(int ms) {
  return [ms](const runtimes::RunRequest& req, const runtimes::ProgressFn&, CancelToken& cancel) {
    pollfd p{cancel.fd(), POLLIN, 0};
    if (::poll(&p, 1, ms) > 0) return FakeExecutor::BlockUntilCancelled(req, nullptr, cancel);
    return FakeExecutor::Ok(req, "slept\n");
  };
}

TEST_F(McpTasksHttpTest, DiscoverAdvertisesTheExtension) {
  Start();
  auto [status, r] = Post(Req(1, "server/discover", json::object()));
  ASSERT_EQ(status, 200) << r;
  EXPECT_TRUE(r["result"]["capabilities"]["extensions"][mcpns::kTasksExtension].is_object()) << r;

  config::Config off = config::DefaultConfig();
  off.tasks.mode = "never";
  http_->Stop();
  Start(off);
  r = Post(Req(2, "server/discover", json::object())).second;
  EXPECT_FALSE(r["result"]["capabilities"].contains("extensions")) << r;
  r = Post(Req(3, "tasks/get", {{"taskId", "t_x"}})).second;
  EXPECT_EQ(r["error"]["code"], jsonrpc::kMethodNotFound) << r;
}

TEST_F(McpTasksHttpTest, LongRunBecomesATaskPolledToItsResult) {
  Start();
  executor_.handler = Sleeps(300);
  auto [status, created] = Post(RunCode(1, 40'000));
  ASSERT_EQ(status, 200) << created;
  const json& c = created["result"];
  ASSERT_EQ(c["resultType"], "task") << created;
  EXPECT_EQ(c["status"], "working");
  const std::string id = c["taskId"];
  EXPECT_EQ(id.size(), 34u);
  EXPECT_EQ(c["ttlMs"], 3'600'000);
  EXPECT_EQ(c["pollIntervalMs"], 1000);
  EXPECT_TRUE(c["createdAt"].is_string() && c["lastUpdatedAt"].is_string());
  EXPECT_FALSE(c.contains("content"));
  // The creating request is over: the run goes on without it.
  json done = WaitTerminal(id);
  ASSERT_EQ(done["result"]["status"], "completed") << done;
  EXPECT_EQ(done["result"]["resultType"], "complete");
  EXPECT_EQ(done["result"]["taskId"], id);
  EXPECT_EQ(done["result"]["result"]["structuredContent"]["stdout"], "slept\n") << done;
  EXPECT_EQ(done["result"]["result"]["structuredContent"]["status"], "ok");
  EXPECT_EQ(server_->tasks()->running(), 0u);
}

TEST_F(McpTasksHttpTest, ShortOrUndeclaredCallsStayBlocking) {
  Start();
  json r = Post(RunCode(1, 1000)).second;  // below tasks.min_timeout_ms
  EXPECT_EQ(r["result"]["resultType"], "complete") << r;
  EXPECT_EQ(r["result"]["structuredContent"]["stdout"], "hello\n");
  r = Post(RunCode(2, 40'000, /*declare=*/false)).second;  // no capability: never a task
  EXPECT_EQ(r["result"]["resultType"], "complete") << r;
  config::Config always = config::DefaultConfig();
  always.tasks.mode = "always";
  http_->Stop();
  Start(always);
  r = Post(RunCode(3, 1000)).second;
  EXPECT_EQ(r["result"]["resultType"], "task") << r;
}

TEST_F(McpTasksHttpTest, CancelStopsTheRun) {
  Start();
  executor_.handler = FakeExecutor::BlockUntilCancelled;
  json created = Post(RunCode(1, 40'000)).second;
  ASSERT_EQ(created["result"]["resultType"], "task") << created;
  const std::string id = created["result"]["taskId"];
  ASSERT_TRUE(executor_.WaitRunning(1));
  EXPECT_EQ(server_->runs().size(), 1u);
  EXPECT_EQ(Get(id)["result"]["status"], "working");
  auto [status, ack] = Post(Req(2, "tasks/cancel", {{"taskId", id}}));
  ASSERT_EQ(status, 200) << ack;
  EXPECT_EQ(ack["result"]["resultType"], "complete") << ack;
  json done = WaitTerminal(id);
  EXPECT_EQ(done["result"]["status"], "cancelled") << done;
  EXPECT_FALSE(done["result"].contains("result"));
  EXPECT_TRUE(executor_.WaitCancelled(1));
  EXPECT_EQ(server_->runs().size(), 0u);  // the run is gone
  // Cancelling a finished task is acknowledged and changes nothing.
  ack = Post(Req(3, "tasks/cancel", {{"taskId", id}})).second;
  EXPECT_EQ(ack["result"]["resultType"], "complete") << ack;
  EXPECT_EQ(Get(id)["result"]["status"], "cancelled");
}

TEST_F(McpTasksHttpTest, OperatorCancelThroughTheRunTrackerEndsItCancelled) {
  Start();
  executor_.handler = FakeExecutor::BlockUntilCancelled;
  json created = Post(RunCode(1, 40'000)).second;
  const std::string id = created["result"]["taskId"];
  ASSERT_TRUE(executor_.WaitRunning(1));
  std::vector<mcpns::RunInFlight> runs = server_->runs().List();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].tool, "run_code");
  ASSERT_TRUE(server_->runs().Cancel(runs[0].run_id).ok());
  json done = WaitTerminal(id);
  EXPECT_EQ(done["result"]["status"], "cancelled") << done;
  EXPECT_NE(done["result"]["statusMessage"].get<std::string>().find("operator"), std::string::npos);
}

TEST_F(McpTasksHttpTest, AnotherCallersTaskIsUnknown) {
  Start();
  executor_.handler = Sleeps(200);
  json created = Post(RunCode(1, 40'000), "key-alice").second;
  const std::string id = created["result"]["taskId"];
  json theirs = Get(id, "key-bob");
  json unknown = Get("t_00000000000000000000000000000000", "key-bob");
  ASSERT_TRUE(theirs.contains("error")) << theirs;
  EXPECT_EQ(theirs["error"]["code"], jsonrpc::kInvalidParams);
  EXPECT_EQ(theirs["error"], unknown["error"]);
  json cancel = Post(Req(2, "tasks/cancel", {{"taskId", id}}), "key-bob").second;
  EXPECT_EQ(cancel["error"]["code"], jsonrpc::kInvalidParams) << cancel;
  EXPECT_EQ(WaitTerminal(id)["result"]["status"], "completed");  // bob's cancel did nothing
}

TEST_F(McpTasksHttpTest, TaskMethodsNeedTheCapabilityAndMcpName) {
  Start();
  json r = Post(Req(1, "tasks/get", {{"taskId", "t_x"}}, /*declare=*/false)).second;
  EXPECT_EQ(r["error"]["code"], -32021) << r;
  EXPECT_TRUE(r["error"]["data"]["requiredCapabilities"]["extensions"][mcpns::kTasksExtension].is_object());
  auto [status, mismatch] = Post(Req(2, "tasks/get", {{"taskId", "t_x"}}), "key-alice", "t_other");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(mismatch["error"]["code"], -32020) << mismatch;
  r = Post(Req(3, "tasks/get", json::object())).second;  // no taskId: no Mcp-Name to match
  EXPECT_EQ(r["error"]["code"], -32020) << r;
  r = Post(Req(4, "tasks/update", {{"taskId", "t_x"}, {"inputResponses", json::object()}})).second;
  EXPECT_EQ(r["error"]["code"], jsonrpc::kInvalidParams);
}

TEST_F(McpTasksHttpTest, PerCallerCapAndLongerTaskTimeout) {
  config::Config c = config::DefaultConfig();
  c.tasks.max_per_caller = 1;
  Start(c);
  executor_.handler = FakeExecutor::BlockUntilCancelled;
  // Above limits.max_timeout_ms (60000): only a task may ask it.
  json blocking = Post(RunCode(1, 120'000, /*declare=*/false)).second;
  EXPECT_EQ(blocking["result"]["isError"], true) << blocking;
  json first = Post(RunCode(2, 120'000)).second;
  ASSERT_EQ(first["result"]["resultType"], "task") << first;
  ASSERT_TRUE(executor_.WaitRunning(1));
  {
    std::lock_guard<std::mutex> lock(executor_.mu);
    EXPECT_EQ(executor_.requests.back().timeout_ms, 120'000u);
  }
  json second = Post(RunCode(3, 40'000)).second;
  EXPECT_EQ(second["result"]["resultType"], "complete") << second;
  EXPECT_EQ(second["result"]["isError"], true);
  EXPECT_NE(second["result"]["content"][0]["text"].get<std::string>().find("E_TASK_LIMIT"), std::string::npos);
  // Bob has his own allowance.
  json bobs = Post(RunCode(4, 40'000), "key-bob").second;
  EXPECT_EQ(bobs["result"]["resultType"], "task") << bobs;
  // Server teardown cancels the runs still going.
}

// Over stdio (one modern connection, the stdio user owns the tasks): a task
// survives the request and even the connection that created it.
TEST(McpTasksStdioTest, TaskOutlivesItsConnection) {
  FakeExecutor executor;
  executor.handler = Sleeps(200);
  mcpns::McpServer server(config::DefaultConfig(), executor);
  std::string id;
  {
    auto session = server.NewSession(std::make_shared<mcpns::testing::RecordingChannel>());
    json created = SendOn(session, RunCode(1, 40'000));
    ASSERT_EQ(created["result"]["resultType"], "task") << created;
    id = created["result"]["taskId"];
    json bad = SendOn(session, Req(2, "tasks/get", json::object()));
    EXPECT_EQ(bad["error"]["code"], jsonrpc::kInvalidParams) << bad;
    session->Close();  // the client went away
  }
  auto later = server.NewSession(std::make_shared<mcpns::testing::RecordingChannel>());
  json r = PollWhileWorking([&] { return SendOn(later, Req(3, "tasks/get", {{"taskId", id}})); });
  EXPECT_EQ(r["result"]["status"], "completed") << r;
  EXPECT_EQ(r["result"]["result"]["structuredContent"]["stdout"], "slept\n");
  later->Close();
}

TEST(McpTasksStdioTest, ListenForTaskIdsNeedsTheCapability) {
  FakeExecutor executor;
  mcpns::McpServer server(config::DefaultConfig(), executor);
  auto session = server.NewSession(std::make_shared<mcpns::testing::RecordingChannel>());
  auto ch = std::make_shared<mcpns::testing::RecordingChannel>();
  session->HandleText(
      Req(1, "subscriptions/listen", {{"notifications", {{"taskIds", json::array({"t_x"})}}}}, false).dump(), ch);
  json r = ch->Wait();
  EXPECT_EQ(r["error"]["code"], -32021) << r;
  session->Close();
}

TEST(McpTasksAuditTest, CreateAndCancelAreAudited) {
  airlock::tests::TempAuditLog log("tasks-audit");
  ASSERT_NE(log.get(), nullptr);
  audit::AuditStore* raw = log.get()->store();
  FakeExecutor executor;
  executor.handler = FakeExecutor::BlockUntilCancelled;
  std::string id;
  {
    mcpns::McpServer server(config::DefaultConfig(), executor, nullptr, mcpns::ServerOptions{.audit = log.get()});
    auto session = server.NewSession(std::make_shared<mcpns::testing::RecordingChannel>());
    auto send = [&](const json& msg) {
      auto ch = std::make_shared<mcpns::testing::RecordingChannel>();
      session->HandleText(msg.dump(), ch);
      return ch->Wait();
    };
    json created = send(RunCode(1, 40'000));
    ASSERT_EQ(created["result"]["resultType"], "task") << created;
    id = created["result"]["taskId"];
    ASSERT_TRUE(executor.WaitRunning(1));
    json ack = send(Req(2, "tasks/cancel", {{"taskId", id}}));
    EXPECT_EQ(ack["result"]["resultType"], "complete") << ack;
    ASSERT_TRUE(executor.WaitCancelled(1));
    session->Close();
  }
  auto rows = raw->Query({});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  std::set<std::string> kinds;
  for (const audit::AuditRow& row : *rows) {
    if (const audit::EventRow* e = row.event()) {
      kinds.insert(e->kind);
      if (e->kind == "task_create" || e->kind == "task_cancel") {
        EXPECT_EQ(e->target, id);
        EXPECT_EQ(e->detail.value("tool", ""), "run_code") << e->detail;
      }
    }
  }
  EXPECT_TRUE(kinds.count("tool_call"));
  EXPECT_TRUE(kinds.count("task_create"));
  EXPECT_TRUE(kinds.count("task_cancel"));
}

// A PostgreSQL task store over a fresh database of the throwaway server
// (what two gateways with state.backend "postgres" share).
void OpenPgTaskStore(std::shared_ptr<tasks::TaskStore>* out) {
  const std::string dsn = airlock::testing::PgTestServer::Get().NewDatabase();
  ASSERT_FALSE(dsn.empty()) << airlock::testing::PgTestServer::Get().error();
  auto db = state::PgDatabase::Connect(dsn);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto opened = tasks::PgTaskStore::Open(*db);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  *out = std::move(*opened);
}

// Two gateways sharing the PostgreSQL table (state.backend "postgres"): a
// task created on one is polled to its result on the other, and is still
// only its owner's there.
TEST(McpTasksPgTest, ATaskIsVisibleFromEveryGateway) {
  std::shared_ptr<tasks::TaskStore> store;
  ASSERT_NO_FATAL_FAILURE(OpenPgTaskStore(&store));
  FakeExecutor executor;
  executor.handler = Sleeps(200);
  mcpns::McpServer a(config::DefaultConfig(), executor, nullptr, mcpns::ServerOptions{.tasks = store});
  mcpns::McpServer b(config::DefaultConfig(), executor, nullptr, mcpns::ServerOptions{.tasks = store});
  auto on_a = a.NewSession(std::make_shared<mcpns::testing::RecordingChannel>());
  auto on_b = b.NewSession(std::make_shared<mcpns::testing::RecordingChannel>());
  auto stranger = b.NewSession(std::make_shared<mcpns::testing::RecordingChannel>(),
                               governance::Caller{.user = "mallory", .role = "reader", .auth = "api_key"});
  json created = SendOn(on_a, RunCode(1, 40'000));
  ASSERT_EQ(created["result"]["resultType"], "task") << created;
  const std::string id = created["result"]["taskId"];
  json r = PollWhileWorking([&] { return SendOn(on_b, Req(2, "tasks/get", {{"taskId", id}})); });
  EXPECT_EQ(r["result"]["status"], "completed") << r;
  EXPECT_EQ(r["result"]["result"]["structuredContent"]["stdout"], "slept\n");
  json theirs = SendOn(stranger, Req(3, "tasks/get", {{"taskId", id}}));
  EXPECT_EQ(theirs["error"]["code"], jsonrpc::kInvalidParams) << theirs;
  on_a->Close();
  on_b->Close();
  stranger->Close();
}

// tasks/cancel through a gateway that does not run the task: the mark in the
// shared store reaches the running gateway, which stops the run; and a
// short lease is renewed while the run lasts longer than it.
TEST(McpTasksPgTest, ACancelThroughAnotherGatewayStopsTheRunAndLeasesAreRenewed) {
  std::shared_ptr<tasks::TaskStore> store;
  ASSERT_NO_FATAL_FAILURE(OpenPgTaskStore(&store));
  config::Config cfg = config::DefaultConfig();
  cfg.tasks.lease_s = 3;  // renewed every second
  FakeExecutor executor;
  executor.handler = FakeExecutor::BlockUntilCancelled;
  mcpns::McpServer a(cfg, executor, nullptr, mcpns::ServerOptions{.tasks = store});
  mcpns::McpServer b(cfg, executor, nullptr, mcpns::ServerOptions{.tasks = store});
  auto on_a = a.NewSession(std::make_shared<mcpns::testing::RecordingChannel>());
  auto on_b = b.NewSession(std::make_shared<mcpns::testing::RecordingChannel>());
  json created = SendOn(on_a, RunCode(1, 40'000));
  ASSERT_EQ(created["result"]["resultType"], "task") << created;
  const std::string id = created["result"]["taskId"];
  ASSERT_TRUE(executor.WaitRunning(1));
  // Past two leases of 3 s, the run still going: renewed, still working.
  std::this_thread::sleep_for(std::chrono::milliseconds(6500));
  EXPECT_EQ(SendOn(on_b, Req(2, "tasks/get", {{"taskId", id}}))["result"]["status"], "working");
  json ack = SendOn(on_b, Req(3, "tasks/cancel", {{"taskId", id}}));
  EXPECT_EQ(ack["result"]["resultType"], "complete") << ack;
  json r = PollWhileWorking([&] { return SendOn(on_b, Req(4, "tasks/get", {{"taskId", id}})); });
  EXPECT_EQ(r["result"]["status"], "cancelled") << r;
  EXPECT_TRUE(executor.WaitCancelled(1));
  EXPECT_EQ(a.runs().size(), 0u);
  on_a->Close();
  on_b->Close();
}

TEST(TaskPolicyTest, WhichCallsBecomeTasks) {
  mcpns::WorkerPool pool(1);
  mcpns::RunTracker runs;
  config::TasksConfig c;
  mcpns::TaskManager m(c, 60'000, 10'000, pool, runs, nullptr, std::make_unique<MemoryTaskStore>());
  EXPECT_FALSE(m.Wants("run_code", json::object()));  // default 10 s
  EXPECT_TRUE(m.Wants("run_code", {{"timeout_ms", 30'000}}));
  EXPECT_FALSE(m.Wants("run_code", {{"timeout_ms", 29'999}}));
  EXPECT_TRUE(m.Wants("execute", {{"limits", {{"wall_ms", 45'000}}}}));
  EXPECT_FALSE(m.Wants("execute", {{"code", "1"}}));
  EXPECT_FALSE(m.Wants("list_languages", {{"timeout_ms", 90'000}}));
  c.min_timeout_ms = 100'000;
  mcpns::TaskManager high(c, 60'000, 10'000, pool, runs, nullptr, std::make_unique<MemoryTaskStore>());
  EXPECT_TRUE(high.Wants("run_code", {{"timeout_ms", 60'001}}));  // above the blocking maximum
}

}  // namespace
}  // namespace airlock
