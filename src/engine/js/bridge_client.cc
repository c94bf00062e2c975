#include "engine/js/bridge_client.h"

#include <poll.h>

#include <cerrno>
#include <cmath>

#include <js/CallAndConstruct.h>
#include <js/Exception.h>
#include <js/Promise.h>
#include <js/PropertyAndElement.h>
#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "engine/js/js_json.h"
#include "engine/js/js_strings.h"
#include "base/frame.h"

namespace airlock::engine::js {
namespace {

constexpr size_t kMaxErrorFieldBytes = 64 << 10;

// Evaluated once, before any user code, to make the ToolError class.
constexpr std::string_view kToolErrorSource = R"JS((function () {
  "use strict";
  class ToolError extends Error {
    constructor(code, message) {
      super(message);
      this.code = code;
    }
  }
  Object.defineProperty(ToolError.prototype, "name",
                        {value: "ToolError", writable: true, configurable: true});
  Object.freeze(ToolError.prototype);
  return Object.freeze(ToolError);
})())JS";

std::string JsonString(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// args[i] as UTF-8 if it is a string.
std::optional<std::string> StringArg(JSContext* cx, const JS::CallArgs& args, unsigned i) {
  if (!args.get(i).isString()) return std::nullopt;
  JS::RootedString s(cx, args.get(i).toString());
  std::string out;
  if (!JsStringToUtf8(cx, s, &out)) return std::nullopt;
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<BridgeClient>> BridgeClient::Install(JsEngine& engine, UniqueFd fd) {
  std::unique_ptr<BridgeClient> client(new BridgeClient(engine, std::move(fd)));
  AIRLOCK_RETURN_IF_ERROR(client->Init());
  return client;
}

BridgeClient::~BridgeClient() = default;

Status BridgeClient::Init() {
  JSContext* cx = engine_.cx();
  JS::RootedValue ctor(cx);
  if (!engine_.EvaluateScript(kToolErrorSource, "airlock:tools", 1, &ctor) || !ctor.isObject()) {
    JS_ClearPendingException(cx);
    return Internal("cannot create ToolError");
  }
  tool_error_ctor_ = std::make_unique<JS::PersistentRootedObject>(cx, &ctor.toObject());
  if (!engine_.DefineReadOnly(engine_.global(), "ToolError", ctor)) {
    return Internal("cannot define ToolError");
  }

  JS::RootedObject tools(cx, JS_NewPlainObject(cx));
  if (!tools) return Internal("tools: out of memory");
  struct Method {
    const char* name;
    unsigned nargs;
    bool (BridgeClient::*impl)(JSContext*, JS::CallArgs&);
  };
  const Method methods[] = {{"search", 2, &BridgeClient::Search},
                            {"describe", 1, &BridgeClient::Describe},
                            {"call", 2, &BridgeClient::Call}};
  for (const Method& m : methods) {
    JS::RootedObject fun(cx, engine_.NewHostFunction(
                                 m.name, m.nargs, [this, impl = m.impl](JSContext* cx, JS::CallArgs& args) {
                                   return (this->*impl)(cx, args);
                                 }));
    if (!fun || !JS_FreezeObject(cx, fun) ||
        !JS_DefineProperty(cx, tools, m.name, fun, JsEngine::kLockedAttrs)) {
      return Internal(std::string("tools: cannot define ") + m.name);
    }
  }
  if (!JS_FreezeObject(cx, tools)) return Internal("tools: cannot freeze");
  JS::RootedValue tools_value(cx, JS::ObjectValue(*tools));
  if (!JS_DefineProperty(cx, engine_.global(), "tools", tools_value, JsEngine::kLockedAttrs)) {
    return Internal("tools: cannot define the global");
  }
  return OkStatus();
}

bool BridgeClient::RejectWithToolError(JSContext* cx, JS::HandleObject promise, const std::string& code,
                                       const std::string& message) {
  JS::RootedString code_str(cx, NewJsString(cx, code));
  JS::RootedString message_str(cx, NewJsString(cx, message));
  if (!code_str || !message_str) return false;
  JS::RootedValueArray<2> ctor_args(cx);
  ctor_args[0].setString(code_str);
  ctor_args[1].setString(message_str);
  JS::RootedValue ctor(cx, JS::ObjectValue(**tool_error_ctor_));
  JS::RootedObject error(cx);
  if (!JS::Construct(cx, ctor, ctor_args, &error)) {
    if (!JS_IsExceptionPending(cx)) return false;  // stopped
    JS_ClearPendingException(cx);
    // Fall back to a plain object with the same fields.
    error = JS_NewPlainObject(cx);
    if (!error) return false;
    JS::RootedValue v(cx, JS::StringValue(code_str));
    if (!JS_SetProperty(cx, error, "code", v)) return false;
    v.setString(message_str);
    if (!JS_SetProperty(cx, error, "message", v)) return false;
  }
  JS::RootedValue reason(cx, JS::ObjectValue(*error));
  return JS::RejectPromise(cx, promise, reason);
}

bool BridgeClient::SendRequest(JSContext* cx, JS::HandleObject promise, const std::string& fields) {
  if (!failure_.ok()) {
    return RejectWithToolError(cx, promise, "E_BRIDGE_PROTOCOL", "the bridge is closed: " + failure_.message());
  }
  const int64_t id = next_id_;
  std::string frame = "{\"id\":" + std::to_string(id) + "," + fields + "}";
  if (frame.size() > kBridgeMaxFrameBytes) {
    return RejectWithToolError(cx, promise, "E_LIMIT_ARGS",
                               "request of " + std::to_string(frame.size()) +
                                   " bytes exceeds the bridge frame limit of " +
                                   std::to_string(kBridgeMaxFrameBytes) + " bytes");
  }
  Status st = WriteFrame(fd_.get(), frame, kBridgeMaxFrameBytes);
  if (!st.ok()) {
    failure_ = Unavailable("cannot write to the bridge: " + st.message());
    return RejectWithToolError(cx, promise, "E_BRIDGE_PROTOCOL", failure_.message());
  }
  ++next_id_;
  pending_[id] = std::make_unique<JS::PersistentRootedObject>(cx, promise);
  return true;
}

bool BridgeClient::Search(JSContext* cx, JS::CallArgs& args) {
  JS::RootedObject promise(cx, JS::NewPromiseObject(cx, nullptr));
  if (!promise) return false;
  args.rval().setObject(*promise);
  std::optional<std::string> query = StringArg(cx, args, 0);
  if (!query) {
    if (JS_IsExceptionPending(cx)) return false;
    return RejectWithToolError(cx, promise, "E_INVALID_ARGS", "tools.search(query, limit?): query must be a string");
  }
  std::string fields = "\"op\":\"search\",\"query\":" + JsonString(*query);
  if (!args.get(1).isUndefined()) {
    double limit = args.get(1).isNumber() ? args.get(1).toNumber() : NAN;
    if (!std::isfinite(limit) || limit < 1 || limit > 1e6 || std::floor(limit) != limit) {
      return RejectWithToolError(cx, promise, "E_INVALID_ARGS",
                                 "tools.search(query, limit?): limit must be a positive integer");
    }
    fields += ",\"limit\":" + std::to_string(static_cast<int64_t>(limit));
  }
  return SendRequest(cx, promise, fields);
}

bool BridgeClient::Describe(JSContext* cx, JS::CallArgs& args) {
  JS::RootedObject promise(cx, JS::NewPromiseObject(cx, nullptr));
  if (!promise) return false;
  args.rval().setObject(*promise);
  std::optional<std::string> name = StringArg(cx, args, 0);
  if (!name) {
    if (JS_IsExceptionPending(cx)) return false;
    return RejectWithToolError(cx, promise, "E_INVALID_ARGS", "tools.describe(name): name must be a string");
  }
  return SendRequest(cx, promise, "\"op\":\"describe\",\"name\":" + JsonString(*name));
}

bool BridgeClient::Call(JSContext* cx, JS::CallArgs& args) {
  JS::RootedObject promise(cx, JS::NewPromiseObject(cx, nullptr));
  if (!promise) return false;
  args.rval().setObject(*promise);
  std::optional<std::string> name = StringArg(cx, args, 0);
  if (!name) {
    if (JS_IsExceptionPending(cx)) return false;
    return RejectWithToolError(cx, promise, "E_INVALID_ARGS",
                               "tools.call(name, args?): name must be a string");
  }
  std::string args_json = "{}";
  JS::RootedValue tool_args(cx, args.get(1));
  if (!tool_args.isNullOrUndefined()) {  // null means {} (as in Python and on the server)
    const char* kNotObject = "tools.call(name, args?): args must be a JSON object";
    if (!tool_args.isObject() || JS::IsCallable(&tool_args.toObject())) {
      return RejectWithToolError(cx, promise, "E_INVALID_ARGS", kNotObject);
    }
    std::optional<std::string> json;
    if (!ToJson(cx, tool_args, &json)) {
      if (!JS_IsExceptionPending(cx)) return false;  // stopped
      std::optional<ErrorInfo> err = TakePendingError(cx);
      return RejectWithToolError(cx, promise, "E_INVALID_ARGS",
                                 "tools.call: args are not JSON-serialisable: " + (err ? err->message : ""));
    }
    if (!json || json->empty() || (*json)[0] != '{') {
      return RejectWithToolError(cx, promise, "E_INVALID_ARGS", kNotObject);
    }
    args_json = std::move(*json);
  }
  return SendRequest(cx, promise, "\"op\":\"call\",\"name\":" + JsonString(*name) + ",\"args\":" + args_json);
}

Status BridgeClient::HandleReply(const std::string& payload) {
  nlohmann::json reply = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded() || !reply.is_object()) return InvalidArgument("reply frame is not a JSON object");
  auto id_it = reply.find("id");
  auto ok_it = reply.find("ok");
  if (id_it == reply.end() || !id_it->is_number_integer() || ok_it == reply.end() || !ok_it->is_boolean()) {
    return InvalidArgument("reply frame lacks an integer id or a boolean ok");
  }
  auto pending_it = pending_.find(id_it->get<int64_t>());
  if (pending_it == pending_.end()) {
    return InvalidArgument("reply for unknown request id " + std::to_string(id_it->get<int64_t>()));
  }
  std::unique_ptr<JS::PersistentRootedObject> root = std::move(pending_it->second);
  pending_.erase(pending_it);

  JSContext* cx = engine_.cx();
  JS::RootedObject promise(cx, *root);
  root.reset();
  if (ok_it->get<bool>()) {
    auto result_it = reply.find("result");
    std::string result_json = result_it == reply.end()
                                  ? "null"
                                  : result_it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    JS::RootedValue value(cx);
    if (!ParseJson(cx, result_json, &value)) {
      if (!JS_IsExceptionPending(cx)) return OkStatus();  // stopped; the loop notices
      JS_ClearPendingException(cx);
      RejectWithToolError(cx, promise, "E_BRIDGE_PROTOCOL", "unparseable tool result");
      return OkStatus();
    }
    if (!JS::ResolvePromise(cx, promise, value)) JS_ClearPendingException(cx);
    return OkStatus();
  }
  std::string code = "E_TOOL_ERROR";
  std::string message;
  auto err_it = reply.find("error");
  if (err_it != reply.end() && err_it->is_object()) {
    if (auto c = err_it->find("code"); c != err_it->end() && c->is_string()) code = c->get<std::string>();
    if (auto m = err_it->find("message"); m != err_it->end() && m->is_string()) message = m->get<std::string>();
  }
  if (!RejectWithToolError(cx, promise, code, message)) JS_ClearPendingException(cx);
  return OkStatus();
}

JsEngine::WaitResult BridgeClient::Wait(std::optional<Clock::time_point> deadline) {
  if (!failure_.ok()) return JsEngine::WaitResult::kFailed;
  if (pending_.empty()) return JsEngine::WaitResult::kNothingPending;
  int timeout_ms = -1;
  if (deadline) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now()).count();
    timeout_ms = static_cast<int>(std::clamp<int64_t>(left, 0, INT32_MAX));
  }
  struct pollfd pfd = {fd_.get(), POLLIN, 0};
  int n = ::poll(&pfd, 1, timeout_ms);
  if (n < 0) {
    if (errno == EINTR) return JsEngine::WaitResult::kProgress;
    failure_ = ErrnoError("poll on the bridge");
    return JsEngine::WaitResult::kFailed;
  }
  if (n == 0) return JsEngine::WaitResult::kProgress;  // deadline: the engine notices
  StatusOr<std::string> payload = ReadFrame(fd_.get(), kBridgeMaxFrameBytes);
  if (!payload.ok()) {
    failure_ = payload.status();
    return JsEngine::WaitResult::kFailed;
  }
  Status st = HandleReply(*payload);
  if (!st.ok()) {
    failure_ = st;
    return JsEngine::WaitResult::kFailed;
  }
  return JsEngine::WaitResult::kProgress;
}

void BridgeClient::RejectPending(const std::string& why) {
  JSContext* cx = engine_.cx();
  std::map<int64_t, std::unique_ptr<JS::PersistentRootedObject>> pending = std::move(pending_);
  pending_.clear();
  for (auto& [id, root] : pending) {
    JS::RootedObject promise(cx, *root);
    if (!RejectWithToolError(cx, promise, "E_BRIDGE_PROTOCOL", why)) JS_ClearPendingException(cx);
  }
}

void BridgeClient::Rebind(UniqueFd fd) {
  RejectPending("the bridge of an earlier cell is closed");
  fd_ = std::move(fd);
  failure_ = fd_ ? OkStatus() : Unavailable("no bridge came with this cell");
}

void BridgeClient::Unbind(const std::string& why) {
  RejectPending(why);
  fd_.Reset();
  failure_ = Unavailable(why);
}

Status BridgeClient::SendResult(const std::string& value_json) {
  std::string frame = "{\"op\":\"result\",\"value\":" + value_json + "}";
  if (frame.size() > kBridgeMaxFrameBytes) {
    return ResourceExhausted("the return value is " + std::to_string(value_json.size()) +
                             " bytes of JSON, over the bridge frame limit of " +
                             std::to_string(kBridgeMaxFrameBytes) + " bytes");
  }
  return WriteFrame(fd_.get(), frame, kBridgeMaxFrameBytes);
}

Status BridgeClient::SendResultError(const ErrorInfo& error) {
  nlohmann::json frame = {
      {"op", "result_error"},
      {"error",
       {{"name", std::string(TruncateUtf8(error.name, 256))},
        {"message", std::string(TruncateUtf8(error.message, kMaxErrorFieldBytes))},
        {"stack", std::string(TruncateUtf8(error.stack, kMaxErrorFieldBytes))}}}};
  if (!error.code.empty()) frame["error"]["code"] = std::string(TruncateUtf8(error.code, 256));
  return WriteJsonFrame(fd_.get(), frame, kBridgeMaxFrameBytes);
}

}  // namespace airlock::engine::js
