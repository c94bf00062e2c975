#include "codemode/bridge_session.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "audit/redaction.h"
#include "base/encoding.h"
#include "codemode/bridge_frames.h"
#include "codemode/error_codes.h"
#include "gateway/schema_validator.h"

namespace airlock::codemode {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

constexpr size_t kRecordNameBytes = 200;
// A call that times out this close to the run's deadline ran out of run time.
constexpr milliseconds kDeadlineSlack(20);

// The one message for "unknown" and "not granted", so they cannot be told apart.
std::string NotAvailable(const std::string& name) { return "tool \"" + name + "\" is not available in this run"; }

std::string TooLarge(const char* what, uint64_t size, uint64_t limit) {
  return std::string(what) + " " + std::to_string(size) + " bytes, over the limit of " + std::to_string(limit);
}

}  // namespace

struct BridgeSession::Request {
  CallRecord rec;
  json id;
  ReplyFn reply;
  Clock::time_point arrived;
  std::string name;  // calls: the tool
  json args;         // calls: the arguments (an object)
};

BridgeSession::BridgeSession(gateway::Gateway& gateway, Grants grants, Limits limits, Clock::time_point deadline)
    : gateway_(gateway),
      grants_(std::move(grants)),
      limits_(limits),
      deadline_(deadline),
      visible_([this](const gateway::ToolEntry& e) {
        return grants_.connectors.count(e.connector) > 0 && (!grants_.tool_filter || grants_.tool_filter(e));
      }),
      callable_([this](const gateway::ToolEntry& e) {
        return visible_(e) && (e.read_only || grants_.write_connectors.count(e.connector) > 0);
      }),
      log_(size_t{limits.max_calls} + CallLog::kExtraRecords),
      queue_(limits.max_concurrent) {}

BridgeSession::~BridgeSession() { Close(); }

void BridgeSession::OnFrame(std::string text, ReplyFn reply) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
  }
  ParsedFrame f = ParseFrame(text);
  if (!f.problem.empty()) {
    NoteProtocolError(f.problem);
    if (!f.id.is_null() && reply) reply(Dump(ErrorReply(f.id, kErrBridgeProtocol, f.problem)));
    return;
  }
  if (f.op == "result" || f.op == "result_error") return HandleFinal(f.op, f.frame);

  auto r = std::make_shared<Request>();
  r->id = f.id;
  r->reply = std::move(reply);
  r->arrived = Clock::now();
  r->rec.op = f.op;
  if (auto it = f.frame.find(f.op == "search" ? "query" : "name"); it != f.frame.end()) {
    r->rec.name = Truncated(it->is_string() ? it->get_ref<const std::string&>() : Dump(*it), kRecordNameBytes);
  }
  log_.Add(r->rec);
  if (r->rec.seq > limits_.max_calls) {
    return Deny(*r, kErrLimitCalls,
                "this run's limit of " + std::to_string(limits_.max_calls) + " bridge requests is used up",
                "call_limit");
  }
  if (f.op == "search") return HandleSearch(*r, f.frame);
  if (f.op == "describe") return HandleDescribe(*r, f.frame);
  if (!CheckCall(*r, f.frame)) return;
  queue_.Submit([this, r] { RunCall(*r); }, [this, r] { DropCall(*r); });
}

void BridgeSession::OnBridgeError(const std::string& message) { NoteProtocolError(message); }

void BridgeSession::HandleSearch(Request& r, const json& frame) {
  auto query = frame.find("query");
  if (query == frame.end() || !query->is_string()) {
    return Deny(r, gateway::kErrInvalidArgs, "search needs a \"query\" string", "invalid_args");
  }
  int limit = gateway::kDefaultSearchLimit;
  if (auto l = frame.find("limit"); l != frame.end() && !l->is_null()) {
    if (!l->is_number_integer()) return Deny(r, gateway::kErrInvalidArgs, "\"limit\" must be an integer", "invalid_args");
    limit = l->is_number_unsigned() ? static_cast<int>(std::min<uint64_t>(l->get<uint64_t>(), gateway::kMaxSearchLimit))
                                    : static_cast<int>(std::clamp<int64_t>(l->get<int64_t>(), 1, gateway::kMaxSearchLimit));
  }
  json result = gateway_.Search(query->get_ref<const std::string&>(), limit, visible_, &grants_.connectors).ToJson();
  r.rec.decision = "allowed";
  r.rec.result_bytes = Dump(result).size();
  Finish(r, OkReply(r.id, std::move(result)));
}

void BridgeSession::HandleDescribe(Request& r, const json& frame) {
  std::optional<std::string> name = CheckName(r, frame);
  if (!name) return;
  if (!Resolve(r, *name)) return;
  StatusOr<gateway::ToolDescription> d = gateway_.Describe(*name, visible_);
  if (!d.ok()) return Deny(r, gateway::kErrToolNotDeclared, NotAvailable(*name), "unknown_tool");
  json result = d->ToJson();
  r.rec.decision = "allowed";
  r.rec.result_bytes = Dump(result).size();
  Finish(r, OkReply(r.id, std::move(result)));
}

bool BridgeSession::CheckCall(Request& r, const json& frame) {
  std::optional<std::string> name = CheckName(r, frame);
  if (!name) return false;
  r.name = std::move(*name);
  auto args = frame.find("args");
  r.args = (args == frame.end() || args->is_null()) ? json::object() : *args;
  if (!r.args.is_object()) {
    Deny(r, gateway::kErrInvalidArgs, "\"args\" must be an object", "invalid_args");
    return false;
  }
  const std::string args_text = Dump(r.args);
  r.rec.args_bytes = args_text.size();
  r.rec.args_sha256 = Sha256Hex(args_text);
  r.rec.args_redacted = audit::RedactArgs(r.args);
  if (args_text.size() > limits_.max_args_bytes) {
    Deny(r, kErrLimitArgs, TooLarge("the arguments are", args_text.size(), limits_.max_args_bytes), "args_too_large");
    return false;
  }
  std::optional<gateway::ToolEntry> entry = Resolve(r, r.name);
  if (!entry) return false;
  if (!entry->read_only && grants_.write_connectors.count(entry->connector) == 0) {
    Deny(r, kErrWriteNotAllowed,
         "tool \"" + r.name + "\" may change data, and this run is not allowed to write through \"" +
             entry->connector + "\"",
         "write_not_allowed");
    return false;
  }
  if (Status valid = gateway::ValidateJsonSchema(entry->input_schema, r.args); !valid.ok()) {
    Deny(r, gateway::kErrInvalidArgs, valid.message(), "schema");
    return false;
  }
  r.rec.decision = "allowed";
  log_.Update(r.rec);  // visible in calls() while it waits
  return true;
}

void BridgeSession::RunCall(Request& r) {
  const milliseconds left = std::chrono::duration_cast<milliseconds>(deadline_ - Clock::now());
  if (cancel_.cancelled()) return DropCall(r);
  if (left.count() <= 0) {
    return Deny(r, kErrLimitWallclock, "the run's time limit of " + std::to_string(limits_.wall_ms) + " ms is used up",
                "deadline");
  }
  gateway::CallOutcome out = gateway_.CallTool(r.name, r.args, &cancel_, left, callable_);
  json reply;
  if (out.ok) {
    r.rec.result_bytes = Dump(out.value).size();
    if (r.rec.result_bytes > limits_.max_result_bytes) {
      r.rec.error_code = kErrLimitResult;
      reply = ErrorReply(r.id, kErrLimitResult, TooLarge("the result is", r.rec.result_bytes, limits_.max_result_bytes));
    } else {
      reply = out.ToBridgeReply(r.id);
    }
  } else {
    if (out.status.code() == StatusCode::kDeadlineExceeded && Clock::now() + kDeadlineSlack >= deadline_) {
      out.error_code = kErrLimitWallclock;
      out.error_message = "the run's time limit of " + std::to_string(limits_.wall_ms) + " ms is used up";
    } else if (out.error_code == gateway::kErrToolNotDeclared) {  // the catalog changed since the checks
      out.error_message = NotAvailable(r.name);
      r.rec.reason = "not_declared";
    } else if (out.error_code == gateway::kErrCancelled) {
      r.rec.reason = "run_ended";
    }
    r.rec.error_code = out.error_code;
    reply = out.ToBridgeReply(r.id);
  }
  Finish(r, reply);
}

void BridgeSession::DropCall(Request& r) {
  r.rec.decision = "denied";
  r.rec.error_code = gateway::kErrCancelled;
  r.rec.reason = "run_ended";
  Finish(r, ErrorReply(r.id, gateway::kErrCancelled, "the run has ended"));  // not sent: closed
}

void BridgeSession::HandleFinal(const std::string& op, const json& frame) {
  std::optional<json> value, error;
  if (op == "result") {
    auto it = frame.find("value");
    json v = it == frame.end() ? json() : *it;
    if (const size_t size = Dump(v).size(); size > limits_.max_result_bytes) {
      error = json{{"name", kErrLimitResult}, {"message", TooLarge("the return value is", size, limits_.max_result_bytes)}};
    } else {
      value = std::move(v);
    }
  } else {
    auto it = frame.find("error");
    error = NormalizeProgramError(it == frame.end() ? json() : *it);
    if (const size_t size = Dump(*error).size(); size > limits_.max_result_bytes) {
      error = json{{"name", kErrLimitResult}, {"message", TooLarge("the thrown error is", size, limits_.max_result_bytes)}};
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!final_seen_) {
      final_seen_ = true;
      return_value_ = std::move(value);
      return_error_ = std::move(error);
      return;
    }
  }
  NoteProtocolError("a second \"" + op + "\" frame after the program's result");
}

std::optional<std::string> BridgeSession::CheckName(Request& r, const json& frame) {
  auto name = frame.find("name");
  if (name == frame.end() || !name->is_string() || name->get_ref<const std::string&>().size() > gateway::kMaxQualifiedNameBytes) {
    Deny(r, gateway::kErrInvalidArgs,
         "\"name\" must be a string of at most " + std::to_string(gateway::kMaxQualifiedNameBytes) + " bytes",
         "invalid_name");
    return std::nullopt;
  }
  return name->get<std::string>();
}

std::optional<gateway::ToolEntry> BridgeSession::Resolve(Request& r, const std::string& name) {
  // A connector that is not granted is never asked (not even for its tool
  // list): it does not exist for this run.
  const size_t dot = name.find('.');
  const std::string connector = dot == std::string::npos ? "" : name.substr(0, dot);
  if (grants_.connectors.count(connector) == 0) {
    if (gateway_.connector(connector) != nullptr) {
      r.rec.connector = connector;
      r.rec.tool = name.substr(dot + 1);
    }
    Deny(r, gateway::kErrToolNotDeclared, NotAvailable(name),
         gateway_.connector(connector) != nullptr ? "not_declared" : "unknown_tool");
    return std::nullopt;
  }
  StatusOr<gateway::ToolEntry> e = gateway_.FindTool(name, visible_);
  if (!e.ok()) {
    Deny(r, gateway::kErrToolNotDeclared, NotAvailable(name), "unknown_tool");
    return std::nullopt;
  }
  r.rec.connector = e->connector;
  r.rec.tool = e->tool;
  r.rec.effective_class = e->effective_class();
  return std::move(e).value();
}

void BridgeSession::Finish(Request& r, const json& reply) {
  r.rec.duration_ms = static_cast<uint64_t>(
      std::chrono::duration_cast<milliseconds>(Clock::now() - r.arrived).count());
  log_.Update(r.rec);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
  }
  if (!r.reply) return;
  try {
    r.reply(Dump(reply));
  } catch (...) {  // a reply that cannot be delivered changes nothing here
  }
}

void BridgeSession::Deny(Request& r, const char* code, const std::string& message, const char* reason) {
  r.rec.decision = "denied";
  r.rec.error_code = code;
  r.rec.reason = reason;
  Finish(r, ErrorReply(r.id, code, message));
}

void BridgeSession::NoteProtocolError(const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (protocol_error_.empty()) protocol_error_ = message.empty() ? "bridge error" : message;
}

void BridgeSession::Close() {
  std::lock_guard<std::mutex> close_lock(close_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  queue_.Stop();     // nothing queued is dispatched from here on (G-D7)
  cancel_.Cancel();  // in-flight calls give up and tell their servers
  queue_.Join();
}

std::optional<json> BridgeSession::return_value() const {
  std::lock_guard<std::mutex> lock(mu_);
  return return_value_;
}

std::optional<json> BridgeSession::return_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return return_error_;
}

std::vector<CallRecord> BridgeSession::calls() const { return log_.records(); }
uint32_t BridgeSession::calls_total() const { return log_.total(); }
uint32_t BridgeSession::calls_denied() const { return log_.denied(); }

std::string BridgeSession::protocol_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return protocol_error_;
}

}  // namespace airlock::codemode
