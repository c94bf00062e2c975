#include "gateway/schema_validator.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace airlock::gateway {
namespace {

using nlohmann::json;

constexpr int kMaxValueDepth = 128;     // enum/const/uniqueItems comparisons
constexpr size_t kMaxListedValues = 8;  // in "must be one of ..." messages
constexpr size_t kMaxQuotedChars = 40;

// One step of the JSON pointer to the value being validated: a linked list on
// the validator's stack, turned into a string only when something fails.
struct Path {
  const Path* parent = nullptr;
  std::string_view key;
  size_t index = 0;
  bool is_index = false;
};

std::string PointerOf(const Path* p) {
  std::vector<const Path*> chain;
  for (; p != nullptr; p = p->parent) chain.push_back(p);
  if (chain.empty()) return "/";
  std::string out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    out += '/';
    if ((*it)->is_index) {
      out += std::to_string((*it)->index);
      continue;
    }
    for (char c : (*it)->key) {
      if (c == '~') out += "~0";
      else if (c == '/') out += "~1";
      else out += c;
    }
  }
  return out;
}

size_t PathDepth(const Path* p) {
  size_t n = 0;
  for (; p != nullptr; p = p->parent) ++n;
  return n;
}

// A compact, never-throwing rendering of a value for messages.
std::string Quote(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() <= kMaxQuotedChars) return s;
  size_t cut = kMaxQuotedChars - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // whole code points
  return s.substr(0, cut) + "...";
}

// ---- numbers: exact for integers (also integral floats), double otherwise ----

struct Integer {
  bool negative;
  uint64_t magnitude;
};

std::optional<Integer> AsInteger(const json& v) {
  if (v.is_number_unsigned()) return Integer{false, v.get<uint64_t>()};
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    if (i < 0) return Integer{true, 0 - static_cast<uint64_t>(i)};
    return Integer{false, static_cast<uint64_t>(i)};
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (!std::isfinite(d) || std::trunc(d) != d || std::fabs(d) >= 18446744073709551616.0) return std::nullopt;
    uint64_t m = static_cast<uint64_t>(std::fabs(d));
    return Integer{d < 0 && m != 0, m};
  }
  return std::nullopt;
}

bool IsIntegral(const json& v) {
  if (v.is_number_integer()) return true;  // signed and unsigned
  if (!v.is_number_float()) return false;
  double d = v.get<double>();
  return std::isfinite(d) && std::trunc(d) == d;
}

// -1, 0 or 1; both must be numbers.
int CompareNumbers(const json& a, const json& b) {
  std::optional<Integer> ia = AsInteger(a), ib = AsInteger(b);
  if (ia && ib) {
    if (ia->negative != ib->negative) return ia->negative ? -1 : 1;
    if (ia->magnitude == ib->magnitude) return 0;
    bool less = ia->magnitude < ib->magnitude;
    return (less != ia->negative) ? -1 : 1;
  }
  double x = a.get<double>(), y = b.get<double>();
  return x < y ? -1 : (x > y ? 1 : 0);
}

bool NumbersEqual(const json& a, const json& b) {
  std::optional<Integer> ia = AsInteger(a), ib = AsInteger(b);
  if (ia && ib) return ia->negative == ib->negative && ia->magnitude == ib->magnitude;
  if (ia || ib) return false;
  return a.get<double>() == b.get<double>();
}

// A non-negative integer keyword value (minLength, maxItems, ...), if it is one.
std::optional<uint64_t> Count(const json* value) {
  if (value == nullptr) return std::nullopt;
  std::optional<Integer> i = AsInteger(*value);
  if (!i || i->negative) return std::nullopt;
  return i->magnitude;
}

// The keywords the validator reads. A schema's keys are scanned once per
// application (one table lookup per key) instead of ~30 map lookups.
enum Kw : uint8_t {
  kRef, kAdditionalItems, kAdditionalProperties, kAllOf, kAnyOf, kConst, kElse, kEnum,
  kExclusiveMaximum, kExclusiveMinimum, kIf, kItems, kMaxItems, kMaxLength, kMaxProperties,
  kMaximum, kMinItems, kMinLength, kMinProperties, kMinimum, kMultipleOf, kNot, kNullable,
  kOneOf, kPatternProperties, kPrefixItems, kProperties, kRequired, kThen, kType, kUniqueItems,
  kKeywordCount,
};

constexpr std::pair<std::string_view, Kw> kKeywordNames[] = {  // sorted by name
    {"$ref", kRef}, {"additionalItems", kAdditionalItems}, {"additionalProperties", kAdditionalProperties},
    {"allOf", kAllOf}, {"anyOf", kAnyOf}, {"const", kConst}, {"else", kElse}, {"enum", kEnum},
    {"exclusiveMaximum", kExclusiveMaximum}, {"exclusiveMinimum", kExclusiveMinimum}, {"if", kIf},
    {"items", kItems}, {"maxItems", kMaxItems}, {"maxLength", kMaxLength}, {"maxProperties", kMaxProperties},
    {"maximum", kMaximum}, {"minItems", kMinItems}, {"minLength", kMinLength},
    {"minProperties", kMinProperties}, {"minimum", kMinimum}, {"multipleOf", kMultipleOf}, {"not", kNot},
    {"nullable", kNullable}, {"oneOf", kOneOf}, {"patternProperties", kPatternProperties},
    {"prefixItems", kPrefixItems}, {"properties", kProperties}, {"required", kRequired}, {"then", kThen},
    {"type", kType}, {"uniqueItems", kUniqueItems},
};
static_assert(std::size(kKeywordNames) == kKeywordCount);
static_assert(std::is_sorted(std::begin(kKeywordNames), std::end(kKeywordNames)));

// The supported keywords present in one schema object.
class Keywords {
 public:
  explicit Keywords(const json& schema) {
    for (auto it = schema.begin(); it != schema.end(); ++it) {
      std::string_view name = it.key();
      auto k = std::lower_bound(std::begin(kKeywordNames), std::end(kKeywordNames), name,
                                [](const auto& entry, std::string_view n) { return entry.first < n; });
      if (k != std::end(kKeywordNames) && k->first == name) at_[k->second] = &*it;
    }
  }
  const json* operator[](Kw k) const { return at_[k]; }

 private:
  std::array<const json*, kKeywordCount> at_{};
};

const char* TypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "number";
    default: return "unknown";
  }
}

// Unknown type names match anything (see the header).
bool HasType(const json& v, std::string_view t) {
  if (t == "null") return v.is_null();
  if (t == "boolean") return v.is_boolean();
  if (t == "string") return v.is_string();
  if (t == "array") return v.is_array();
  if (t == "object") return v.is_object();
  if (t == "number") return v.is_number();
  if (t == "integer") return IsIntegral(v);
  return true;
}

size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// ---- $ref fragments ----

std::optional<std::string> PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::optional<std::string> UnescapeToken(std::string_view t) {
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '~') {
      out += t[i];
      continue;
    }
    if (i + 1 >= t.size() || (t[i + 1] != '0' && t[i + 1] != '1')) return std::nullopt;
    out += t[i + 1] == '0' ? '~' : '/';
    ++i;
  }
  return out;
}

// The target of a local "$ref", or null when it is remote, an anchor or does
// not resolve.
const json* ResolveRef(const json& root, std::string_view ref) {
  if (ref.empty() || ref[0] != '#') return nullptr;
  std::optional<std::string> fragment = PercentDecode(ref.substr(1));
  if (!fragment) return nullptr;
  if (fragment->empty()) return &root;
  if ((*fragment)[0] != '/') return nullptr;
  const json* cur = &root;
  std::string_view rest = std::string_view(*fragment).substr(1);
  while (true) {
    size_t slash = rest.find('/');
    std::optional<std::string> token = UnescapeToken(rest.substr(0, slash));
    if (!token) return nullptr;
    if (cur->is_object()) {
      auto it = cur->find(*token);
      if (it == cur->end()) return nullptr;
      cur = &*it;
    } else if (cur->is_array()) {
      if (token->empty() || token->size() > 9 || (token->size() > 1 && (*token)[0] == '0') ||
          !std::all_of(token->begin(), token->end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return nullptr;
      }
      size_t index = std::stoul(*token);
      if (index >= cur->size()) return nullptr;
      cur = &(*cur)[index];
    } else {
      return nullptr;
    }
    if (slash == std::string_view::npos) return cur;
    rest = rest.substr(slash + 1);
  }
}

// ---- the validator ----

struct Failure {
  std::string message;    // "<pointer>: <what was expected>"
  size_t path_depth = 0;  // how far into the instance; picks the closest anyOf branch
  bool fatal = false;     // a limit, not a mismatch: never inverted by not/anyOf/oneOf/if
  std::string leaf;       // anyOf/oneOf: the innermost closest failure (keeps messages short)
};
using Result = std::optional<Failure>;  // nullopt: valid

enum class Eq { kNo, kYes, kTooDeep };

class Validator {
 public:
  explicit Validator(const json& root) : root_(root) {}

  Result Validate(const json& s, const json& v, const Path* path, int depth) {
    if (++steps_ > kMaxValidationSteps) {
      return Fatal(path, "validation too expensive (more than " + std::to_string(kMaxValidationSteps) +
                             " steps)");
    }
    if (depth > kMaxSchemaDepth) return Fatal(path, "schema too deeply nested");
    if (s.is_boolean()) return s.get<bool>() ? Result() : Fail(path, "no value is allowed here");
    if (!s.is_object()) return std::nullopt;
    steps_ += s.size() / 8;
    const Keywords k(s);
    if (Result r = CheckRef(k, v, path, depth)) return r;
    if (Result r = CheckType(k, v, path)) return r;
    if (Result r = CheckEnumConst(k, v, path)) return r;
    if (v.is_number()) {
      if (Result r = CheckNumber(k, v, path)) return r;
    } else if (v.is_string()) {
      if (Result r = CheckString(k, v, path)) return r;
    } else if (v.is_array()) {
      if (Result r = CheckArray(k, v, path, depth)) return r;
    } else if (v.is_object()) {
      if (Result r = CheckObject(k, v, path, depth)) return r;
    }
    return CheckCombinators(k, v, path, depth);
  }

 private:
  static Failure Fail(const Path* path, const std::string& what) {
    return Failure{PointerOf(path) + ": " + what, PathDepth(path), false, {}};
  }
  static Failure Fatal(const Path* path, const std::string& what) {
    Failure f = Fail(path, what);
    f.fatal = true;
    return f;
  }

  // Nested anyOf/oneOf report only the innermost closest failure, so the
  // message stays short however deep the alternatives nest.
  static Failure NoAlternative(const Path* path, const char* keyword, Failure closest) {
    std::string leaf = closest.leaf.empty() ? std::move(closest.message) : std::move(closest.leaf);
    Failure f = Fail(path, std::string("matches no alternative of ") + keyword + " (closest: " + leaf + ")");
    f.path_depth = closest.path_depth;
    f.leaf = std::move(leaf);
    return f;
  }

  Result CheckRef(const Keywords& k, const json& v, const Path* path, int depth) {
    const json* ref = k[kRef];
    if (ref == nullptr || !ref->is_string()) return std::nullopt;
    auto cached = resolved_.find(ref);
    if (cached == resolved_.end()) {
      cached = resolved_.emplace(ref, ResolveRef(root_, ref->get_ref<const std::string&>())).first;
    }
    const json* target = cached->second;
    if (target == nullptr) return std::nullopt;  // remote or unresolvable: accept (see header)
    std::pair<const json*, const json*> frame(target, &v);
    if (std::find(active_refs_.begin(), active_refs_.end(), frame) != active_refs_.end()) {
      return Fatal(path, "$ref cycle: " + Quote(*ref) + " leads back to itself");
    }
    active_refs_.push_back(frame);
    Result r = Validate(*target, v, path, depth + 1);
    active_refs_.pop_back();
    return r;
  }

  Result CheckType(const Keywords& k, const json& v, const Path* path) {
    const json* type = k[kType];
    if (type == nullptr) return std::nullopt;
    if (v.is_null()) {
      const json* nullable = k[kNullable];
      if (nullable != nullptr && *nullable == true) return std::nullopt;
    }
    std::string expected;
    if (type->is_string()) {
      if (HasType(v, type->get_ref<const std::string&>())) return std::nullopt;
      expected = type->get_ref<const std::string&>();
    } else if (type->is_array()) {
      for (const json& t : *type) {
        if (!t.is_string()) continue;
        if (HasType(v, t.get_ref<const std::string&>())) return std::nullopt;
        expected += (expected.empty() ? "" : " or ") + t.get_ref<const std::string&>();
      }
      if (expected.empty()) return std::nullopt;  // no usable names
    } else {
      return std::nullopt;
    }
    return Fail(path, "expected " + expected + ", got " + TypeName(v));
  }

  Result CheckEnumConst(const Keywords& k, const json& v, const Path* path) {
    if (const json* c = k[kConst]) {
      Eq eq = Equal(v, *c, 0);
      if (eq == Eq::kTooDeep) return Fatal(path, "value nested too deeply to compare");
      if (eq == Eq::kNo) return Fail(path, "must be equal to " + Quote(*c));
    }
    const json* e = k[kEnum];
    if (e == nullptr || !e->is_array()) return std::nullopt;
    for (const json& option : *e) {
      Eq eq = Equal(v, option, 0);
      if (eq == Eq::kYes) return std::nullopt;
      if (eq == Eq::kTooDeep) return Fatal(path, "value nested too deeply to compare");
    }
    std::string list;
    for (size_t i = 0; i < e->size() && i < kMaxListedValues; ++i) list += (i ? ", " : "") + Quote((*e)[i]);
    if (e->size() > kMaxListedValues) list += ", ...";
    return Fail(path, e->empty() ? "no value is allowed here (empty enum)" : "must be one of " + list);
  }

  Result CheckNumber(const Keywords& k, const json& v, const Path* path) {
    // `legacy` is the draft-04 boolean ("exclusiveMinimum": true next to
    // "minimum"); without one, `limit` is the 2020 exclusive number form.
    auto bound = [&](const json* limit, std::optional<Kw> legacy, bool is_min) -> Result {
      if (limit == nullptr || !limit->is_number()) return std::nullopt;
      bool exclusive = !legacy || (k[*legacy] != nullptr && *k[*legacy] == true);
      int c = CompareNumbers(v, *limit);
      bool ok = is_min ? (exclusive ? c > 0 : c >= 0) : (exclusive ? c < 0 : c <= 0);
      if (ok) return std::nullopt;
      const char* op = is_min ? (exclusive ? "> " : ">= ") : (exclusive ? "< " : "<= ");
      return Fail(path, std::string("expected ") + op + Quote(*limit) + ", got " + Quote(v));
    };
    if (Result r = bound(k[kMinimum], kExclusiveMinimum, true)) return r;
    if (Result r = bound(k[kExclusiveMinimum], std::nullopt, true)) return r;
    if (Result r = bound(k[kMaximum], kExclusiveMaximum, false)) return r;
    if (Result r = bound(k[kExclusiveMaximum], std::nullopt, false)) return r;

    const json* m = k[kMultipleOf];
    if (m == nullptr || !m->is_number() || CompareNumbers(*m, json(0)) <= 0) return std::nullopt;
    std::optional<Integer> iv = AsInteger(v), im = AsInteger(*m);
    bool ok;
    if (iv && im) {
      ok = iv->magnitude % im->magnitude == 0;
    } else {
      double q = v.get<double>() / m->get<double>();
      // Decimal fractions are inexact in binary (0.3 / 0.1 = 2.9999999999999996).
      ok = !std::isfinite(q) || std::fabs(q - std::round(q)) <= std::max(1e-9, std::fabs(q) * 1e-12);
    }
    if (ok) return std::nullopt;
    return Fail(path, "expected a multiple of " + Quote(*m) + ", got " + Quote(v));
  }

  Result CheckString(const Keywords& k, const json& v, const Path* path) {
    std::optional<uint64_t> min = Count(k[kMinLength]), max = Count(k[kMaxLength]);
    if (!min && !max) return std::nullopt;
    const std::string& str = v.get_ref<const std::string&>();
    steps_ += str.size() / 64;
    size_t n = CodePoints(str);
    if (min && n < *min) return Fail(path, "expected at least " + std::to_string(*min) + " characters");
    if (max && n > *max) return Fail(path, "expected at most " + std::to_string(*max) + " characters");
    return std::nullopt;
  }

  Result CheckArray(const Keywords& k, const json& v, const Path* path, int depth) {
    const size_t n = v.size();
    if (std::optional<uint64_t> min = Count(k[kMinItems]); min && n < *min) {
      return Fail(path, "expected at least " + std::to_string(*min) + " items, got " + std::to_string(n));
    }
    if (std::optional<uint64_t> max = Count(k[kMaxItems]); max && n > *max) {
      return Fail(path, "expected at most " + std::to_string(*max) + " items, got " + std::to_string(n));
    }

    // A tuple prefix (prefixItems, or draft-07 array-form items), then one schema for the rest.
    const json* prefix = k[kPrefixItems];
    const json* items = k[kItems];
    const json* tuple = nullptr;
    const json* rest = nullptr;
    if (prefix != nullptr && prefix->is_array()) {
      tuple = prefix;
      rest = (items != nullptr && !items->is_array()) ? items : nullptr;
    } else if (items != nullptr && items->is_array()) {
      tuple = items;
      rest = k[kAdditionalItems];
    } else {
      rest = items;
    }
    const size_t tuple_len = tuple != nullptr ? tuple->size() : 0;
    for (size_t i = 0; i < n; ++i) {
      const json* sub = i < tuple_len ? &(*tuple)[i] : rest;
      if (sub == nullptr) break;
      if (i >= tuple_len && *sub == false) {
        return Fail(path, "expected at most " + std::to_string(tuple_len) + " items, got " + std::to_string(n));
      }
      Path child{path, {}, i, true};
      if (Result r = Validate(*sub, v[i], &child, depth + 1)) return r;
    }

    const json* unique = k[kUniqueItems];
    if (unique != nullptr && *unique == true && n > 1) return CheckUnique(v, path);
    return std::nullopt;
  }

  // O(total size + n log n): sort canonical encodings instead of comparing all pairs.
  Result CheckUnique(const json& v, const Path* path) {
    const size_t n = v.size();
    std::vector<std::string> keys(n);
    size_t bytes = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!AppendKey(v[i], 0, &keys[i])) return Fatal(path, "value nested too deeply to compare");
      bytes += keys[i].size();
    }
    steps_ += n + bytes / 64;
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      int c = keys[a].compare(keys[b]);
      return c != 0 ? c < 0 : a < b;
    });
    // Report the duplicate pair whose later index is smallest (what a left-to-right scan finds).
    std::optional<std::pair<size_t, size_t>> dup;
    for (size_t k = 1; k < n; ++k) {
      if (keys[order[k]] != keys[order[k - 1]]) continue;
      if (!dup || order[k] < dup->second) dup = std::make_pair(order[k - 1], order[k]);
    }
    if (!dup) return std::nullopt;
    return Fail(path, "expected unique items, but items " + std::to_string(dup->first) + " and " +
                          std::to_string(dup->second) + " are equal");
  }

  Result CheckObject(const Keywords& k, const json& v, const Path* path, int depth) {
    if (const json* required = k[kRequired]; required != nullptr && required->is_array()) {
      steps_ += required->size();
      for (const json& name : *required) {
        if (name.is_string() && !v.contains(name.get_ref<const std::string&>())) {
          return Fail(path, "missing required property " + Quote(name));
        }
      }
    }
    if (std::optional<uint64_t> min = Count(k[kMinProperties]); min && v.size() < *min) {
      return Fail(path, "expected at least " + std::to_string(*min) + " properties, got " + std::to_string(v.size()));
    }
    if (std::optional<uint64_t> max = Count(k[kMaxProperties]); max && v.size() > *max) {
      return Fail(path, "expected at most " + std::to_string(*max) + " properties, got " + std::to_string(v.size()));
    }

    const json* props = k[kProperties];
    if (props != nullptr && !props->is_object()) props = nullptr;
    const json* additional = k[kAdditionalProperties];
    const json* patterns = k[kPatternProperties];
    if (patterns != nullptr && patterns->is_object() && !patterns->empty()) additional = nullptr;
    if (props == nullptr && additional == nullptr) return std::nullopt;
    steps_ += v.size();
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string& key = it.key();
      const json* sub = nullptr;
      if (props != nullptr) {
        auto p = props->find(key);
        if (p != props->end()) sub = &*p;
      }
      if (sub == nullptr) {
        if (additional == nullptr) continue;
        if (*additional == false) return Fail(path, "unexpected property " + Quote(json(key)));
        sub = additional;
      }
      Path child{path, key, 0, false};
      if (Result r = Validate(*sub, *it, &child, depth + 1)) return r;
    }
    return std::nullopt;
  }

  Result CheckCombinators(const Keywords& k, const json& v, const Path* path, int depth) {
    if (const json* all = k[kAllOf]; all != nullptr && all->is_array()) {
      for (const json& sub : *all) {
        if (Result r = Validate(sub, v, path, depth + 1)) return r;
      }
    }
    if (const json* any = k[kAnyOf]; any != nullptr && any->is_array() && !any->empty()) {
      Result closest;
      bool matched = false;
      for (const json& sub : *any) {
        Result r = Validate(sub, v, path, depth + 1);
        if (!r) {
          matched = true;
          break;
        }
        if (r->fatal) return r;
        if (!closest || r->path_depth > closest->path_depth) closest = std::move(r);
      }
      if (!matched) return NoAlternative(path, "anyOf", std::move(*closest));
    }
    if (const json* one = k[kOneOf]; one != nullptr && one->is_array() && !one->empty()) {
      Result closest;
      std::vector<size_t> matches;
      for (size_t i = 0; i < one->size() && matches.size() < 2; ++i) {
        Result r = Validate((*one)[i], v, path, depth + 1);
        if (!r) {
          matches.push_back(i);
          continue;
        }
        if (r->fatal) return r;
        if (!closest || r->path_depth > closest->path_depth) closest = std::move(r);
      }
      if (matches.empty()) return NoAlternative(path, "oneOf", std::move(*closest));
      if (matches.size() > 1) {
        return Fail(path, "matches more than one alternative of oneOf (" + std::to_string(matches[0]) + " and " +
                              std::to_string(matches[1]) + ")");
      }
    }
    if (const json* no = k[kNot]) {
      Result r = Validate(*no, v, path, depth + 1);
      if (r && r->fatal) return r;
      if (!r) return Fail(path, "must not match the \"not\" schema");
    }
    if (const json* cond = k[kIf]) {
      Result r = Validate(*cond, v, path, depth + 1);
      if (r && r->fatal) return r;
      const json* branch = k[r ? kElse : kThen];
      if (branch != nullptr) return Validate(*branch, v, path, depth + 1);
    }
    return std::nullopt;
  }

  // JSON equality where numbers compare by value (1 == 1.0).
  Eq Equal(const json& a, const json& b, int depth) {
    ++steps_;
    if (depth > kMaxValueDepth) return Eq::kTooDeep;
    if (a.is_number() && b.is_number()) return NumbersEqual(a, b) ? Eq::kYes : Eq::kNo;
    if (a.type() != b.type() || a.size() != b.size()) return Eq::kNo;
    if (a.is_array()) {
      for (size_t i = 0; i < a.size(); ++i) {
        if (Eq eq = Equal(a[i], b[i], depth + 1); eq != Eq::kYes) return eq;
      }
      return Eq::kYes;
    }
    if (a.is_object()) {  // both std::maps: walk them in step
      for (auto x = a.begin(), y = b.begin(); x != a.end(); ++x, ++y) {
        if (x.key() != y.key()) return Eq::kNo;
        if (Eq eq = Equal(*x, *y, depth + 1); eq != Eq::kYes) return eq;
      }
      return Eq::kYes;
    }
    return a == b ? Eq::kYes : Eq::kNo;
  }

  // An encoding that is equal for two values exactly when Equal() says so
  // (prefix-free; numbers normalised; object keys already sorted).
  static bool AppendKey(const json& v, int depth, std::string* out) {
    if (depth > kMaxValueDepth) return false;
    switch (v.type()) {
      case json::value_t::null: *out += 'N'; return true;
      case json::value_t::boolean: *out += v.get<bool>() ? 'T' : 'F'; return true;
      case json::value_t::number_integer:
      case json::value_t::number_unsigned:
      case json::value_t::number_float:
        if (std::optional<Integer> i = AsInteger(v)) {
          *out += i->negative ? "i-" : "i";
          *out += std::to_string(i->magnitude);
        } else {
          *out += 'd';
          *out += v.dump();
        }
        *out += ';';
        return true;
      case json::value_t::string: {
        const std::string& s = v.get_ref<const std::string&>();
        *out += 's' + std::to_string(s.size()) + ':';
        *out += s;
        return true;
      }
      case json::value_t::array:
        *out += '[';
        for (const json& e : v) {
          if (!AppendKey(e, depth + 1, out)) return false;
        }
        *out += ']';
        return true;
      case json::value_t::object:
        *out += '{';
        for (auto it = v.begin(); it != v.end(); ++it) {
          *out += 's' + std::to_string(it.key().size()) + ':';
          *out += it.key();
          if (!AppendKey(*it, depth + 1, out)) return false;
        }
        *out += '}';
        return true;
      default:
        *out += '?';
        return true;
    }
  }

  const json& root_;
  size_t steps_ = 0;
  std::vector<std::pair<const json*, const json*>> active_refs_;  // $ref target, value
  std::unordered_map<const json*, const json*> resolved_;          // $ref string -> target
};

}  // namespace

Status ValidateJsonSchema(const json& schema, const json& instance) {
  if (schema.is_null()) return OkStatus();
  try {
    Validator validator(schema);
    Result r = validator.Validate(schema, instance, nullptr, 0);
    if (!r) return OkStatus();
    return InvalidArgument(std::move(r->message));
  } catch (const std::exception& e) {  // bad_alloc; nothing else is expected
    return InvalidArgument(std::string("arguments could not be validated: ") + e.what());
  }
}

}  // namespace airlock::gateway
