#include "codetools/version_diff.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "codetools/code_tool_store.h"

namespace airlock::codetools {
namespace {

std::vector<std::string_view> SplitLines(std::string_view s) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < s.size()) {
    const size_t nl = s.find('\n', start);
    if (nl == std::string_view::npos) {
      lines.push_back(s.substr(start));
      break;
    }
    lines.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

struct Op {
  char kind;  // ' ', '-', '+'
  std::string_view line;
};

// The edit script turning a[lo_a, hi_a) into b[lo_b, hi_b): an LCS when the
// table fits in kMaxDiffCells, else everything removed then added.
void DiffMiddle(const std::vector<std::string_view>& a, size_t lo_a, size_t hi_a,
                const std::vector<std::string_view>& b, size_t lo_b, size_t hi_b, std::vector<Op>* ops) {
  const size_t n = hi_a - lo_a, m = hi_b - lo_b;
  if (n == 0 || m == 0 || (n + 1) * (m + 1) > kMaxDiffCells) {
    for (size_t i = lo_a; i < hi_a; ++i) ops->push_back({'-', a[i]});
    for (size_t j = lo_b; j < hi_b; ++j) ops->push_back({'+', b[j]});
    return;
  }
  // lcs[i][j]: LCS length of a[lo_a+i..hi_a) and b[lo_b+j..hi_b).
  std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      at(i, j) = a[lo_a + i] == b[lo_b + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    }
  }
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[lo_a + i] == b[lo_b + j]) {
      ops->push_back({' ', a[lo_a + i]});
      ++i, ++j;
    } else if (j == m || (i < n && at(i + 1, j) >= at(i, j + 1))) {
      ops->push_back({'-', a[lo_a + i++]});
    } else {
      ops->push_back({'+', b[lo_b + j++]});
    }
  }
}

std::string Range(size_t start, size_t count) {
  // Unified format: a hunk with no lines names the line before it.
  return std::to_string(count == 0 ? start : start + 1) + "," + std::to_string(count);
}

std::string Section(const std::string& title, const std::string& from, const std::string& to) {
  const std::string d = UnifiedLineDiff(from, to);
  return d.empty() ? "" : "=== " + title + "\n" + d;
}

std::string Lines(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += i + "\n";
  return s;
}

std::string Json(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string Title(const CodeTool& t) {
  return t.id + " (" + t.endpoint + "/" + t.proposal.name + " version " + std::to_string(t.version) + ", " +
         StateName(t.state) + ")";
}

}  // namespace

std::string UnifiedLineDiff(std::string_view from, std::string_view to, size_t context) {
  const std::vector<std::string_view> a = SplitLines(from), b = SplitLines(to);
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  if (prefix == a.size() && prefix == b.size()) return "";

  std::vector<Op> ops;
  for (size_t i = 0; i < prefix; ++i) ops.push_back({' ', a[i]});
  DiffMiddle(a, prefix, a.size() - suffix, b, prefix, b.size() - suffix, &ops);
  for (size_t i = a.size() - suffix; i < a.size(); ++i) ops.push_back({' ', a[i]});

  // Line numbers (0-based) in `from` and `to` before each op.
  std::vector<size_t> pos_a(ops.size() + 1), pos_b(ops.size() + 1);
  for (size_t k = 0; k < ops.size(); ++k) {
    pos_a[k + 1] = pos_a[k] + (ops[k].kind != '+');
    pos_b[k + 1] = pos_b[k] + (ops[k].kind != '-');
  }
  std::string out;
  size_t k = 0;
  while (k < ops.size()) {
    while (k < ops.size() && ops[k].kind == ' ') ++k;
    if (k == ops.size()) break;
    const size_t begin = k > context ? k - context : 0;
    // Extend over changes separated by at most 2 * context unchanged lines.
    size_t last_change = k;
    for (size_t x = k; x < ops.size(); ++x) {
      if (ops[x].kind != ' ') {
        last_change = x;
      } else if (x - last_change > 2 * context) {
        break;
      }
    }
    const size_t end = std::min(ops.size(), last_change + context + 1);
    out += "@@ -" + Range(pos_a[begin], pos_a[end] - pos_a[begin]) + " +" +
           Range(pos_b[begin], pos_b[end] - pos_b[begin]) + " @@\n";
    for (size_t x = begin; x < end; ++x) {
      out += ops[x].kind;
      out += ops[x].line;
      out += '\n';
    }
    k = end;
  }
  return out;
}

std::string DiffVersions(const CodeTool* from, const CodeTool& to) {
  Proposal empty_proposal;  // "from" of a new tool: nothing at all
  empty_proposal.input_schema = nullptr;
  empty_proposal.limits = nullptr;
  const Proposal& a = from ? from->proposal : empty_proposal;
  const Proposal& b = to.proposal;
  auto tools = [](const Proposal& p, bool exists) {
    if (!exists) return std::string();
    return p.tools.empty() ? std::string("(every tool of the declared connectors)\n") : Lines(p.tools);
  };
  auto json = [](const nlohmann::json& j) { return j.is_null() ? std::string() : Json(j); };
  auto text = [](const std::string& s) { return s.empty() || s.back() == '\n' ? s : s + "\n"; };

  std::string out = "--- " + (from ? Title(*from) : std::string("(no approved version)")) + "\n";
  out += "+++ " + Title(to) + "\n";
  for (const CodeTool* t : {from, &to}) {
    if (t && !t->intact) {
      out += "!!! " + t->id + ": its stored fields no longer match its hash (edited in the database)\n";
    }
  }
  std::string body;
  body += Section("language", text(a.language), text(b.language));
  body += Section("description", text(a.description), text(b.description));
  body += Section("connectors", Lines(a.connectors), Lines(b.connectors));
  body += Section("tools", tools(a, from != nullptr), tools(b, true));
  body += Section("limits", json(a.limits), json(b.limits));
  body += Section("input_schema", json(a.input_schema), json(b.input_schema));
  body += Section("code", text(a.code), text(b.code));
  return out + (body.empty() ? "(no differences)\n" : body);
}

}  // namespace airlock::codetools
