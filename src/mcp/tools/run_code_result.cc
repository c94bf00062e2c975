#include "mcp/tools/run_code_result.h"

#include <cctype>
#include <cstdio>

#include "base/byte_size.h"
#include "base/encoding.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;

bool IsImageMime(const std::string& mime) {
  return mime == "image/png" || mime == "image/jpeg" || mime == "image/gif" || mime == "image/webp";
}

void AppendSection(std::string* out, const char* title, const std::string& body, bool truncated) {
  if (body.empty() && !truncated) return;
  *out += "\n--- ";
  *out += title;
  *out += truncated ? " (truncated) ---\n" : " ---\n";
  *out += SanitizeUtf8(body);
  if (!body.empty() && body.back() != '\n') *out += "\n";
}

}  // namespace

std::string WorkFileUri(const std::string& name) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out = "file:///work/";
  for (unsigned char c : name) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string RunResultText(const runtimes::RunResult& r) {
  std::string out = "status: ";
  out += runtimes::RunStatusName(r.status);
  if (r.status == runtimes::RunStatus::kKilledSignal && r.signal != 0) {
    out += " (signal " + std::to_string(r.signal) + ")";
  } else if (r.exit_code >= 0) {
    out += " (exit code " + std::to_string(r.exit_code) + ")";
  }
  out += ", " + std::to_string(r.wall_ms) + " ms wall, " + std::to_string(r.cpu_ms) + " ms cpu";
  if (r.compile_ms) out += ", " + std::to_string(r.compile_ms) + " ms compile";
  if (r.peak_memory_bytes) out += ", peak memory " + ApproxBytes(r.peak_memory_bytes);
  out += "\n";
  if (!r.message.empty()) out += SanitizeUtf8(r.message) + "\n";
  AppendSection(&out, "compile output", r.compile_output, r.compile_output_truncated);
  AppendSection(&out, "stdout", r.stdout_text, r.stdout_truncated);
  AppendSection(&out, "stderr", r.stderr_text, r.stderr_truncated);
  if (!r.files.empty()) {
    out += "\n--- files ---\n";
    for (const runtimes::OutputFile& f : r.files) {
      out += SanitizeUtf8(f.name) + " (" + (f.mime_type.empty() ? "application/octet-stream" : f.mime_type) +
             ", " + ApproxBytes(f.size) + (f.truncated ? ", truncated" : "") + ")\n";
    }
  }
  if (!r.notes.empty()) {
    out += "\n--- notes ---\n";
    for (const std::string& n : r.notes) out += SanitizeUtf8(n) + "\n";
    for (const runtimes::FileNotice& f : r.files_skipped) {
      out += "left out: " + SanitizeUtf8(f.name) + " (" + ApproxBytes(f.size) + ", " + f.reason + ")\n";
    }
    for (const runtimes::FileNotice& f : r.files_left) {
      out += "not requested: " + SanitizeUtf8(f.name) + " (" + ApproxBytes(f.size) + ")\n";
    }
  }
  return out;
}

namespace {

// Bytes `s` takes as a JSON string (quotes included), as nlohmann::json
// writes it (UTF-8 kept, control characters escaped).
size_t JsonStringBytes(const std::string& s) {
  size_t n = 2;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\' || c == '\n' || c == '\t' || c == '\r' || c == '\b' || c == '\f') {
      n += 2;
    } else if (c < 0x20) {
      n += 6;
    } else {
      n += 1;
    }
  }
  return n;
}

bool IsTextFile(const runtimes::OutputFile& f) {
  return IsValidUtf8(f.content) && f.content.find('\0') == std::string::npos;
}

// What one output file adds to a result: its content in structuredContent
// and again in a content block, plus the fields around them.
size_t FileReplyBytes(const runtimes::OutputFile& f) {
  const size_t encoded = IsTextFile(f) ? JsonStringBytes(f.content) : (f.content.size() + 2) / 3 * 4 + 2;
  return 2 * encoded + 2 * JsonStringBytes(f.name) + 512;
}

// Cuts `text` to about half at a UTF-8 character boundary.
void Halve(std::string* text) {
  size_t keep = text->size() / 2;
  while (keep > 0 && (static_cast<unsigned char>((*text)[keep]) & 0xC0) == 0x80) --keep;
  text->resize(keep);
}

}  // namespace

runtimes::RunResult FitToReplyBudget(runtimes::RunResult r, size_t max_bytes) {
  // A cheap upper bound first: most results are far below the budget.
  size_t bound = (r.stdout_text.size() + r.stderr_text.size() + r.compile_output.size() + r.message.size()) * 12 +
                 (64u << 10);
  for (const runtimes::OutputFile& f : r.files) bound += f.content.size() * 12 + f.name.size() * 12 + 512;
  for (const runtimes::FileNotice& f : r.files_left) bound += f.name.size() * 12 + 128;
  for (const runtimes::FileNotice& f : r.files_skipped) bound += f.name.size() * 12 + 128;
  for (const std::string& n : r.notes) bound += n.size() * 12 + 16;
  if (bound <= max_bytes) return r;
  std::vector<runtimes::OutputFile> files = std::move(r.files);
  r.files.clear();
  auto rest_bytes = [&] { return JsonStringBytes(RunResultText(r)) + runtimes::ToJson(r).dump().size() + 1024; };
  size_t rest = rest_bytes();
  for (int round = 0; rest > max_bytes && round < 64; ++round) {
    std::string* longest = &r.stdout_text;
    bool* flag = &r.stdout_truncated;
    if (r.stderr_text.size() > longest->size()) longest = &r.stderr_text, flag = &r.stderr_truncated;
    if (r.compile_output.size() > longest->size()) longest = &r.compile_output, flag = &r.compile_output_truncated;
    if (longest->empty()) break;
    Halve(longest);
    *flag = true;
    if (round == 0) r.notes.push_back("output was cut to keep the result under " + ExactBytes(max_bytes));
    rest = rest_bytes();
  }
  size_t used = rest;
  bool dropped = false;
  for (runtimes::OutputFile& f : files) {
    const size_t cost = FileReplyBytes(f);
    if (used + cost <= max_bytes) {
      used += cost;
      r.files.push_back(std::move(f));
    } else {
      r.files_skipped.push_back({f.name, f.size, "max_reply_bytes"});
      dropped = true;
    }
  }
  if (dropped) {
    r.files_truncated = true;
    r.notes.push_back("some output files were left out to keep the result under " + ExactBytes(max_bytes) +
                      " (see files_skipped)");
  }
  return r;
}

json BuildRunCodeResult(const runtimes::RunResult& unfitted) {
  const runtimes::RunResult r = FitToReplyBudget(unfitted, kMaxToolResultBytes);
  json content = json::array();
  content.push_back({{"type", "text"}, {"text", RunResultText(r)}});
  for (const runtimes::OutputFile& f : r.files) {
    const std::string mime = f.mime_type.empty() ? "application/octet-stream" : f.mime_type;
    if (IsImageMime(mime) && !f.truncated) {
      content.push_back({{"type", "image"}, {"data", Base64Encode(f.content)}, {"mimeType", mime}});
      continue;
    }
    json resource = {{"uri", WorkFileUri(f.name)}, {"mimeType", mime}};
    if (IsTextFile(f)) {
      resource["text"] = f.content;
    } else {
      resource["blob"] = Base64Encode(f.content);
    }
    content.push_back({{"type", "resource"}, {"resource", std::move(resource)}});
  }
  json out = {{"content", std::move(content)}, {"structuredContent", runtimes::ToJson(r)}};
  out["isError"] = !r.ok();
  return out;
}

json RunResultOutputSchema() {
  const json str = {{"type", "string"}};
  const json boolean = {{"type", "boolean"}};
  const json count = {{"type", "integer"}, {"minimum", 0}};
  json file = {
      {"type", "object"},
      {"properties",
       {{"name", str},
        {"size", count},
        {"encoding", {{"type", "string"}, {"enum", {"text", "base64"}}}},
        {"content", str},
        {"truncated", boolean},
        {"mime_type", {{"type", {"string", "null"}}}}}},
      {"required", {"name"}}};
  const json notice = {{"type", "object"},
                       {"properties", {{"name", str}, {"size", count}, {"reason", str}}},
                       {"required", {"name"}}};
  return {
      {"type", "object"},
      {"properties",
       {{"status",
         {{"type", "string"},
          {"enum", {"ok", "exit_nonzero", "timeout", "memory_limit", "output_limit", "compile_error",
                    "killed_signal", "internal_error"}},
          {"description", "ok only when the program ran and exited 0"}}},
        {"message", {{"type", {"string", "null"}}}},
        {"error_code", {{"type", {"string", "null"}}}},
        {"language", str},
        {"isolation", str},
        {"runner_host", {{"type", "string"}, {"description", "the runner host that ran it (scale-out only)"}}},
        {"exit_code", {{"type", {"integer", "null"}}}},
        {"signal", {{"type", {"integer", "null"}}}},
        {"stdout", str},
        {"stdout_truncated", boolean},
        {"stderr", str},
        {"stderr_truncated", boolean},
        {"compile_output", str},
        {"compile_output_truncated", boolean},
        {"wall_ms", count},
        {"cpu_ms", count},
        {"compile_ms", count},
        {"peak_memory_bytes", count},
        {"files", {{"type", "array"}, {"items", std::move(file)}}},
        {"files_truncated",
         {{"type", "boolean"},
          {"description", "a matched output file was cut at the per-file cap or left out (see files_skipped)"}}},
        {"files_skipped",
         {{"type", "array"},
          {"description", "output files that matched but were left out by the count or total-bytes cap"},
          {"items", notice}}},
        {"files_left",
         {{"type", "array"},
          {"description", "files the program left in /work that output_files did not ask for (at most 20)"},
          {"items", notice}}},
        {"notes",
         {{"type", "array"}, {"items", str}, {"description", "hints: patterns that matched nothing, files left"}}}}},
      {"required", {"status"}}};
}

}  // namespace airlock::mcp
