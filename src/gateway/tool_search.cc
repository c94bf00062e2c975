#include "gateway/tool_search.h"

#include <algorithm>
#include <cctype>

#include "base/encoding.h"

namespace airlock::gateway {
namespace {

constexpr double kNameExact = 10, kNamePrefix = 6, kNameSubstring = 3;
constexpr double kParamExact = 4, kParamPrefix = 2;
constexpr double kDescExact = 1, kDescPrefix = 0.5;
constexpr double kWholeNameBonus = 20;

bool IsWordByte(unsigned char c) { return std::isalnum(c) || c >= 0x80; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Best match of `term` among `tokens`: exact, else prefix (terms of 2+ bytes).
double Best(const std::string& term, const std::vector<std::string>& tokens, double exact, double prefix) {
  double best = 0;
  for (const std::string& t : tokens) {
    if (t == term) return exact;
    if (term.size() >= 2 && t.size() > term.size() && t.compare(0, term.size(), term) == 0) best = prefix;
  }
  return best;
}

}  // namespace

std::vector<std::string> Tokenize(std::string_view text) {
  std::vector<std::string> tokens;
  std::string current;
  auto flush = [&] {
    if (!current.empty()) tokens.push_back(Lower(current));
    current.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (!IsWordByte(c)) {
      flush();
      continue;
    }
    // camelCase: "getContact" -> get, contact
    if (std::isupper(c) && !current.empty() && std::islower(static_cast<unsigned char>(current.back()))) flush();
    current.push_back(static_cast<char>(c));
  }
  flush();
  return tokens;
}

std::string OneLineSummary(std::string_view description, size_t max_bytes) {
  std::string_view s = description;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  s = s.substr(0, s.find('\n'));
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if ((s[i] == '.' || s[i] == '!' || s[i] == '?') && s[i + 1] == ' ') {
      s = s.substr(0, i + 1);
      break;
    }
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  std::string out = SanitizeUtf8(s);
  if (out.size() <= max_bytes) return out;
  return std::string(TruncateUtf8(out, max_bytes - 3)) + "...";
}

std::vector<std::string> ParameterNames(const nlohmann::json& input_schema) {
  std::vector<std::string> names;
  if (input_schema.is_object() && input_schema.contains("properties") && input_schema["properties"].is_object()) {
    for (const auto& [key, value] : input_schema["properties"].items()) names.push_back(key);
  }
  return names;
}

double ScoreTool(const std::vector<std::string>& query_terms, std::string_view raw_query,
                 const SearchDocument& doc) {
  if (query_terms.empty()) return 1;
  const std::vector<std::string> name_tokens = Tokenize(doc.name);
  std::vector<std::string> param_tokens;
  for (const std::string& p : doc.parameters) {
    for (std::string& t : Tokenize(p)) param_tokens.push_back(std::move(t));
  }
  const std::vector<std::string> desc_tokens = Tokenize(doc.description);
  const std::string lower_name = Lower(doc.name);
  double score = 0;
  for (const std::string& term : query_terms) {
    double name_score = Best(term, name_tokens, kNameExact, kNamePrefix);
    if (name_score == 0 && term.size() >= 3 && lower_name.find(term) != std::string::npos) {
      name_score = kNameSubstring;
    }
    score += name_score + Best(term, param_tokens, kParamExact, kParamPrefix) +
             Best(term, desc_tokens, kDescExact, kDescPrefix);
  }
  if (score > 0) {
    std::string q = Lower(raw_query);
    q.erase(0, q.find_first_not_of(" \t\n"));
    q.erase(q.find_last_not_of(" \t\n") + 1);
    if (q == Lower(doc.tool) || q == lower_name) score += kWholeNameBonus;
  }
  return score;
}

}  // namespace airlock::gateway
