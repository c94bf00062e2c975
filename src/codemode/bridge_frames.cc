#include "codemode/bridge_frames.h"

#include "base/encoding.h"

namespace airlock::codemode {
namespace {

using nlohmann::json;

// Parses `text`, discarding (and flagging) anything nested deeper than
// kMaxFrameDepth, so that neither the parse result nor a later dump() can
// recurse deeply. Never throws.
json ParseShallow(std::string_view text, bool* too_deep) {
  json::parser_callback_t cb = [too_deep](int depth, json::parse_event_t, json&) {
    if (depth > kMaxFrameDepth) {
      *too_deep = true;
      return false;
    }
    return true;
  };
  return json::parse(text.begin(), text.end(), cb, /*allow_exceptions=*/false);
}

bool IsRequestOp(const std::string& op) { return op == "search" || op == "describe" || op == "call"; }

}  // namespace

ParsedFrame ParseFrame(std::string_view text) {
  ParsedFrame out;
  const bool utf8 = IsValidUtf8(text);
  bool too_deep = false;
  // A frame with bad UTF-8 is refused, but its id (if any) is still read so
  // the program gets an answer instead of waiting for one.
  json j = utf8 ? ParseShallow(text, &too_deep) : ParseShallow(SanitizeUtf8(text), &too_deep);
  if (j.is_object()) {
    auto id = j.find("id");
    if (id != j.end() && id->is_number_integer()) out.id = *id;
  }
  auto op = j.is_object() ? j.find("op") : j.end();
  if (j.is_discarded()) {
    out.problem = "the frame is not valid JSON";
  } else if (!utf8) {
    out.problem = "the frame is not valid UTF-8";
  } else if (too_deep) {
    out.problem = "the frame nests deeper than " + std::to_string(kMaxFrameDepth) + " levels";
  } else if (!j.is_object()) {
    out.problem = "the frame is not a JSON object";
  } else if (op == j.end() || !op->is_string()) {
    out.problem = "the frame has no \"op\" string";
  } else if (std::string name = op->get<std::string>(); IsRequestOp(name)) {
    if (out.id.is_null()) {
      out.problem = "a \"" + name + "\" request needs an integer \"id\"";
    } else {
      out.op = std::move(name);
    }
  } else if (name == "result" || name == "result_error") {
    out.op = std::move(name);
  } else {
    out.problem = "unknown op \"" + Truncated(name, 40) + "\"";
  }
  if (out.problem.empty()) out.frame = std::move(j);
  return out;
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json ErrorReply(const json& id, const std::string& code, const std::string& message) {
  return {{"id", id}, {"ok", false}, {"error", {{"code", code}, {"message", message}}}};
}

json OkReply(const json& id, json result) { return {{"id", id}, {"ok", true}, {"result", std::move(result)}}; }

json NormalizeProgramError(const json& error) {
  if (!error.is_object()) return {{"name", "Error"}, {"message", Dump(error)}};
  auto text = [&error](const char* key, const char* fallback) -> std::string {
    auto it = error.find(key);
    if (it == error.end() || it->is_null()) return fallback;
    return it->is_string() ? it->get<std::string>() : Dump(*it);
  };
  json out = {{"name", text("name", "Error")}, {"message", text("message", "")}};
  if (auto it = error.find("stack"); it != error.end() && it->is_string()) out["stack"] = *it;
  // An uncaught ToolError's code (the program could forge it; it only
  // labels the program's own failure, never a call's audit record).
  if (auto it = error.find("code"); it != error.end() && it->is_string() && it->get_ref<const std::string&>().size() <= 64) {
    out["code"] = *it;
  }
  return out;
}

std::string Truncated(std::string_view s, size_t max_bytes) { return std::string(TruncateUtf8(s, max_bytes)); }

}  // namespace airlock::codemode
