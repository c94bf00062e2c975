#include "selftest/containment_suite.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <thread>

#include "base/cancel.h"
#include "selftest/attack_files.h"
#include "selftest/host_snapshot.h"

namespace airlock::selftest {
namespace {

using runtimes::RunRequest;
using runtimes::RunResult;
using runtimes::RunStatus;
using runtimes::RunStatusName;

uint64_t NowMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// The verdict: the first "ALLOWED:" line if any, else the last line.
std::string VerdictLine(const std::string& stdout_text) {
  const std::vector<std::string> lines = Lines(stdout_text);
  for (const auto& l : lines)
    if (StartsWith(l, "ALLOWED:")) return l;
  return lines.empty() ? "" : lines.back();
}

bool IsVerdict(const std::string& line) {
  for (const char* p : {"DENIED:", "ALLOWED:", "OK:", "FAIL:", "STARTED:"})
    if (StartsWith(line, p)) return true;
  return false;
}

// N from "... after N ..." in a verdict, if present.
std::optional<uint64_t> CountAfter(const std::string& verdict) {
  const size_t pos = verdict.find("after ");
  if (pos == std::string::npos) return std::nullopt;
  char* end = nullptr;
  const char* start = verdict.c_str() + pos + 6;
  const unsigned long long n = strtoull(start, &end, 10);
  if (end == start) return std::nullopt;
  return n;
}

std::string Shorten(std::string s, size_t max) {
  for (char& c : s)
    if (c == '\n' || c == '\t') c = ' ';
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

bool Contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// Whether the secret value shows up anywhere the program could put it.
bool LeaksSecret(const RunResult& r, const std::string& secret) {
  if (Contains(r.stdout_text, secret) || Contains(r.stderr_text, secret) || Contains(r.compile_output, secret))
    return true;
  for (const auto& f : r.files)
    if (Contains(f.content, secret)) return true;
  return false;
}

// Polls `probe` for up to `ms` until it returns an empty list.
std::vector<std::string> WaitUntilEmpty(const std::function<std::vector<std::string>()>& probe, uint64_t ms) {
  const uint64_t deadline = NowMs() + ms;
  std::vector<std::string> found = probe();
  while (!found.empty() && NowMs() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    found = probe();
  }
  return found;
}

// Returns "" when the check passes, else what is wrong.
std::string RunHostCheck(HostCheck check, runtimes::CodeExecutor& executor, const RunResult& r, HostBait& bait) {
  switch (check) {
    case HostCheck::kNoListenerContact: {
      const std::vector<std::string> contacts = bait.DrainContacts();
      return contacts.empty() ? "" : contacts.front();
    }
    case HostCheck::kNoFilesOutside: {
      std::vector<std::string> problems = bait.FilesCreatedOutside();
      for (auto& p : problems) p = "created on the host: " + p;
      for (const auto& p : bait.CheckSecretIntact()) problems.push_back(p);
      return problems.empty() ? "" : problems.front();
    }
    case HostCheck::kNoMarkerProcess: {
      const std::vector<std::string> left =
          WaitUntilEmpty([&] { return ProcessesWithCmdline(bait.marker()); }, 2000);
      return left.empty() ? "" : "daemon survived the run: " + left.front();
    }
    case HostCheck::kNoSymlinkFollowed: {
      bool normal_collected = false;
      for (const auto& f : r.files) {
        if (f.name == "normal.txt") {
          normal_collected = f.content == "hello\n";
        } else if (!f.content.empty()) {
          return "collected through a symlink: " + f.name + " = " + Shorten(f.content, 60);
        }
      }
      return normal_collected ? "" : "the regular output file normal.txt was not collected";
    }
    case HostCheck::kFollowUpRunWorks: {
      RunRequest req;
      req.language = "python";
      req.code = "print(1)\n";
      req.timeout_ms = 10'000;
      CancelToken cancel;
      const RunResult after = executor.Run(req, nullptr, cancel);
      if (after.status == RunStatus::kOk && after.stdout_text == "1\n") return "";
      return std::string("a run right afterwards failed: ") + RunStatusName(after.status) + " " + after.message;
    }
  }
  return "unknown host check";
}

// Checks `r` against the case's expectation; sets observed/passed/detail.
void Judge(const SelftestCase& c, const RunResult& r, CaseOutcome* out) {
  const Expectation& e = c.expect;
  const std::string verdict = VerdictLine(r.stdout_text);
  out->detail = verdict.empty() ? r.message : verdict;

  if (StartsWith(verdict, "ALLOWED:")) {
    out->observed = "ALLOWED";
    return;
  }
  auto broken = [&](const std::string& why) {
    out->observed = e.kind == Expected::kAllowed ? "broken" : "inconclusive";
    out->detail = why;
  };
  if (e.kind == Expected::kDenied && e.statuses.empty() && r.status == RunStatus::kKilledSignal &&
      r.signal == SIGSYS) {
    out->observed = "denied";
    out->detail = "killed by SIGSYS (seccomp)";
    out->passed = true;
    return;
  }
  const std::vector<RunStatus> statuses = e.statuses.empty() ? std::vector<RunStatus>{RunStatus::kOk} : e.statuses;
  if (std::find(statuses.begin(), statuses.end(), r.status) == statuses.end()) {
    std::string why = std::string("status ") + RunStatusName(r.status);
    if (!r.message.empty()) why += " (" + r.message + ")";
    const std::vector<std::string> err = Lines(r.stderr_text);
    if (!err.empty()) why += "; stderr: " + err.back();
    return broken(why);
  }
  if (!e.verdict_prefix.empty() && !StartsWith(verdict, e.verdict_prefix))
    return broken("expected a \"" + e.verdict_prefix + "\" line, got \"" + Shorten(verdict, 80) + "\"");
  for (const auto& s : e.verdict_contains)
    if (!Contains(verdict, s)) return broken("verdict lacks \"" + s + "\": " + verdict);
  for (const auto& s : e.stderr_contains)
    if (!Contains(r.stderr_text, s)) return broken("stderr lacks \"" + s + "\": " + Shorten(r.stderr_text, 80));
  for (const auto& s : e.compile_output_contains)
    if (!Contains(r.compile_output, s)) return broken("compile output lacks \"" + s + "\"");
  if (e.stdout_truncated && !r.stdout_truncated) return broken("stdout was not marked truncated");
  if (e.min_wall_ms && r.wall_ms < e.min_wall_ms)
    return broken("ended after " + std::to_string(r.wall_ms) + " ms, before the deadline");
  if (e.max_wall_ms && r.wall_ms > e.max_wall_ms)
    return broken("ended after " + std::to_string(r.wall_ms) + " ms, limit " + std::to_string(e.max_wall_ms));
  if (e.max_count) {
    const std::optional<uint64_t> n = CountAfter(verdict);
    if (!n) return broken("verdict has no count: " + verdict);
    if (*n > e.max_count) {
      out->observed = "ALLOWED";
      out->detail = "limit too high: " + verdict;
      return;
    }
  }
  // A limit that ended the run is best described by its message (the last
  // line of a flood or a traceback is not a verdict).
  if (r.status != RunStatus::kOk && !IsVerdict(verdict)) out->detail = r.message;
  out->observed = ExpectedName(e.kind);
  out->passed = true;
}

}  // namespace

const char* ExpectedName(Expected e) {
  switch (e) {
    case Expected::kDenied:
      return "denied";
    case Expected::kEnforced:
      return "enforced";
    case Expected::kAllowed:
      return "allowed";
  }
  return "?";
}

CaseOutcome RunContainmentCase(runtimes::CodeExecutor& executor, const SelftestCase& c, HostBait& bait) {
  CaseOutcome out;
  out.name = c.name;
  out.category = c.category;
  out.language = c.language;
  out.expected = ExpectedName(c.expect.kind);

  const std::optional<std::string_view> source = FindAttackFile(c.attack_file);
  if (!source) {
    out.observed = "missing";
    out.detail = "attack file " + c.attack_file + " is not embedded in this binary";
    return out;
  }
  RunRequest req;
  req.language = c.language;
  if (!c.isolation.empty()) req.isolation = c.isolation;
  req.code = bait.Substitute(*source);
  req.stdin_data = c.stdin_data;
  req.output_globs = c.output_globs;
  req.timeout_ms = c.timeout_ms;
  req.memory_mb = c.memory_mb;
  CancelToken cancel;
  const uint64_t start = NowMs();
  const RunResult r = executor.Run(req, nullptr, cancel);
  out.wall_ms = NowMs() - start;

  if (r.status == RunStatus::kInternalError && r.error_code == "unknown_language") {
    out.observed = "skipped";
    out.skipped = true;
    out.passed = true;
    out.detail = c.language + " is not installed";
    return out;
  }
  if (!c.isolation.empty() && r.status == RunStatus::kInternalError && r.error_code == "invalid_request" &&
      Contains(r.message, "isolation \"" + c.isolation + "\" is not available")) {
    out.observed = "skipped";
    out.skipped = true;
    out.passed = true;
    out.detail = c.language + " has no " + c.isolation + " tier on this host";
    return out;
  }
  if (LeaksSecret(r, bait.secret_value())) {
    out.observed = "LEAKED";
    out.detail = "the planted secret value appears in the program's output";
    return out;
  }
  Judge(c, r, &out);
  // Host-side checks run even when the program's own verdict failed, so
  // that pending contacts are attributed to this case.
  for (HostCheck check : c.expect.host_checks) {
    const std::string problem = RunHostCheck(check, executor, r, bait);
    if (!problem.empty() && out.passed) {
      out.passed = false;
      out.observed = check == HostCheck::kFollowUpRunWorks ? "host harmed" : "ALLOWED";
      out.detail = problem;
    }
  }
  return out;
}

SelftestReport RunContainmentSuite(runtimes::CodeExecutor& executor, const SelftestOptions& options) {
  SelftestReport report;
  const uint64_t start = NowMs();
  std::unique_ptr<HostBait> own_bait;
  HostBait* bait = options.bait;
  if (bait == nullptr) {
    StatusOr<std::unique_ptr<HostBait>> planted = HostBait::Create();
    if (!planted.ok()) {
      report.setup_error = "could not plant the bait: " + planted.status().ToString();
      return report;
    }
    own_bait = std::move(planted).value();
    bait = own_bait.get();
  }
  std::vector<SelftestCase> cases;
  std::vector<SelftestCase> all = ContainmentCases();
  for (SelftestCase& c : WasmTierContainmentCases()) all.push_back(std::move(c));
  for (auto& c : all) {
    bool selected = options.only.empty();
    for (const auto& f : options.only) selected = selected || Contains(c.name, f);
    if (selected) cases.push_back(std::move(c));
  }
  const HostSnapshot before = TakeHostSnapshot();

  report.cases.resize(cases.size());
  std::atomic<size_t> next{0};
  std::mutex mu;
  auto worker = [&] {
    for (size_t i = next++; i < cases.size(); i = next++) {
      CaseOutcome o = RunContainmentCase(executor, cases[i], *bait);
      std::lock_guard<std::mutex> lock(mu);
      if (options.on_case) options.on_case(o);
      report.cases[i] = std::move(o);
    }
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < std::max(1, options.parallelism); ++i) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();

  // The host afterwards: nothing reached the listeners, nothing was written
  // outside, nothing is left running or mounted, no cgroup left over.
  for (const auto& p : bait->DrainContacts()) report.host_problems.push_back(p);
  for (const auto& p : bait->FilesCreatedOutside()) report.host_problems.push_back("created on the host: " + p);
  for (const auto& p : bait->CheckSecretIntact()) report.host_problems.push_back(p);
  for (const auto& p : ProcessesWithCmdline(bait->marker())) report.host_problems.push_back("still running: " + p);
  const std::vector<std::string> left =
      WaitUntilEmpty([&] { return LeftBehind(before, TakeHostSnapshot()); }, 3000);
  report.host_problems.insert(report.host_problems.end(), left.begin(), left.end());

  for (const auto& o : report.cases) {
    if (o.skipped) ++report.skipped;
    else if (o.passed) ++report.passed;
    else ++report.failed;
  }
  report.wall_ms = NowMs() - start;
  return report;
}

nlohmann::json ToJson(const SelftestReport& report) {
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& o : report.cases) {
    cases.push_back({{"name", o.name},         {"category", o.category}, {"language", o.language},
                     {"expected", o.expected}, {"observed", o.observed}, {"passed", o.passed},
                     {"skipped", o.skipped},   {"detail", o.detail},     {"wall_ms", o.wall_ms}});
  }
  return {{"ok", report.ok()},          {"passed", report.passed},
          {"failed", report.failed},    {"skipped", report.skipped},
          {"wall_ms", report.wall_ms},  {"setup_error", report.setup_error},
          {"host_problems", report.host_problems}, {"cases", std::move(cases)}};
}

std::string FormatTable(const SelftestReport& report) {
  const std::vector<std::string> header = {"RESULT", "CASE", "LANGUAGE", "EXPECTED", "OBSERVED", "DETAIL"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& o : report.cases) {
    rows.push_back({o.skipped ? "skip" : o.passed ? "pass" : "FAIL", o.name, o.language, o.expected, o.observed,
                    Shorten(o.detail, 90)});
  }
  std::vector<size_t> width(header.size());
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& row : rows)
    for (size_t i = 0; i + 1 < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::ostringstream out;
  auto emit = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size(); ++i) {
      out << row[i];
      if (i + 1 < row.size()) out << std::string(width[i] - row[i].size() + 2, ' ');
    }
    out << "\n";
  };
  emit(header);
  for (const auto& row : rows) emit(row);
  out << "\n";
  if (!report.setup_error.empty()) out << "setup failed: " << report.setup_error << "\n";
  if (report.host_intact()) {
    out << "host: intact (secret unchanged, no listener contacted, nothing written outside, no process, mount or "
           "cgroup left behind)\n";
  } else {
    for (const auto& p : report.host_problems) out << "host: FAIL: " << p << "\n";
  }
  out << report.passed << " passed, " << report.failed << " failed, " << report.skipped << " skipped in "
      << report.wall_ms << " ms: " << (report.ok() ? "all contained" : "CONTAINMENT FAILURES") << "\n";
  return out.str();
}

}  // namespace airlock::selftest
