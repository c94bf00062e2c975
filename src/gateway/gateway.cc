#include "gateway/gateway.h"

#include <algorithm>
#include <iostream>
#include <thread>

#include "base/encoding.h"
#include "base/json_depth.h"
#include "gateway/jsonrpc_client.h"
#include "gateway/tool_search.h"
#include "gateway/ts_signature.h"

namespace airlock::gateway {
namespace {

using nlohmann::json;

}  // namespace

bool EffectiveReadOnly(const ConnectorConfig& config, const std::string& tool, const json& annotations) {
  if (config.read_only_tools.count(tool)) return true;
  if (!config.trusted) return false;
  if (!annotations.is_object() || !annotations.contains("readOnlyHint")) return false;
  const json& hint = annotations["readOnlyHint"];
  return hint.is_boolean() && hint.get<bool>();  // === true: not "true", not 1
}

json NormalizeToolResult(const json& result, bool* is_error) {
  *is_error = result.is_object() && result.value("isError", false) == true;
  std::string text;
  bool has_text = false;
  json content = result.is_object() && result.contains("content") && result["content"].is_array()
                     ? result["content"]
                     : json::array();
  for (const json& item : content) {
    if (item.is_object() && item.value("type", "") == "text" && item.contains("text") && item["text"].is_string()) {
      if (has_text) text += "\n";
      text += item["text"].get<std::string>();
      has_text = true;
    }
  }
  if (*is_error) return has_text ? text : std::string("the tool reported an error");
  if (result.is_object() && result.contains("structuredContent") && !result["structuredContent"].is_null()) {
    return result["structuredContent"];
  }
  if (has_text) {
    json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
    // JSON nested deeper than any message may be (jsonrpc_client.h) stays
    // the text it came as: code that serializes values recurses per level.
    if (!parsed.is_discarded() && !JsonDeeperThan(parsed, McpClient::kMaxMessageDepth)) return parsed;
    return text;
  }
  // Only non-text content (images, resources): hand over the blocks as they are.
  return content.empty() ? json() : content;
}

const char* BridgeErrorCode(const Status& status) {
  switch (status.code()) {
    case StatusCode::kCancelled:
      return kErrCancelled;
    case StatusCode::kNotFound:
      return kErrToolNotDeclared;
    case StatusCode::kInvalidArgument:
      return kErrInvalidArgs;
    default:
      return kErrToolError;
  }
}

json SearchResult::ToJson() const {
  json list = json::array();
  for (const SearchHit& h : tools) {
    list.push_back({{"name", h.name}, {"summary", h.summary}, {"read_only", h.read_only}});
  }
  return {{"tools", std::move(list)}, {"truncated", truncated}};
}

json ToolDescription::ToJson() const {
  return {{"name", name},           {"description", description}, {"input_schema", input_schema},
          {"signature", signature}, {"read_only", read_only}};
}

json CallOutcome::ToBridgeReply(const json& id) const {
  if (ok) return {{"id", id}, {"ok", true}, {"result", value}};
  return {{"id", id}, {"ok", false}, {"error", {{"code", error_code}, {"message", error_message}}}};
}

StatusOr<std::unique_ptr<Gateway>> Gateway::Create(const json& mcp_servers, GatewayOptions options) {
  AIRLOCK_ASSIGN_OR_RETURN(std::vector<ConnectorConfig> configs, ParseMcpServers(mcp_servers));
  return std::make_unique<Gateway>(std::move(configs), std::move(options));
}

Gateway::Gateway(std::vector<ConnectorConfig> configs, GatewayOptions options) : options_(std::move(options)) {
  if (!options_.connector.log && options_.log) options_.connector.log = options_.log;
  for (ConnectorConfig& c : configs) {
    if (!c.enabled) continue;
    std::string name = c.name;
    connectors_[name] = std::make_unique<Connector>(std::move(c), options_.connector);
  }
}

Gateway::~Gateway() = default;

void Gateway::Warn(const std::string& line) {
  if (options_.log) {
    options_.log(line);
  } else {
    std::cerr << "airlock gateway: " << line << "\n";
  }
}

std::map<std::string, Status> Gateway::ConnectAll(std::chrono::milliseconds timeout, CancelToken* cancel) {
  std::map<std::string, Status> out;
  std::vector<std::thread> threads;
  std::mutex mu;
  for (auto& [name, connector] : connectors_) {
    Connector* c = connector.get();
    threads.emplace_back([&, c] {
      Status st = c->Connect(cancel, timeout);
      std::lock_guard<std::mutex> lock(mu);
      out[c->name()] = st;
    });
  }
  for (std::thread& t : threads) t.join();
  return out;
}

std::vector<ToolEntry> Gateway::EntriesOf(Connector& connector) {
  std::vector<ToolEntry> entries;
  auto tools = connector.Tools(options_.list_timeout);
  if (!tools.ok()) return entries;
  for (const ToolInfo& t : **tools) {
    ToolEntry e;
    e.connector = connector.name();
    e.tool = t.name;
    e.name = connector.name() + "." + t.name;
    if (e.name.size() > kMaxQualifiedNameBytes) {
      std::lock_guard<std::mutex> lock(warn_mu_);
      if (warned_.insert(e.name).second) {
        Warn("skipping tool \"" + SanitizeUtf8(TruncateUtf8(e.name, 200)) + "\": qualified name longer than " +
             std::to_string(kMaxQualifiedNameBytes) + " bytes");
      }
      continue;
    }
    e.title = t.title;
    e.description = t.description;
    e.input_schema = t.input_schema;
    e.output_schema = t.output_schema;
    e.annotations = t.annotations;
    e.read_only = EffectiveReadOnly(connector.config(), t.name, t.annotations);
    entries.push_back(std::move(e));
  }
  return entries;
}

std::vector<Gateway::Unavailable> Gateway::UnavailableConnectors(const std::set<std::string>* connectors) const {
  std::vector<Unavailable> down;
  for (const auto& [name, connector] : connectors_) {
    if (connectors != nullptr && connectors->count(name) == 0) continue;
    const nlohmann::json h = connector->Health();
    const std::string error = h.value("error", std::string());
    if (!h.value("connected", false) && !error.empty()) down.push_back({name, error});
  }
  return down;
}

bool Gateway::AllConnected() const {
  for (const auto& [name, connector] : connectors_) {
    if (!connector->connected()) return false;
  }
  return true;
}

nlohmann::json Gateway::ToJson(const std::vector<Unavailable>& down) {
  nlohmann::json list = nlohmann::json::array();
  for (const Unavailable& u : down) list.push_back({{"connector", u.connector}, {"error", u.error}});
  return list;
}

std::string Gateway::Describe(const std::vector<Unavailable>& down) {
  std::string text = down.size() == 1 ? "connector unavailable: " : "connectors unavailable: ";
  for (size_t i = 0; i < down.size(); ++i) {
    text += (i ? "; " : "") + down[i].connector + " (" + down[i].error + ")";
  }
  return text;
}

std::vector<ToolEntry> Gateway::ListTools(const ToolFilter& filter, const std::set<std::string>* connectors) {
  std::vector<ToolEntry> all;
  for (auto& [name, connector] : connectors_) {
    if (connectors != nullptr && connectors->count(name) == 0) continue;
    for (ToolEntry& e : EntriesOf(*connector)) {
      if (filter && !filter(e)) continue;
      all.push_back(std::move(e));
    }
  }
  std::sort(all.begin(), all.end(), [](const ToolEntry& a, const ToolEntry& b) { return a.name < b.name; });
  return all;
}

SearchResult Gateway::Search(std::string_view query, int limit, const ToolFilter& filter,
                             const std::set<std::string>* connectors) {
  limit = std::clamp(limit, 1, kMaxSearchLimit);
  const std::vector<std::string> terms = Tokenize(query);
  std::vector<SearchHit> hits;
  for (const ToolEntry& e : ListTools(filter, connectors)) {
    SearchDocument doc{e.name, e.tool, e.description, ParameterNames(e.input_schema)};
    const double score = ScoreTool(terms, query, doc);
    if (score <= 0) continue;
    hits.push_back({e.name, OneLineSummary(e.description.empty() ? e.title : e.description), e.read_only, score});
  }
  std::sort(hits.begin(), hits.end(), [](const SearchHit& a, const SearchHit& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.name < b.name;
  });
  SearchResult result;
  result.truncated = hits.size() > static_cast<size_t>(limit);
  if (result.truncated) hits.resize(static_cast<size_t>(limit));
  result.tools = std::move(hits);
  return result;
}

StatusOr<ToolEntry> Gateway::FindTool(const std::string& name, const ToolFilter& filter) {
  const size_t dot = name.find('.');
  if (dot == std::string::npos || name.size() > kMaxQualifiedNameBytes) {
    return NotFound("unknown tool \"" + SanitizeUtf8(TruncateUtf8(name, 100)) + "\"");
  }
  Connector* c = connector(name.substr(0, dot));
  if (c != nullptr) {
    for (ToolEntry& e : EntriesOf(*c)) {
      if (e.name != name) continue;
      if (filter && !filter(e)) break;
      return std::move(e);
    }
  }
  return NotFound("unknown tool \"" + SanitizeUtf8(TruncateUtf8(name, 100)) + "\"");
}

StatusOr<ToolDescription> Gateway::Describe(const std::string& name, const ToolFilter& filter) {
  AIRLOCK_ASSIGN_OR_RETURN(ToolEntry e, FindTool(name, filter));
  ToolDescription d;
  d.name = e.name;
  d.description = e.description;
  d.input_schema = e.input_schema;
  d.output_schema = e.output_schema;
  d.signature = ToolSignature(e.name, e.description, e.input_schema, e.output_schema);
  d.read_only = e.read_only;
  return d;
}

CallOutcome Gateway::CallTool(const std::string& name, const json& args, CancelToken* cancel,
                              std::chrono::milliseconds timeout, const ToolFilter& filter) {
  CallOutcome out;
  auto fail = [&out](Status st) {
    out.ok = false;
    out.error_code = BridgeErrorCode(st);
    out.error_message = st.message();
    out.status = std::move(st);
    return out;
  };
  if (!args.is_null() && !args.is_object()) return fail(InvalidArgument(name + ": args must be an object"));
  StatusOr<ToolEntry> entry = FindTool(name, filter);
  if (!entry.ok()) return fail(entry.status());
  Connector* c = connector(entry->connector);
  StatusOr<ToolCallResult> result = c->CallTool(entry->tool, args.is_null() ? json::object() : args, cancel, timeout);
  if (!result.ok()) {
    Status st = result.status();
    // A downstream "unknown tool" / bad params is the tool's error, not ours.
    if (st.code() == StatusCode::kNotFound || st.code() == StatusCode::kInvalidArgument) {
      st = Status(StatusCode::kInternal, st.message());
    }
    return fail(st);
  }
  bool is_error = false;
  json value = NormalizeToolResult(result->raw, &is_error);
  if (is_error) {
    out.ok = false;
    out.error_code = kErrToolError;
    out.error_message = value.is_string() ? value.get<std::string>() : value.dump();
    return out;
  }
  out.ok = true;
  out.value = std::move(value);
  return out;
}

std::vector<std::string> Gateway::connector_names() const {
  std::vector<std::string> names;
  for (const auto& [name, c] : connectors_) names.push_back(name);
  return names;
}

Connector* Gateway::connector(const std::string& name) const {
  auto it = connectors_.find(name);
  return it == connectors_.end() ? nullptr : it->second.get();
}

}  // namespace airlock::gateway
