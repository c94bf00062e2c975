// The case table of the containment suite (see containment_suite.h).
#include <map>

#include "selftest/containment_suite.h"

namespace airlock::selftest {
namespace {

using runtimes::RunStatus;

const std::map<std::string, std::string>& LanguageByExtension() {
  static const auto* const kMap = new std::map<std::string, std::string>{
      {"c", "c"},   {"cpp", "cpp"},         {"py", "python"}, {"js", "javascript"},
      {"ts", "typescript"}, {"rb", "ruby"}, {"php", "php"},   {"sh", "bash"}};
  return *kMap;
}

Expectation Denied(std::vector<HostCheck> checks = {}) {
  Expectation e;
  e.kind = Expected::kDenied;
  e.verdict_prefix = "DENIED:";
  e.host_checks = std::move(checks);
  return e;
}

Expectation Allowed() {
  Expectation e;
  e.kind = Expected::kAllowed;
  e.statuses = {RunStatus::kOk};
  e.verdict_prefix = "OK:";
  return e;
}

Expectation Enforced(std::vector<RunStatus> statuses) {
  Expectation e;
  e.kind = Expected::kEnforced;
  e.statuses = std::move(statuses);
  return e;
}

class CaseTable {
 public:
  // One case per extension in `exts`: attack file `stem.ext`.
  CaseTable& Add(const std::string& category, const std::string& stem, const std::vector<std::string>& exts,
                 const std::string& description, const Expectation& expect,
                 const std::function<void(SelftestCase&)>& tweak = nullptr) {
    for (const auto& ext : exts) {
      SelftestCase c;
      c.language = LanguageByExtension().at(ext);
      c.name = stem + "_" + c.language;
      c.category = category;
      c.attack_file = stem + "." + ext;
      c.description = description;
      c.expect = expect;
      if (tweak) tweak(c);
      cases_.push_back(std::move(c));
    }
    return *this;
  }
  std::vector<SelftestCase> Take() { return std::move(cases_); }

 private:
  std::vector<SelftestCase> cases_;
};

}  // namespace

std::vector<SelftestCase> ContainmentCases() {
  const std::vector<std::string> c_py = {"c", "py"};
  const std::vector<std::string> all_scripting = {"c", "py", "sh", "js", "rb", "php"};
  const HostCheck kNet = HostCheck::kNoListenerContact;
  CaseTable t;

  // Network: only a down loopback inside; nothing of the host's reachable.
  t.Add("network", "net_tcp4", all_scripting, "TCP to a host listener on 127.0.0.1", Denied({kNet}));
  t.Add("network", "net_udp4", c_py, "UDP datagram to a host socket on 127.0.0.1", Denied({kNet}));
  t.Add("network", "net_ipv6_loopback", c_py, "TCP to a host listener on [::1]", Denied({kNet}));
  t.Add("network", "net_ipv6_global", c_py, "UDP to the global IPv6 address 2001:db8::1", Denied());
  t.Add("network", "net_abstract_unix", {"c", "py", "js"}, "connect to a host abstract unix socket",
        Denied({kNet}));
  t.Add("network", "net_dns", c_py, "resolve example.com", Denied());

  // Secrets: files and environment of the host and the supervisor.
  t.Add("secrets", "read_secret_file", all_scripting, "read a file planted on the host (also via /proc/*/root)",
        Denied());
  t.Add("secrets", "read_shadow", c_py, "read /etc/shadow", Denied());
  t.Add("secrets", "list_root", c_py, "list /root", Denied());
  t.Add("secrets", "supervisor_environ", c_py, "read the supervisor's /proc/<pid>/environ", Denied());
  t.Add("secrets", "init_environ", c_py, "read PID 1's environment", Denied());
  t.Add("secrets", "secret_env", all_scripting, "read a secret variable of the supervisor's environment",
        Denied());

  // Filesystem and processes.
  t.Add("filesystem", "write_outside", {"c", "py", "sh"}, "create /usr/x, /etc/x, /x; overwrite the secret",
        Denied({HostCheck::kNoFilesOutside}));
  t.Add("processes", "host_processes", c_py, "see host processes; signal the supervisor", Denied());
  t.Add("processes", "ptrace", c_py, "PTRACE_TRACEME, attach to the parent and to a child", Denied());
  t.Add("processes", "setuid_binary", c_py, "gain privileges through setuid-root binaries", Denied());
  t.Add("processes", "tiocsti", c_py, "TIOCSTI on fd 0 and /dev/tty", Denied());

  // Kernel attack surface.
  t.Add("kernel", "mount", c_py, "mount tmpfs on /tmp, remount /, bind /", Denied());
  t.Add("kernel", "unshare_user", c_py, "new user namespace", Denied());
  t.Add("kernel", "unshare_net", c_py, "new network namespace (alone and with a user ns)", Denied());
  t.Add("kernel", "keyctl", c_py, "add_key / keyctl / request_key", Denied());
  t.Add("kernel", "bpf", c_py, "bpf(BPF_MAP_CREATE / BPF_PROG_LOAD)", Denied());
  t.Add("kernel", "io_uring", c_py, "io_uring_setup", Denied());
  t.Add("kernel", "userfaultfd", c_py, "userfaultfd() and /dev/userfaultfd", Denied());
  t.Add("kernel", "perf_event", c_py, "perf_event_open on itself", Denied());

  // Limits.
  t.Add("limits", "fork_bomb", c_py, "fork until the process limit", Denied({HostCheck::kFollowUpRunWorks}),
        [](SelftestCase& c) {
          c.expect.verdict_contains = {"EAGAIN"};
          c.expect.max_count = 1000;
        });
  t.Add("limits", "fork_bomb_classic", {"sh"}, "exponential fork bomb", Enforced({}), [](SelftestCase& c) {
    c.timeout_ms = 2000;
    c.expect.statuses = {RunStatus::kTimeout};
    c.expect.max_wall_ms = 2000 + 3000;
    c.expect.host_checks = {HostCheck::kFollowUpRunWorks};
  });
  t.Add("limits", "memory_bomb", c_py, "allocate until the memory limit", Enforced({RunStatus::kMemoryLimit}),
        [](SelftestCase& c) { c.memory_mb = 64; });
  t.Add("limits", "disk_fill", c_py, "fill the work dir until ENOSPC", Denied(), [](SelftestCase& c) {
    c.memory_mb = 256;
    c.expect.verdict_contains = {"ENOSPC"};
    c.expect.max_count = 256ull << 20;
  });
  for (const char* stem : {"infinite_loop", "sleep_forever"}) {
    t.Add("limits", stem, stem == std::string("sleep_forever") ? std::vector<std::string>{"c", "py", "sh"} : c_py,
          stem == std::string("sleep_forever") ? "sleep 1000 s" : "spin forever", Enforced({RunStatus::kTimeout}),
          [](SelftestCase& c) {
            c.timeout_ms = 1000;
            c.expect.min_wall_ms = 950;
            c.expect.max_wall_ms = 1000 + 1500;
          });
  }
  t.Add("limits", "output_flood", c_py, "write to stdout forever", Enforced({RunStatus::kOutputLimit}),
        [](SelftestCase& c) { c.expect.stdout_truncated = true; });
  t.Add("limits", "fd_exhaustion", c_py, "open files until EMFILE", Denied(), [](SelftestCase& c) {
    c.expect.verdict_contains = {"EMFILE"};
    c.expect.max_count = 256;
  });
  t.Add("limits", "orphan", c_py, "leave a setsid() daemon behind", Enforced({RunStatus::kOk}),
        [](SelftestCase& c) {
          c.expect.verdict_prefix = "STARTED:";
          c.expect.host_checks = {HostCheck::kNoMarkerProcess};
        });
  t.Add("limits", "symlink_output", c_py, "symlinks to host files requested as output files",
        Enforced({RunStatus::kOk}), [](SelftestCase& c) {
          c.expect.verdict_prefix = "STARTED:";
          c.expect.host_checks = {HostCheck::kNoSymlinkFollowed};
          c.output_globs = {"normal.txt", "out.txt", "secret_link.txt", "linkdir/passwd", "environ.txt"};
        });

  // Allowed: ordinary programs work.
  t.Add("allowed", "arithmetic", {"c", "cpp", "py", "js", "ts", "rb", "php", "sh"}, "plain computation", Allowed());
  t.Add("allowed", "stdout_stderr", c_py, "write to stdout and stderr", Allowed(),
        [](SelftestCase& c) { c.expect.stderr_contains = {"to-stderr"}; });
  t.Add("allowed", "read_stdin", c_py, "read stdin", Allowed(), [](SelftestCase& c) {
    c.stdin_data = "airlock-stdin-payload\n";
    c.expect.verdict_contains = {"22 bytes"};
  });
  t.Add("allowed", "workdir_file", c_py, "write and read a file in /work", Allowed());
  t.Add("allowed", "child_process", c_py, "spawn a child process", Allowed());
  t.Add("allowed", "threads", c_py, "run threads", Allowed());
  t.Add("allowed", "numpy_pandas", {"py"}, "import numpy and pandas", Allowed(),
        [](SelftestCase& c) { c.timeout_ms = 30'000; });
  t.Add("allowed", "syntax_error", {"py", "js"}, "a syntax error is a result", Enforced({RunStatus::kExitNonzero}),
        [](SelftestCase& c) {
          c.expect.kind = Expected::kAllowed;
          c.expect.stderr_contains = {"SyntaxError"};
        });
  t.Add("allowed", "syntax_error", {"c"}, "a syntax error is a compile_error result",
        Enforced({RunStatus::kCompileError}), [](SelftestCase& c) {
          c.expect.kind = Expected::kAllowed;
          c.expect.compile_output_contains = {"error"};
        });
  t.Add("allowed", "runtime_error", {"py"}, "1/0 is a result with the traceback",
        Enforced({RunStatus::kExitNonzero}), [](SelftestCase& c) {
          c.expect.kind = Expected::kAllowed;
          c.expect.stderr_contains = {"ZeroDivisionError"};
        });
  t.Add("allowed", "runtime_error", {"js"}, "an uncaught exception is a result", Enforced({RunStatus::kExitNonzero}),
        [](SelftestCase& c) {
          c.expect.kind = Expected::kAllowed;
          c.expect.stderr_contains = {"TypeError"};
        });
  t.Add("allowed", "runtime_error", {"rb"}, "an uncaught exception is a result", Enforced({RunStatus::kExitNonzero}),
        [](SelftestCase& c) {
          c.expect.kind = Expected::kAllowed;
          c.expect.stderr_contains = {"ZeroDivisionError"};
        });
  return t.Take();
}

std::vector<SelftestCase> WasmTierContainmentCases() {
  // The interpreters (C and C++ need clang-16 and wasi-libc on the host,
  // which an image may leave out; their tier has its own tests).
  const std::vector<std::string> interpreters = {"py", "rb", "php"};
  const HostCheck kNet = HostCheck::kNoListenerContact;
  // A cold interpreter in the engine takes seconds of CPU on a loaded or
  // CPU-capped host: the cases' clocks allow for it.
  auto wasm = [](SelftestCase& c) {
    c.isolation = "wasm";
    c.name += "_wasm";
    c.timeout_ms = 30'000;
  };
  CaseTable t;
  // (Python's and Ruby's programs import their socket libraries, which
  // their WASI builds do not have: an ImportError/LoadError, not a verdict.)
  t.Add("network", "net_tcp4", {"php"}, "TCP to a host listener on 127.0.0.1 (no sockets in WASI)",
        Denied({kNet}), wasm);
  t.Add("secrets", "read_secret_file", interpreters, "read a file planted on the host (also via /proc/*/root)",
        Denied(), wasm);
  t.Add("secrets", "secret_env", interpreters, "read a secret variable of the supervisor's environment", Denied(),
        wasm);
  t.Add("limits", "infinite_loop", {"py"}, "spin forever", Enforced({RunStatus::kTimeout}), [&](SelftestCase& c) {
    wasm(c);
    c.timeout_ms = 3000;
    c.expect.min_wall_ms = 2950;
    c.expect.max_wall_ms = 3000 + 3000;
  });
  t.Add("limits", "output_flood", {"py"}, "write to stdout forever", Enforced({RunStatus::kOutputLimit}),
        [&](SelftestCase& c) {
          wasm(c);
          c.expect.stdout_truncated = true;
        });
  t.Add("allowed", "arithmetic", {"py", "js", "rb", "php"}, "plain computation", Allowed(), wasm);
  return t.Take();
}

}  // namespace airlock::selftest
