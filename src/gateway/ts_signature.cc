#include "gateway/ts_signature.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace airlock::gateway {
namespace {

using nlohmann::json;

constexpr int kMaxDepth = 8;
constexpr size_t kMaxInlineWidth = 100;

class Renderer {
 public:
  explicit Renderer(const json& root) : root_(root) {}

  std::string Type(const json& schema, int indent, int depth) const {
    if (depth > kMaxDepth) return "unknown";
    if (schema.is_boolean()) return schema.get<bool>() ? "unknown" : "never";
    if (!schema.is_object()) return "unknown";
    std::string t = TypeNoNull(schema, indent, depth);
    if (schema.value("nullable", false) == true && t != "unknown") t = Union({t, "null"});
    return t;
  }

 private:
  std::string TypeNoNull(const json& s, int indent, int depth) const {
    if (s.contains("$ref") && s["$ref"].is_string()) {
      const json* target = Resolve(s["$ref"].get<std::string>());
      return target != nullptr ? Type(*target, indent, depth + 1) : "unknown";
    }
    if (s.contains("const")) return Literal(s["const"]);
    if (s.contains("enum") && s["enum"].is_array() && !s["enum"].empty()) {
      std::vector<std::string> parts;
      for (const json& v : s["enum"]) parts.push_back(Literal(v));
      return Union(parts);
    }
    for (const char* key : {"anyOf", "oneOf"}) {
      if (s.contains(key) && s[key].is_array() && !s[key].empty()) {
        std::vector<std::string> parts;
        for (const json& sub : s[key]) parts.push_back(Type(sub, indent, depth + 1));
        return Union(parts);
      }
    }
    if (s.contains("allOf") && s["allOf"].is_array() && !s["allOf"].empty()) {
      std::string out;
      for (const json& sub : s["allOf"]) {
        if (!out.empty()) out += " & ";
        out += Wrap(Type(sub, indent, depth + 1));
      }
      return out;
    }
    if (s.contains("type") && s["type"].is_array()) {
      std::vector<std::string> parts;
      for (const json& t : s["type"]) {
        if (!t.is_string()) continue;
        json copy = s;
        copy["type"] = t;
        parts.push_back(TypeNoNull(copy, indent, depth));
      }
      return parts.empty() ? "unknown" : Union(parts);
    }
    std::string type = s.contains("type") && s["type"].is_string() ? s["type"].get<std::string>() : "";
    if (type.empty()) {
      if (s.contains("properties")) type = "object";
      else if (s.contains("items")) type = "array";
    }
    if (type == "string") return "string";
    if (type == "number" || type == "integer") return "number";
    if (type == "boolean") return "boolean";
    if (type == "null") return "null";
    if (type == "array") return Array(s, indent, depth);
    if (type == "object") return Object(s, indent, depth);
    return "unknown";
  }

  std::string Array(const json& s, int indent, int depth) const {
    const json* tuple = nullptr;
    if (s.contains("prefixItems") && s["prefixItems"].is_array()) tuple = &s["prefixItems"];
    if (s.contains("items") && s["items"].is_array()) tuple = &s["items"];
    if (tuple != nullptr) {
      std::string out = "[";
      for (size_t i = 0; i < tuple->size(); ++i) {
        if (i > 0) out += ", ";
        out += Type((*tuple)[i], indent, depth + 1);
      }
      return out + "]";
    }
    if (!s.contains("items")) return "unknown[]";
    return Wrap(Type(s["items"], indent, depth + 1)) + "[]";
  }

  std::string Object(const json& s, int indent, int depth) const {
    const bool has_props = s.contains("properties") && s["properties"].is_object() && !s["properties"].empty();
    if (!has_props) {
      if (s.contains("additionalProperties") && s["additionalProperties"].is_object()) {
        return "Record<string, " + Type(s["additionalProperties"], indent, depth + 1) + ">";
      }
      return s.value("additionalProperties", true) == false ? "{}" : "Record<string, unknown>";
    }
    std::vector<std::string> required;
    if (s.contains("required") && s["required"].is_array()) {
      for (const json& r : s["required"]) {
        if (r.is_string()) required.push_back(r.get<std::string>());
      }
    }
    struct Field {
      std::string key, type, doc;
      bool optional;
    };
    std::vector<Field> fields;
    bool multiline = false;
    for (const auto& [key, sub] : s["properties"].items()) {
      Field f;
      f.key = Key(key);
      f.type = Type(sub, indent + 1, depth + 1);
      f.optional = std::find(required.begin(), required.end(), key) == required.end();
      if (sub.is_object() && sub.contains("description") && sub["description"].is_string()) {
        f.doc = sub["description"].get<std::string>();
      }
      if (!f.doc.empty() || f.type.find('\n') != std::string::npos) multiline = true;
      fields.push_back(std::move(f));
    }
    // nlohmann::json keeps keys sorted (the server's order is lost): show
    // required properties first, each group in name order.
    std::stable_partition(fields.begin(), fields.end(), [](const Field& f) { return !f.optional; });
    std::string extra;
    if (s.contains("additionalProperties") && s["additionalProperties"].is_object()) {
      extra = "[key: string]: " + Type(s["additionalProperties"], indent + 1, depth + 1) + ";";
    }
    if (!multiline) {
      std::string out = "{ ";
      for (const Field& f : fields) out += f.key + (f.optional ? "?: " : ": ") + f.type + "; ";
      if (!extra.empty()) out += extra + " ";
      out = out.substr(0, out.size() - 2) + " }";
      if (out.size() <= kMaxInlineWidth) return out;
    }
    const std::string pad(static_cast<size_t>(indent + 1) * 2, ' ');
    std::string out = "{\n";
    for (const Field& f : fields) {
      if (!f.doc.empty()) out += pad + "/** " + Doc(f.doc, pad) + " */\n";
      out += pad + f.key + (f.optional ? "?: " : ": ") + f.type + ";\n";
    }
    if (!extra.empty()) out += pad + extra + "\n";
    return out + std::string(static_cast<size_t>(indent) * 2, ' ') + "}";
  }

  const json* Resolve(const std::string& ref) const {
    for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
      const std::string p = prefix;
      if (ref.rfind(p, 0) != 0) continue;
      const std::string section = p.substr(2, p.size() - 3);
      const std::string name = ref.substr(p.size());
      if (root_.is_object() && root_.contains(section) && root_[section].is_object() &&
          root_[section].contains(name)) {
        return &root_[section][name];
      }
    }
    if (ref == "#") return &root_;
    return nullptr;
  }

  static std::string Literal(const json& v) {
    if (v.is_string() || v.is_number() || v.is_boolean() || v.is_null()) return v.dump();
    return "unknown";
  }

  static std::string Union(const std::vector<std::string>& parts) {
    std::vector<std::string> unique;
    for (const std::string& p : parts) {
      if (std::find(unique.begin(), unique.end(), p) == unique.end()) unique.push_back(p);
    }
    std::string out;
    for (const std::string& p : unique) {
      if (!out.empty()) out += " | ";
      out += p;
    }
    return out;
  }

  // Parenthesizes unions/intersections before [] or &.
  static std::string Wrap(const std::string& t) {
    if (t.find(" | ") != std::string::npos || t.find(" & ") != std::string::npos) {
      if (t.front() != '{' || t.find('\n') == std::string::npos) return "(" + t + ")";
    }
    return t;
  }

  static std::string Key(const std::string& key) {
    bool ident = !key.empty() && !std::isdigit(static_cast<unsigned char>(key[0]));
    for (unsigned char c : key) {
      if (!std::isalnum(c) && c != '_' && c != '$') ident = false;
    }
    return ident ? key : json(key).dump();
  }

  const json& root_;

 public:
  // A description as JSDoc text: "*/" defused, lines continued with `pad * `.
  static std::string Doc(const std::string& text, const std::string& pad) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '*' && i + 1 < text.size() && text[i + 1] == '/') {
        out += "*\\/";
        ++i;
      } else if (text[i] == '\n') {
        out += "\n" + pad + " * ";
      } else if (text[i] != '\r') {
        out += text[i];
      }
    }
    return out;
  }
};

}  // namespace

std::string SchemaToTypeScript(const json& schema, int indent) {
  return Renderer(schema).Type(schema, indent, 0);
}

std::string ToolSignature(const std::string& name, const std::string& description, const json& input_schema,
                          const json& output_schema) {
  std::string out;
  if (!description.empty()) out += "/**\n * " + Renderer::Doc(description, "") + "\n */\n";
  bool any_required = input_schema.is_object() && input_schema.contains("required") &&
                      input_schema["required"].is_array() && !input_schema["required"].empty();
  std::string args = input_schema.is_object() ? SchemaToTypeScript(input_schema, 0) : "Record<string, unknown>";
  if (args == "Record<string, unknown>" && input_schema.is_object() && !input_schema.contains("properties")) {
    args = "{}";
  }
  std::string ret = output_schema.is_object() ? SchemaToTypeScript(output_schema, 0) : "unknown";
  out += "function " + json(name).dump() + "(args" + (any_required ? "" : "?") + ": " + args + "): Promise<" +
         ret + ">";
  return out;
}

}  // namespace airlock::gateway
