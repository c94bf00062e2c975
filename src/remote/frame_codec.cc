#include "remote/frame_codec.h"

#include <string>

#include "base/encoding.h"

namespace airlock::remote {
namespace {

using Json = nlohmann::json;

bool IsId(const Json& j) { return j.is_number_unsigned() || (j.is_number_integer() && j.get<int64_t>() >= 0); }

// Parses an embedded JSON document; the peer's bytes are untrusted.
StatusOr<Json> ParseEmbedded(const std::string& text, const char* what) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument(std::string(what) + " is not valid JSON");
  return j;
}

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

StatusOr<std::string> StringField(const Json& frame, const char* key) {
  auto it = frame.find(key);
  if (it == frame.end() || !it->is_string()) {
    return InvalidArgument(std::string("\"") + key + "\" must be a string");
  }
  return it->get<std::string>();
}

StatusOr<uint64_t> OffsetField(const Json& frame, const char* key) {
  auto it = frame.find(key);
  if (it == frame.end() || !IsId(*it)) return InvalidArgument(std::string("\"") + key + "\" must be a non-negative integer");
  return it->get<uint64_t>();
}

// Image bytes travel base64 in a JSON frame, raw in a protobuf message.
StatusOr<std::string> BytesField(const Json& frame, const char* key) {
  AIRLOCK_ASSIGN_OR_RETURN(std::string text, StringField(frame, key));
  std::string bytes;
  if (!Base64Decode(text, &bytes)) return InvalidArgument(std::string("\"") + key + "\" must be base64");
  return bytes;
}

StatusOr<Json> ObjectField(const Json& frame, const char* key) {
  auto it = frame.find(key);
  if (it == frame.end() || !it->is_object()) {
    return InvalidArgument(std::string("\"") + key + "\" must be an object");
  }
  return *it;
}

// Type and id, common to every frame.
Status Header(const Json& frame, std::string* type, uint64_t* id, bool id_required) {
  if (!frame.is_object()) return InvalidArgument("a frame must be a JSON object");
  auto t = frame.find("type");
  if (t == frame.end() || !t->is_string()) return InvalidArgument("a frame needs a string \"type\"");
  *type = t->get<std::string>();
  auto i = frame.find("id");
  if (i != frame.end() && IsId(*i)) {
    *id = i->get<uint64_t>();
  } else if (id_required) {
    return InvalidArgument("a \"" + *type + "\" frame needs a non-negative integer \"id\"");
  }
  return OkStatus();
}

}  // namespace

StatusOr<v1::GatewayMessage> GatewayMessageFromFrame(const Json& frame) {
  std::string type;
  uint64_t id = 0;
  AIRLOCK_RETURN_IF_ERROR(Header(frame, &type, &id, true));
  v1::GatewayMessage m;
  m.set_id(id);
  if (type == "run") {
    AIRLOCK_ASSIGN_OR_RETURN(Json request, ObjectField(frame, "request"));
    m.mutable_run()->set_request_json(Dump(request));
  } else if (type == "cancel") {
    m.mutable_cancel();
  } else if (type == "languages") {
    m.mutable_languages();
  } else if (type == "ping") {
    m.mutable_ping();
  } else if (type == "health") {
    m.mutable_health();
  } else if (type == "drained") {
    m.mutable_drained();
  } else if (type == "bridge_reply") {
    AIRLOCK_ASSIGN_OR_RETURN(std::string f, StringField(frame, "frame"));
    m.mutable_bridge_reply()->set_frame(std::move(f));
  } else if (type == "session_open") {
    AIRLOCK_ASSIGN_OR_RETURN(Json session, ObjectField(frame, "session"));
    m.mutable_session_open()->set_session_json(Dump(session));
  } else if (type == "session_close") {
    AIRLOCK_ASSIGN_OR_RETURN(std::string sid, StringField(frame, "session_id"));
    m.mutable_session_close()->set_session_id(std::move(sid));
  } else if (type == "session_pause" || type == "session_resume") {
    AIRLOCK_ASSIGN_OR_RETURN(std::string sid, StringField(frame, "session_id"));
    (type == "session_pause" ? m.mutable_session_pause() : m.mutable_session_resume())->set_session_id(std::move(sid));
  } else if (type == "session_fork") {
    AIRLOCK_ASSIGN_OR_RETURN(std::string sid, StringField(frame, "session_id"));
    AIRLOCK_ASSIGN_OR_RETURN(Json session, ObjectField(frame, "session"));
    m.mutable_session_fork()->set_session_id(std::move(sid));
    m.mutable_session_fork()->set_session_json(Dump(session));
  } else if (type == "session_export") {
    AIRLOCK_ASSIGN_OR_RETURN(std::string sid, StringField(frame, "session_id"));
    AIRLOCK_ASSIGN_OR_RETURN(uint64_t offset, OffsetField(frame, "offset"));
    m.mutable_session_export()->set_session_id(std::move(sid));
    m.mutable_session_export()->set_offset(offset);
  } else if (type == "session_import") {
    AIRLOCK_ASSIGN_OR_RETURN(Json session, ObjectField(frame, "session"));
    AIRLOCK_ASSIGN_OR_RETURN(uint64_t offset, OffsetField(frame, "offset"));
    AIRLOCK_ASSIGN_OR_RETURN(std::string data, BytesField(frame, "data"));
    auto last = frame.find("last");
    if (last == frame.end() || !last->is_boolean()) return InvalidArgument("\"last\" must be a boolean");
    v1::SessionImport* in = m.mutable_session_import();
    in->set_session_json(Dump(session));
    in->set_offset(offset);
    in->set_data(std::move(data));
    in->set_last(last->get<bool>());
  } else {
    return InvalidArgument("unknown gateway frame type \"" + type + "\"");
  }
  return m;
}

StatusOr<Json> FrameFromGatewayMessage(const v1::GatewayMessage& m) {
  Json out = {{"id", m.id()}};
  switch (m.kind_case()) {
    case v1::GatewayMessage::kRun: {
      AIRLOCK_ASSIGN_OR_RETURN(Json request, ParseEmbedded(m.run().request_json(), "run.request_json"));
      out["type"] = "run";
      out["request"] = std::move(request);
      break;
    }
    case v1::GatewayMessage::kCancel:
      out["type"] = "cancel";
      break;
    case v1::GatewayMessage::kLanguages:
      out["type"] = "languages";
      break;
    case v1::GatewayMessage::kPing:
      out["type"] = "ping";
      break;
    case v1::GatewayMessage::kHealth:
      out["type"] = "health";
      break;
    case v1::GatewayMessage::kDrained:
      out["type"] = "drained";
      break;
    case v1::GatewayMessage::kBridgeReply:
      out["type"] = "bridge_reply";
      out["frame"] = m.bridge_reply().frame();
      break;
    case v1::GatewayMessage::kSessionOpen: {
      AIRLOCK_ASSIGN_OR_RETURN(Json session, ParseEmbedded(m.session_open().session_json(), "session_json"));
      out["type"] = "session_open";
      out["session"] = std::move(session);
      break;
    }
    case v1::GatewayMessage::kSessionClose:
      out["type"] = "session_close";
      out["session_id"] = m.session_close().session_id();
      break;
    case v1::GatewayMessage::kSessionPause:
      out["type"] = "session_pause";
      out["session_id"] = m.session_pause().session_id();
      break;
    case v1::GatewayMessage::kSessionResume:
      out["type"] = "session_resume";
      out["session_id"] = m.session_resume().session_id();
      break;
    case v1::GatewayMessage::kSessionFork: {
      AIRLOCK_ASSIGN_OR_RETURN(Json session, ParseEmbedded(m.session_fork().session_json(), "session_json"));
      out["type"] = "session_fork";
      out["session_id"] = m.session_fork().session_id();
      out["session"] = std::move(session);
      break;
    }
    case v1::GatewayMessage::kSessionExport:
      out["type"] = "session_export";
      out["session_id"] = m.session_export().session_id();
      out["offset"] = m.session_export().offset();
      break;
    case v1::GatewayMessage::kSessionImport: {
      AIRLOCK_ASSIGN_OR_RETURN(Json session, ParseEmbedded(m.session_import().session_json(), "session_json"));
      out["type"] = "session_import";
      out["session"] = std::move(session);
      out["offset"] = m.session_import().offset();
      out["data"] = Base64Encode(m.session_import().data());
      out["last"] = m.session_import().last();
      break;
    }
    case v1::GatewayMessage::KIND_NOT_SET:
      return InvalidArgument("a gateway message without a kind");
  }
  return out;
}

StatusOr<v1::RunnerMessage> RunnerMessageFromFrame(const Json& frame) {
  std::string type;
  uint64_t id = 0;
  AIRLOCK_RETURN_IF_ERROR(Header(frame, &type, &id, /*id_required=*/false));
  if (type != "hello" && !(frame.contains("id") && IsId(frame["id"]))) {
    return InvalidArgument("a \"" + type + "\" frame needs a non-negative integer \"id\"");
  }
  v1::RunnerMessage m;
  m.set_id(id);
  if (type == "hello") {
    auto pid = frame.find("pid");
    m.mutable_hello()->set_pid(pid != frame.end() && pid->is_number_integer() ? pid->get<int64_t>() : 0);
    m.mutable_hello()->set_version(frame.value("version", std::string()));
  } else if (type == "progress") {
    AIRLOCK_ASSIGN_OR_RETURN(std::string phase, StringField(frame, "phase"));
    m.mutable_progress()->set_phase(std::move(phase));
  } else if (type == "result") {
    AIRLOCK_ASSIGN_OR_RETURN(Json result, ObjectField(frame, "result"));
    m.mutable_result()->set_result_json(Dump(result));
  } else if (type == "languages") {
    auto list = frame.find("languages");
    if (list == frame.end() || !list->is_array()) return InvalidArgument("\"languages\" must be an array");
    for (const Json& l : *list) m.mutable_languages()->add_language_json(Dump(l));
  } else if (type == "pong") {
    m.mutable_pong();
  } else if (type == "health") {
    AIRLOCK_ASSIGN_OR_RETURN(Json health, ObjectField(frame, "health"));
    m.mutable_health()->set_health_json(Dump(health));
  } else if (type == "bridge") {
    AIRLOCK_ASSIGN_OR_RETURN(std::string f, StringField(frame, "frame"));
    m.mutable_bridge()->set_frame(std::move(f));
  } else if (type == "bridge_error") {
    m.mutable_bridge_error()->set_message(frame.value("message", std::string("the bridge failed")));
  } else if (type == "session") {
    auto ok = frame.find("ok");
    if (ok == frame.end() || !ok->is_boolean()) return InvalidArgument("\"ok\" must be a boolean");
    m.mutable_session()->set_ok(ok->get<bool>());
    m.mutable_session()->set_code(frame.value("code", std::string()));
    m.mutable_session()->set_message(frame.value("message", std::string()));
    if (auto chunk = frame.find("chunk"); chunk != frame.end()) {
      if (!chunk->is_object()) return InvalidArgument("\"chunk\" must be an object");
      AIRLOCK_ASSIGN_OR_RETURN(std::string data, BytesField(*chunk, "data"));
      AIRLOCK_ASSIGN_OR_RETURN(uint64_t size, OffsetField(*chunk, "size"));
      v1::SessionChunk* c = m.mutable_session()->mutable_chunk();
      if (auto spec = chunk->find("session"); spec != chunk->end()) {
        if (!spec->is_object()) return InvalidArgument("\"chunk.session\" must be an object");
        c->set_session_json(Dump(*spec));
      }
      c->set_data(std::move(data));
      c->set_size(size);
    }
  } else if (type == "draining") {
    auto list = frame.find("sessions");
    if (list == frame.end() || !list->is_array()) return InvalidArgument("\"sessions\" must be an array");
    for (const Json& s : *list) {
      if (!s.is_string()) return InvalidArgument("\"sessions\" must list strings");
      m.mutable_draining()->add_session_ids(s.get<std::string>());
    }
  } else {
    return InvalidArgument("unknown runner frame type \"" + type + "\"");
  }
  return m;
}

StatusOr<Json> FrameFromRunnerMessage(const v1::RunnerMessage& m) {
  Json out = {{"id", m.id()}};
  switch (m.kind_case()) {
    case v1::RunnerMessage::kHello:
      out = {{"type", "hello"}, {"pid", m.hello().pid()}, {"version", m.hello().version()}};
      break;
    case v1::RunnerMessage::kProgress:
      out["type"] = "progress";
      out["phase"] = m.progress().phase();
      break;
    case v1::RunnerMessage::kResult: {
      AIRLOCK_ASSIGN_OR_RETURN(Json result, ParseEmbedded(m.result().result_json(), "result_json"));
      out["type"] = "result";
      out["result"] = std::move(result);
      break;
    }
    case v1::RunnerMessage::kLanguages: {
      Json list = Json::array();
      for (const std::string& l : m.languages().language_json()) {
        AIRLOCK_ASSIGN_OR_RETURN(Json info, ParseEmbedded(l, "language_json"));
        list.push_back(std::move(info));
      }
      out["type"] = "languages";
      out["languages"] = std::move(list);
      break;
    }
    case v1::RunnerMessage::kPong:
      out["type"] = "pong";
      break;
    case v1::RunnerMessage::kHealth: {
      AIRLOCK_ASSIGN_OR_RETURN(Json health, ParseEmbedded(m.health().health_json(), "health_json"));
      out["type"] = "health";
      out["health"] = std::move(health);
      break;
    }
    case v1::RunnerMessage::kBridge:
      out["type"] = "bridge";
      out["frame"] = m.bridge().frame();
      break;
    case v1::RunnerMessage::kBridgeError:
      out["type"] = "bridge_error";
      out["message"] = m.bridge_error().message();
      break;
    case v1::RunnerMessage::kSession:
      out["type"] = "session";
      out["ok"] = m.session().ok();
      if (!m.session().ok()) {
        out["code"] = m.session().code();
        out["message"] = m.session().message();
      }
      if (m.session().has_chunk()) {
        const v1::SessionChunk& c = m.session().chunk();
        Json chunk = {{"data", Base64Encode(c.data())}, {"size", c.size()}};
        if (!c.session_json().empty()) {
          AIRLOCK_ASSIGN_OR_RETURN(Json spec, ParseEmbedded(c.session_json(), "chunk.session_json"));
          chunk["session"] = std::move(spec);
        }
        out["chunk"] = std::move(chunk);
      }
      break;
    case v1::RunnerMessage::kDraining: {
      Json list = Json::array();
      for (const std::string& s : m.draining().session_ids()) list.push_back(s);
      out["type"] = "draining";
      out["sessions"] = std::move(list);
      break;
    }
    case v1::RunnerMessage::KIND_NOT_SET:
      return InvalidArgument("a runner message without a kind");
  }
  return out;
}

}  // namespace airlock::remote
