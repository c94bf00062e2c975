#include "jail/init/init.h"

#include <fcntl.h>
#include <poll.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <optional>

#include "base/encoding.h"
#include "jail/channel.h"
#include "jail/init/files.h"
#include "jail/init/jail_fs.h"
#include "jail/init/program.h"

namespace airlock::jail {
namespace {

using nlohmann::json;

std::vector<std::string> StringList(const json& j, const char* key) {
  std::vector<std::string> out;
  if (j.contains(key) && j[key].is_array())
    for (const auto& v : j[key]) if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

uint64_t U64(const json& j, const char* key, uint64_t def) {
  return j.contains(key) && j[key].is_number_unsigned() ? j[key].get<uint64_t>() : def;
}

// Init keeps only CAP_SETFCAP: the kernel (>= 5.12) lets a process map its
// parent's uid 0 into a new user namespace only if it held CAP_SETFCAP when
// it unshared, and each program's nested namespace maps exactly that.
void DropInitCapabilities() {
  for (int cap = 0; cap <= CAP_LAST_CAP; ++cap)
    if (cap != CAP_SETFCAP) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  data[0].effective = data[0].permitted = 1u << CAP_SETFCAP;
  syscall(SYS_capset, &header, data);
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

Status Setup(const json& msg, FsSetup* fs) {
  fs->ro_paths = StringList(msg, "ro_paths");
  fs->optional_paths = StringList(msg, "optional_paths");
  if (auto it = msg.find("mapped_paths"); it != msg.end() && it->is_array()) {
    for (const json& pair : *it) {
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string())
        return InvalidArgument("mapped_paths entries must be [host, jail] path pairs");
      fs->mapped_paths.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
    }
  }
  fs->work_bytes = U64(msg, "work_bytes", fs->work_bytes);
  fs->work_inodes = U64(msg, "work_inodes", fs->work_inodes);
  fs->sandbox_uid = static_cast<uint32_t>(U64(msg, "sandbox_uid", fs->sandbox_uid));
  if (msg.contains("hostname") && msg["hostname"].is_string()) fs->hostname = msg["hostname"];
  fs->mapped_fds_from = static_cast<int>(U64(msg, "mapped_fds_from", 0));
  if (unshare(CLONE_NEWCGROUP) != 0) return ErrnoError("unshare cgroup namespace");
  Status built = BuildJailFilesystem(*fs);
  // The mapped binds' source fds (jail.cc) reach host files: none may
  // survive into anything init runs.
  if (fs->mapped_fds_from > 0 && !fs->mapped_paths.empty()) {
    const unsigned first = static_cast<unsigned>(fs->mapped_fds_from);
    syscall(SYS_close_range, first, first + static_cast<unsigned>(fs->mapped_paths.size()) - 1, 0);
  }
  AIRLOCK_RETURN_IF_ERROR(built);
  DropInitCapabilities();
  return OkStatus();
}

// Reads the program half of an exec or start message (everything but files
// and outputs) into `spec`; returns an error text, or "" when well-formed.
std::string ParseProgram(const json& m, const FsSetup& fs, ProgramSpec* spec) {
  spec->argv = StringList(m, "argv");
  spec->env = StringList(m, "env");
  spec->cwd = m.value("cwd", "/work");
  spec->sandbox_uid = fs.sandbox_uid;
  spec->cpu_seconds = U64(m, "cpu_seconds", 0);
  spec->max_file_bytes = U64(m, "max_file_bytes", 0);
  spec->max_open_files = U64(m, "max_open_files", 256);
  spec->max_stack_bytes = U64(m, "max_stack_bytes", 8u << 20);
  std::string bpf;
  if (!Base64Decode(m.value("seccomp_b64", ""), &bpf) || bpf.empty() || bpf.size() % sizeof(sock_filter) != 0) {
    return "missing or malformed seccomp program";
  }
  spec->seccomp.instructions.resize(bpf.size() / sizeof(sock_filter));
  std::memcpy(spec->seccomp.instructions.data(), bpf.data(), bpf.size());
  return "";
}

// Writes the message's "files" into /work; returns an error text or "".
std::string WriteFiles(const json& m, int work_fd) {
  std::vector<FileEntry> inputs;
  if (m.contains("files") && m["files"].is_array()) {
    for (const auto& f : m["files"]) {
      FileEntry e;
      e.name = f.value("name", "");
      e.executable = f.value("executable", false);
      if (!Base64Decode(f.value("content_b64", ""), &e.content)) return "bad input file encoding: " + e.name;
      inputs.push_back(std::move(e));
    }
  }
  if (Status st = WriteInputFiles(work_fd, inputs); !st.ok()) return "writing input files: " + st.message();
  return "";
}

// The "exited" reply: the program's status and the output files it left.
json ExitReply(const ProgramExit& exit, const json& m, int work_fd) {
  json reply = {{"type", "exited"}, {"exit_code", exit.exit_code}, {"signal", exit.signal}, {"cpu_ms", exit.cpu_ms}};
  if (!exit.exec_error.empty()) reply["exec_error"] = exit.exec_error;
  const OutputFileLimits defaults;
  const OutputFileLimits limits{static_cast<uint32_t>(U64(m, "max_output_files", defaults.max_files)),
                                 U64(m, "max_output_file_bytes", defaults.max_file_bytes),
                                 U64(m, "max_output_files_total_bytes", defaults.max_total_bytes)};
  CollectedOutputs collected = CollectOutputFiles(work_fd, StringList(m, "output_globs"), limits);
  json files = json::array();
  for (CollectedFile& f : collected.files) {
    files.push_back({{"name", f.name}, {"content_b64", Base64Encode(f.content)}, {"size", f.size},
                     {"truncated", f.truncated}});
    std::string().swap(f.content);  // at most one copy of each file's bytes at a time
  }
  auto notes = [](const std::vector<FileNote>& list) {
    json a = json::array();
    for (const FileNote& n : list) a.push_back({{"name", n.name}, {"size", n.size}, {"reason", n.reason}});
    return a;
  };
  reply["files_skipped"] = notes(collected.skipped);
  reply["files_left"] = notes(collected.left);
  reply["files"] = std::move(files);
  return reply;
}

json ExecError(const std::string& why) { return {{"type", "exited"}, {"exec_error", why}}; }

json Exec(ChannelMessage& msg, const FsSetup& fs) {
  const json& m = msg.body;
  if (msg.fds.size() != 3 && msg.fds.size() != 4) {
    return ExecError("exec message needs stdin, stdout, stderr (and optionally bridge) fds");
  }
  UniqueFd work(open("/work", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (std::string err = WriteFiles(m, work.get()); !err.empty()) return ExecError(err);
  ProgramSpec spec;
  if (std::string err = ParseProgram(m, fs, &spec); !err.empty()) return ExecError(err);
  spec.stdin_fd = msg.fds[0].get();
  spec.stdout_fd = msg.fds[1].get();
  spec.stderr_fd = msg.fds[2].get();
  if (msg.fds.size() == 4) spec.bridge_fd = msg.fds[3].get();

  StartedProgram started = StartProgram(spec);
  // Our copies of the pipes must close so the supervisor sees EOF.
  msg.fds.clear();
  return ExitReply(WaitProgram(started), m, work.get());
}

// A program started ahead of its input (Jail::Start), waiting on fd 3; or
// an interactive one (Jail::StartInteractive) that stays running and is
// driven turn by turn over its own control channel (fd 3).
struct Pending {
  StartedProgram started;
  UniqueFd resume;  // write end of the program's fd 3 (fd 4 when bridged); empty when interactive
  bool interactive = false;
  bool watched_out = false;  // its exit was reported (program_exited)
};

// "start": starts the program with fd 3 the read end of a pipe whose write
// end init keeps until "resume"; with a fourth fd (interactive), fd 3 is
// that channel instead and the program is never resumed, only turned. With
// a fourth fd and "bridged": true (a pre-started code-mode program), fd 3 is
// that fd (its bridge) and the resume pipe is fd 4.
json Start(ChannelMessage& msg, const FsSetup& fs, std::optional<Pending>* pending) {
  const json& m = msg.body;
  if (pending->has_value()) return {{"type", "start_failed"}, {"message", "a program is already started"}};
  const bool bridged = m.contains("bridged") && m["bridged"].is_boolean() && m["bridged"].get<bool>();
  const bool fds_ok = bridged ? msg.fds.size() == 4 : (msg.fds.size() == 3 || msg.fds.size() == 4);
  if (!fds_ok) {
    return {{"type", "start_failed"}, {"message", "start needs stdin, stdout, stderr (and a control or bridge) fds"}};
  }
  const bool interactive = msg.fds.size() == 4 && !bridged;
  ProgramSpec spec;
  if (std::string err = ParseProgram(m, fs, &spec); !err.empty()) {
    return {{"type", "start_failed"}, {"message", err}};
  }
  UniqueFd resume_read, resume_write;
  if (!interactive) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return {{"type", "start_failed"}, {"message", "pipe failed"}};
    resume_read.Reset(p[0]);
    resume_write.Reset(p[1]);
  }
  spec.stdin_fd = msg.fds[0].get();
  spec.stdout_fd = msg.fds[1].get();
  spec.stderr_fd = msg.fds[2].get();
  // fd 3: the control channel or the bridge when one was sent, else the
  // resume pipe; a bridged program's resume pipe is fd 4.
  spec.bridge_fd = msg.fds.size() == 4 ? msg.fds[3].get() : resume_read.get();
  if (bridged) spec.resume_fd = resume_read.get();
  StartedProgram started = StartProgram(spec);
  msg.fds.clear();
  resume_read.Reset();
  if (!started.exec_error.empty()) {
    const ProgramExit exit = WaitProgram(started);
    return {{"type", "start_failed"}, {"message", exit.exec_error}};
  }
  *pending = Pending{std::move(started), std::move(resume_write), interactive, false};
  return {{"type", "started"}};
}

// "turn_begin": the input files of one turn of an interactive program.
json TurnBegin(const ChannelMessage& msg, const std::optional<Pending>& pending) {
  if (!pending.has_value() || !pending->interactive) {
    return {{"type", "turn_failed"}, {"message", "no interactive program is running in this jail"}};
  }
  UniqueFd work(open("/work", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (std::string err = WriteFiles(msg.body, work.get()); !err.empty()) {
    return {{"type", "turn_failed"}, {"message", err}};
  }
  return {{"type", "turn_ready"}};
}

// "turn_end": nothing a turn started may outlive it but the program
// itself; then the turn's output files, and whether the program still runs.
json TurnEnd(const ChannelMessage& msg, std::optional<Pending>* pending) {
  if (!pending->has_value() || !(*pending)->interactive) {
    return {{"type", "turn_failed"}, {"message", "no interactive program is running in this jail"}};
  }
  std::optional<ProgramExit> exit = KillAllBut((*pending)->started.pid);
  UniqueFd work(open("/work", O_PATH | O_DIRECTORY | O_CLOEXEC));
  ProgramExit status = exit.value_or(ProgramExit{});
  json reply = ExitReply(status, msg.body, work.get());
  reply["type"] = "turn_done";
  reply["alive"] = !exit.has_value();
  if (exit.has_value()) pending->reset();
  return reply;
}

// CPU seconds `pid` has used so far (utime + stime of /proc/PID/stat, to
// the nearest second: an interpreter's few milliseconds leave the run's
// limit exactly as a cold run's), or 0 when they cannot be read.
uint64_t CpuSecondsUsed(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  UniqueFd fd(open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return 0;
  char buf[1024];
  const ssize_t n = read(fd.get(), buf, sizeof buf - 1);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char* p = strrchr(buf, ')');  // the name may hold anything
  if (p == nullptr) return 0;
  // After ") ": state is field 3; utime and stime are fields 14 and 15.
  unsigned long long utime = 0, stime = 0;
  if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2) return 0;
  const long hz = sysconf(_SC_CLK_TCK);
  if (hz <= 0) return 0;
  return (utime + stime + static_cast<unsigned long long>(hz) / 2) / static_cast<unsigned long long>(hz);
}

// "resume": writes the input files, sets RLIMIT_CPU to the run's (on top
// of what the program used while it started and waited), hands
// the started program its arguments (each NUL-terminated) and the EOF that
// says go, then waits for it like "exec".
json Resume(const ChannelMessage& msg, std::optional<Pending>* pending) {
  const json& m = msg.body;
  if (!pending->has_value() || (*pending)->interactive) return ExecError("nothing was started in this jail");
  Pending p = std::move(**pending);
  pending->reset();
  UniqueFd work(open("/work", O_PATH | O_DIRECTORY | O_CLOEXEC));
  std::string err = WriteFiles(m, work.get());
  if (uint64_t cpu = U64(m, "cpu_seconds", 0); err.empty() && cpu != 0) {
    // A pre-started interpreter's start-up (a WASM engine compiling its
    // module: seconds) is not the run's: the run gets its whole budget.
    cpu += CpuSecondsUsed(p.started.pid);
    rlimit rl{cpu, cpu + 1};
    if (prlimit(p.started.pid, RLIMIT_CPU, &rl, nullptr) != 0) err = std::string("prlimit: ") + strerror(errno);
  }
  if (!err.empty()) {
    kill(p.started.pid, SIGKILL);
    (void)WaitProgram(p.started);
    return ExecError(err);
  }
  std::string frame;
  for (const std::string& a : StringList(m, "args")) frame += a + '\0';
  // A program that died before its input sees nothing; its exit says why.
  for (size_t off = 0; off < frame.size();) {
    ssize_t n = write(p.resume.get(), frame.data() + off, frame.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  p.resume.Reset();
  return ExitReply(WaitProgram(p.started), m, work.get());
}

}  // namespace

int InitMain(int channel_fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  prctl(PR_SET_DUMPABLE, 0);
  prctl(PR_SET_NAME, "airlock-init");
  // PID 1 gets no default signal actions; make sure a stray SIGPIPE from a
  // dead supervisor does not keep us alive or kill us mid-reply oddly.
  signal(SIGPIPE, SIG_IGN);

  FsSetup fs;
  StatusOr<ChannelMessage> first = ReceiveMessage(channel_fd);
  if (!first.ok()) return 1;
  if (first->body.value("type", "") != "setup") {
    (void)SendMessage(channel_fd, {{"type", "error"}, {"message", "expected setup"}});
    return 1;
  }
  if (Status st = Setup(first->body, &fs); !st.ok()) {
    (void)SendMessage(channel_fd, {{"type", "error"}, {"message", st.message()}});
    return 1;
  }
  if (!SendMessage(channel_fd, {{"type", "ready"}}).ok()) return 1;

  std::optional<Pending> pending;
  UniqueFd watched;  // a pidfd of the interactive program, until it exits
  for (;;) {
    // An interactive program may end between messages (its last process
    // holding its pipes may be a child that keeps them open): say so at
    // once, so a turn in flight does not wait for its clock.
    if (!pending.has_value() || !pending->interactive || pending->watched_out) {
      watched.Reset();
    } else if (!watched) {
      watched.Reset(static_cast<int>(syscall(SYS_pidfd_open, pending->started.pid, 0)));
    }
    if (watched) {
      pollfd fds[2] = {{channel_fd, POLLIN, 0}, {watched.get(), POLLIN, 0}};
      if (poll(fds, 2, -1) < 0 && errno != EINTR) break;
      if (fds[1].revents != 0) {
        watched.Reset();
        if (!SendMessage(channel_fd, {{"type", "program_exited"}}).ok()) break;
        // Not reaped here: turn_end reports its status.
        pending->watched_out = true;
      }
      if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    }
    StatusOr<ChannelMessage> msg = ReceiveMessage(channel_fd);
    if (!msg.ok()) break;  // supervisor gone: exiting tears the jail down
    const std::string type = msg->body.value("type", "");
    if (type == "exec") {
      if (!SendMessage(channel_fd, Exec(*msg, fs)).ok()) break;
    } else if (type == "start") {
      if (!SendMessage(channel_fd, Start(*msg, fs, &pending)).ok()) break;
    } else if (type == "resume") {
      if (!SendMessage(channel_fd, Resume(*msg, &pending)).ok()) break;
    } else if (type == "turn_begin") {
      if (!SendMessage(channel_fd, TurnBegin(*msg, pending)).ok()) break;
    } else if (type == "turn_end") {
      if (!SendMessage(channel_fd, TurnEnd(*msg, &pending)).ok()) break;
    } else {
      (void)SendMessage(channel_fd, {{"type", "error"}, {"message", "unknown message type"}});
    }
  }
  kill(-1, SIGKILL);
  return 0;
}

}  // namespace airlock::jail
