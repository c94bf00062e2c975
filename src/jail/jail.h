// A jail: fresh namespaces, a minimal read-only root, a private work dir and
// a cgroup, into which programs are handed one after another.
//
// Lifecycle:
//   StatusOr<std::unique_ptr<Jail>> jail = Jail::Create(host, config);
//   ExecResult r1 = (*jail)->Exec(compile_request, cancel);   // e.g. gcc
//   ExecResult r2 = (*jail)->Exec(run_request, cancel);       // ./main
//   jail->reset();  // kills everything inside, removes cgroup; mounts vanish
//                   // with the mount namespace. Nothing is left behind.
//
// Creation and Exec are separate so that a jail can be created ahead of time
// (a warm pool) and handed its program later. A pool can go further and
// start the program before its input exists (an interpreter that loads and
// then waits on fd 3), and hand the input over later:
//   (*jail)->Start(interpreter_request);         // ahead of time
//   ExecResult r = (*jail)->Resume(input, cancel);  // args, stdin, files
//
// A program's stdin is a pipe the supervisor feeds while it runs; stdout and
// stderr are pipes it drains.
//
// Layout inside every jail:
//   /usr /lib /lib64 /bin /sbin /etc/... read-only, nosuid, nodev binds of the
//                                        host paths the config names
//   /dev                                 null zero full random urandom, fd
//                                        links, shm -> /tmp; nothing else
//   /proc                                fresh, pid-namespace-local, hidepid,
//                                        nosuid nodev noexec, /proc/sys ro
//   /work (cwd, $HOME) and /tmp          one private tmpfs (size, inodes)
//   /etc/passwd, /etc/group, /etc/hosts  synthetic
// The jail's PID 1 is `airlock-init` (never user code). Each program runs as
// uid/gid 65534 in a nested user namespace with no capabilities, no new
// privileges, its own session, rlimits, and the seccomp policy of the request.
#ifndef AIRLOCK_JAIL_JAIL_H_
#define AIRLOCK_JAIL_JAIL_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/cancel.h"
#include "base/status.h"
#include "base/unique_fd.h"
#include "jail/cgroup.h"
#include "jail/limits.h"
#include "jail/seccomp_policy.h"

namespace airlock::jail {

class JailHost;

// A host path made visible read-only at the same path inside the jail.
// Missing optional paths are skipped; a missing required path is an error.
struct BindMount {
  BindMount(std::string p, bool opt = true, std::string t = {})
      : path(std::move(p)), optional(opt), target(std::move(t)) {}

  std::string path;    // absolute host path, bound read-only
  bool optional = true;
  std::string target;  // where it appears in the jail; empty: at `path`.
                       // Must lie outside the base set (e.g. under /opt).
};

struct JailConfig {
  std::vector<BindMount> binds;  // in addition to the base set (see jail_fs.h)
  JailLimits limits;
  std::string hostname = "airlock";
};

struct FileEntry {
  std::string name;     // relative to /work
  std::string content;  // bytes
  bool executable = false;  // mode 0755 instead of 0644 (a cached build's binary)
};

// One program to run in the jail.
struct ExecRequest {
  std::vector<std::string> argv;  // argv[0] is an absolute path inside the jail
  std::vector<std::string> env;   // "KEY=value"; nothing is inherited
  std::string cwd = "/work";
  std::string stdin_data;
  std::vector<FileEntry> files;             // written to /work before the exec
  std::vector<std::string> output_globs;    // collected after the exit
  uint64_t max_output_file_bytes = OutputFileLimits{}.max_file_bytes;
  uint32_t max_output_files = OutputFileLimits{}.max_files;
  // All collected output files together; reading stops at this budget.
  uint64_t max_output_files_total_bytes = OutputFileLimits{}.max_total_bytes;
  Limits limits;
  const BpfProgram* seccomp = nullptr;  // required; owned by the caller
  // Optional extra channel (e.g. one end of a socketpair) that the program
  // gets as fd 3; the caller keeps ownership of its own end.
  int bridge_fd = -1;
};

// What a program started ahead of its input (Jail::Start) is handed when it
// resumes: the rest of a run.
struct ResumeRequest {
  // Written to the program's fd 3 (fd 4 after StartBridged), each followed
  // by a NUL byte, then EOF: the program's signal to go.
  std::vector<std::string> args;
  std::string stdin_data;
  std::vector<FileEntry> files;  // written to /work before the program is told to go
  std::vector<std::string> output_globs;
  uint64_t max_output_file_bytes = OutputFileLimits{}.max_file_bytes;
  uint32_t max_output_files = OutputFileLimits{}.max_files;
  // All collected output files together; reading stops at this budget.
  uint64_t max_output_files_total_bytes = OutputFileLimits{}.max_total_bytes;
  // wall_ms, cpu_ms (lowered with prlimit; it can only go down from what
  // Start set) and the output caps apply from the resume on; the other
  // rlimits are those given to Start.
  Limits limits;
};

struct CollectedFile {
  std::string name;
  std::string content;
  uint64_t size = 0;
  bool truncated = false;
};

// A regular file in /work that was not returned: one the output globs
// matched but a cap left out (reason "max_output_files" or
// "max_output_files_total_bytes"), or one no glob matched (reason
// "not_requested"), so the caller can be told what is there.
struct FileNote {
  std::string name;
  uint64_t size = 0;
  std::string reason;
};

struct ExecResult {
  enum class Outcome {
    kExited,       // exit_code is valid
    kSignaled,     // signal is valid (oom_killed tells whether memory was why)
    kTimedOut,     // wall-clock deadline; the jail is dead
    kOutputLimit,  // stdout/stderr cap exceeded; the jail is dead
    kCancelled,    // the cancel token fired; the jail is dead
    kExecFailed,   // the program could not be started (error says why)
    kJailError,    // the jail failed (error says why); the jail is dead
  };
  Outcome outcome = Outcome::kJailError;
  int exit_code = -1;
  int signal = 0;
  bool oom_killed = false;
  bool pids_limit_hit = false;
  std::string stdout_data;
  std::string stderr_data;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  uint64_t wall_ms = 0;
  uint64_t cpu_ms = 0;
  uint64_t peak_memory_bytes = 0;
  std::vector<CollectedFile> files;
  // Matched files left out by the count or total-bytes cap, then files no
  // glob matched; each list bounded (jail/init/files.h).
  std::vector<FileNote> files_skipped;
  std::vector<FileNote> files_left;
  std::string error;
};

const char* OutcomeName(ExecResult::Outcome o);

// One turn of an interactive program (Jail::StartInteractive): what the
// supervisor hands it and how the turn's end is recognised. The jail knows
// nothing of the program's language: the message is opaque bytes, and the
// program says it is done by writing `end_marker` to stdout and to stderr,
// then one line (ending in '\n') to its control channel.
struct TurnRequest {
  std::string message;             // written to the program's fd 3
  std::string end_marker;          // unguessable per turn; never part of the output
  std::vector<FileEntry> files;    // written to /work before the message
  std::vector<std::string> output_globs;
  uint64_t max_output_file_bytes = OutputFileLimits{}.max_file_bytes;
  uint32_t max_output_files = OutputFileLimits{}.max_files;
  // All collected output files together; reading stops at this budget.
  uint64_t max_output_files_total_bytes = OutputFileLimits{}.max_total_bytes;
  // wall_ms (the turn's clock), max_stdout_bytes, max_stderr_bytes and
  // kill_on_output_limit apply to the turn; the rest were set at the start.
  Limits limits;
  size_t max_reply_bytes = 64 << 10;
  // >= 0: a descriptor handed to the program with the message (SCM_RIGHTS,
  // attached to its first byte), e.g. a per-turn bridge; the caller keeps
  // its own copy. The program owns what it receives; the turn's end kills
  // every other process, so only the program can keep it past the turn.
  int pass_fd = -1;
};

struct TurnResult {
  // outcome kExited with exit_code 0 when the program answered (reply is
  // set) and still runs. When the program ended during the turn: kExited or
  // kSignaled with its status, and program_alive is false. Timeouts, output
  // limits, cancellation and jail errors kill the jail as in Exec.
  ExecResult exec;
  std::string reply;        // the program's reply line, without the '\n'
  bool replied = false;
  bool program_alive = false;
};

class Jail {
 public:
  // Creates namespaces, cgroup, and the filesystem; returns once PID 1 inside
  // reports ready. `host` must outlive the jail.
  static StatusOr<std::unique_ptr<Jail>> Create(JailHost& host, const JailConfig& config);

  ~Jail();
  Jail(const Jail&) = delete;
  Jail& operator=(const Jail&) = delete;

  // Runs one program to completion under request.limits. Thread-compatible:
  // one Exec at a time per jail. After a timeout, output limit, cancellation
  // or jail error the jail is dead and further Execs return kJailError.
  ExecResult Exec(const ExecRequest& request, CancelToken* cancel);

  // Starts `request`'s program (argv, env, cwd, limits, seccomp) without its
  // input: it runs until it reads fd 3, which gives nothing until Resume. A
  // warm pool uses this to have an interpreter loaded and waiting. stdin,
  // files, output_globs and bridge_fd must be empty. Returns once the
  // program's execve succeeded; an error leaves the jail alive but unstarted.
  Status Start(const ExecRequest& request);

  // Start for a program that talks to its supervisor while it runs (code
  // mode's bridge): its fd 3 is one end of a new socketpair and it waits
  // for its input on fd 4. The jail keeps the other end until TakeBridge.
  Status StartBridged(const ExecRequest& request);

  // The supervisor's end of a started program's bridge (StartBridged), once;
  // empty otherwise. The caller owns it from then on.
  UniqueFd TakeBridge() { return std::move(started_bridge_); }

  // Hands the started program its input and supervises it like Exec, with
  // the wall clock starting now. Without a started program: kJailError.
  //
  // Exec and Resume first give every thread in the jail the calling
  // thread's CPU priority: a pool may make jails at a lower one (nice), and
  // a run must not inherit it. Failing that, the run is not started.
  ExecResult Resume(const ResumeRequest& request, CancelToken* cancel);

  // Starts `request`'s program to stay running and be driven in turns
  // (sessions): its fd 3 is a control channel (a socket) to the supervisor,
  // its stdin is at EOF, its stdout and stderr are pipes the supervisor
  // keeps. request.limits' rlimits (cpu_ms: the whole session's CPU) hold
  // for the program's life. stdin, files, output_globs and bridge_fd must
  // be empty. Returns once the program's execve succeeded.
  Status StartInteractive(const ExecRequest& request);

  // One turn: writes request.files to /work, sends request.message, and
  // collects stdout and stderr up to request.end_marker and the program's
  // reply line, under the turn's wall clock. Then every other process in
  // the jail is killed (what the turn left in the background) and
  // request.output_globs are collected. One turn at a time per jail.
  TurnResult Turn(const TurnRequest& request, CancelToken* cancel);

  // Freezes (true) or thaws (false) every process of the jail, init
  // included (cgroup freezer): between a session's turns nothing in it may
  // compute. Turn thaws first by itself; Kill works on a frozen jail.
  // FailedPrecondition without a cgroup freezer.
  Status SetFrozen(bool frozen);

  // Whether an interactive program is running (StartInteractive).
  bool interactive() const { return interactive_; }

  // Whether a program is started and waiting for Resume.
  bool started() const { return started_; }

  bool alive() const { return alive_; }

  // Whether the jail can still take a run, checked now without blocking:
  // it is alive, its init has not exited and, when a program is started,
  // that program is still waiting (it has not closed both its stdout and
  // its stderr, which the pre-start harnesses do only by exiting). A pool asks this before handing a jail
  // out, so a pre-started interpreter that died while waiting (killed by
  // the OOM killer, say) costs a cold start rather than a failed run.
  bool Usable() const;
  pid_t init_pid() const { return init_pid_; }

  // Kills everything in the jail now (idempotent).
  void Kill();

 private:
  Jail() = default;
  // The stdio pipes of one program: the jail-side ends (sent to init) and
  // the supervisor's.
  struct Stdio {
    UniqueFd in_read, in_write, out_read, out_write, err_read, err_write;
  };
  static StatusOr<Stdio> MakeStdio(size_t stdin_bytes);
  // Start and StartInteractive: sends the program to init (with
  // `control_fd` as its fd 3 when >= 0) and waits until it runs.
  // `bridged`: control_fd is a bridge and the program resumes on fd 4.
  StatusOr<Stdio> Launch(const ExecRequest& request, int control_fd, bool bridged = false);
  // Sets every thread in the jail's cgroup to the calling thread's nice
  // value (a no-op when they have it already), listing the threads again
  // until a pass changes nothing (threads still being started).
  Status MatchCallerPriority();
  ExecResult Supervise(const Limits& limits, const std::string& stdin_data, Stdio stdio, CancelToken* cancel);

  JailHost* host_ = nullptr;
  JailConfig config_;
  pid_t init_pid_ = -1;
  UniqueFd pidfd_;
  UniqueFd channel_;
  std::unique_ptr<Cgroup> cgroup_;
  int uid_slot_ = -1;
  bool alive_ = false;
  bool reaped_ = false;
  bool started_ = false;
  Stdio started_stdio_;  // the supervisor's ends while a program is started
  UniqueFd started_bridge_;  // StartBridged: the supervisor's end until TakeBridge
  bool interactive_ = false;
  UniqueFd control_;     // the supervisor's end of an interactive program's fd 3
  bool program_exited_ = false;  // init reported the interactive program's end
  bool frozen_ = false;          // SetFrozen(true) and not thawed since
  // Sends one message to init and waits (bounded) for its reply.
  StatusOr<nlohmann::json> Ask(const nlohmann::json& message);
};

}  // namespace airlock::jail

#endif  // AIRLOCK_JAIL_JAIL_H_
