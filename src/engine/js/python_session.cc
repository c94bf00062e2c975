#include "engine/js/python_session.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/fd_passing.h"
#include "base/file_io.h"
#include "base/unique_fd.h"
#include "engine/js/wasm_command.h"
#include "engine/js/write_all.h"
#include "wasm/session_image.h"

namespace airlock::engine::js {
namespace {

constexpr char kStackPointer[] = "__stack_pointer";
constexpr size_t kMaxCommand = 256;
constexpr uint64_t kMaxImage = 4ull << 30;

WasmOutcome Error(std::string message) {
  WasmOutcome out;
  out.kind = WasmOutcome::Kind::kError;
  out.message = std::move(message);
  return out;
}

// The first byte waiting on the control descriptor, without taking it; 0
// at EOF, -1 on error.
int PeekByte(int fd, char* c) {
  for (;;) {
    const ssize_t n = ::recv(fd, c, 1, MSG_PEEK);
    if (n < 0 && errno == EINTR) continue;
    return n < 0 ? -1 : static_cast<int>(n);
  }
}

// One command line ("!verb nonce\n"), taken byte by byte so that nothing
// after it is consumed, and the descriptor that came with its first byte
// (the image's file).
bool ReadCommand(int fd, std::string* verb, std::string* nonce, UniqueFd* image) {
  std::string line;
  for (;;) {
    char c;
    std::vector<UniqueFd> fds;
    const ssize_t n = line.empty() ? ReceiveWithFds(fd, &c, 1, &fds) : ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (!fds.empty()) *image = std::move(fds.front());
    if (n <= 0 || line.size() > kMaxCommand) return false;
    if (c == '\n') break;
    line.push_back(c);
  }
  const size_t sp = line.find(' ');
  if (line.empty() || line[0] != '!' || sp == std::string::npos) return false;
  *verb = line.substr(1, sp - 1);
  *nonce = line.substr(sp + 1);
  return !nonce->empty() && nonce->find_first_not_of("0123456789abcdef") == std::string::npos;
}

// Ends a command's turn as a harness ends a cell's: the markers on stdout
// and stderr, then the reply.
void Answer(int ctl, const std::string& nonce, const Status& st) {
  if (!st.ok()) (void)WriteAll(2, "airlock-js: " + st.message() + "\n");
  const std::string marker = "\x1e" "airlock-turn-end:" + nonce + "\x1e";
  (void)WriteAll(1, marker);
  (void)WriteAll(2, marker);
  (void)WriteAll(ctl, nonce + (st.ok() ? " ok 0\n" : " error 1\n"));
}

Status Snapshot(WasmInstance& inst, WasiGuest& g, int image_fd) {
  const WasiSessionHost& s = *g.session;
  if (image_fd < 0) return FailedPrecondition("no image file was handed over with the snapshot turn");
  std::optional<int32_t> sp = inst.GlobalI32(kStackPointer);
  if (!sp) return FailedPrecondition("the module exports no __stack_pointer: it cannot be saved");
  const std::string wasi_state = g.wasi.SaveState();
  std::span<uint8_t> memory = inst.Memory();
  // Past the session's file-size limit a write fails (EFBIG) instead of
  // killing the engine with SIGXFSZ; the cell's programs never see this.
  struct sigaction ignore{}, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGXFSZ, &ignore, &old);
  Status st = wasm::WriteSessionImage(image_fd, {.key = s.image_key, .stack_pointer = *sp, .memory = memory,
                                                 .wasi_state = wasi_state});
  sigaction(SIGXFSZ, &old, nullptr);
  if (!st.ok()) {
    return FailedPrecondition(st.message() + " (the image of " + std::to_string(memory.size() >> 20) +
                              " MiB of memory and the session's files must fit its file-size limit)");
  }
  return st;
}

StatusOr<std::string> ReadImage(int fd) {
  if (fd < 0) return FailedPrecondition("no image file was handed over with the restore turn");
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return FailedPrecondition("the image is not a file");
  if (static_cast<uint64_t>(st.st_size) > kMaxImage) return FailedPrecondition("the session image is too large");
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  StatusOr<size_t> got = PreadFull(fd, bytes.data(), bytes.size(), 0);
  if (!got.ok() || *got != bytes.size()) return FailedPrecondition("reading the session image failed");
  return bytes;
}

Status Restore(WasmInstance& inst, WasiGuest& g, int image_fd) {
  const WasiSessionHost& s = *g.session;
  AIRLOCK_ASSIGN_OR_RETURN(std::string bytes, ReadImage(image_fd));
  AIRLOCK_ASSIGN_OR_RETURN(wasm::SessionImage image, wasm::ParseSessionImage(bytes, s.image_key));
  if (!inst.GrowMemoryTo(image.memory_bytes)) {
    return FailedPrecondition("the image's memory (" + std::to_string(image.memory_bytes >> 20) +
                              " MiB) does not fit this session's cap");
  }
  std::span<uint8_t> memory = inst.Memory();
  // Every page as it was: the image's, and zero for the rest (the fresh
  // instance's data segments included, which the guest may have cleared).
  size_t next = 0;
  for (uint64_t page = 0; page * wasm::kSessionPage < memory.size(); ++page) {
    uint8_t* at = memory.data() + page * wasm::kSessionPage;
    if (next < image.pages.size() && image.pages[next].first == page) {
      std::memcpy(at, image.pages[next].second.data(), wasm::kSessionPage);
      ++next;
    } else if (std::any_of(at, at + wasm::kSessionPage, [](uint8_t b) { return b != 0; })) {
      std::memset(at, 0, wasm::kSessionPage);
    }
  }
  if (!inst.SetGlobalI32(kStackPointer, image.stack_pointer)) {
    return FailedPrecondition("the module's __stack_pointer cannot be set: it cannot be restored");
  }
  AIRLOCK_RETURN_IF_ERROR(g.wasi.LoadState(image.wasi_state));
  return s.sync_work ? s.sync_work() : OkStatus();
}

// A guest export's end, for the session: anything but a clean return ends it.
WasmOutcome Started(WasmInstance& inst, const char* name) {
  int32_t result = 0;
  WasmOutcome r = inst.Call(name, {}, &result);
  if (r.kind == WasmOutcome::Kind::kReturned && result != 0) {
    r.kind = WasmOutcome::Kind::kExited;
    r.exit_code = result;
  }
  return r;
}

}  // namespace

WasmOutcome RunPythonSession(WasiGuest& g) {
  if (g.session == nullptr || g.session->control_fd < 0) return Error("--wasi-session needs --control-fd");
  const int ctl = g.session->control_fd;
  WasmOutcome failure;
  std::unique_ptr<WasmInstance> inst = WasmInstance::Create(g.engine, g.module, g.imports, &failure, g.compiled);
  if (!inst) return failure;
  if (!inst->HasFunction("airlock_session_turn")) return Error("the module is not a session reactor");
  if (g.session->restore) {
    std::string verb, nonce;
    UniqueFd image;
    if (!ReadCommand(ctl, &verb, &nonce, &image) || verb != "restore") return Error("expected a restore turn first");
    Status st = Restore(*inst, g, image.get());
    Answer(ctl, nonce, st);
    if (!st.ok()) {
      WasmOutcome out;
      out.kind = WasmOutcome::Kind::kExited;
      out.exit_code = 1;
      return out;
    }
  } else {
    if (inst->HasFunction("_initialize")) {
      WasmOutcome r = inst->Call("_initialize", {});
      if (r.kind != WasmOutcome::Kind::kReturned) return r;
    }
    WasmOutcome r = Started(*inst, "airlock_session_init");
    if (r.kind != WasmOutcome::Kind::kReturned) return r;
  }
  for (;;) {
    char first = 0;
    const int got = PeekByte(ctl, &first);
    if (got < 0) return Error(std::string("reading the control channel: ") + std::strerror(errno));
    if (got == 0) break;  // the supervisor closed it: the session ends
    if (first == '!') {
      std::string verb, nonce;
      UniqueFd image;
      if (!ReadCommand(ctl, &verb, &nonce, &image) || verb != "snapshot") return Error("a malformed command turn");
      Answer(ctl, nonce, Snapshot(*inst, g, image.get()));
      continue;
    }
    WasmOutcome r = Started(*inst, "airlock_session_turn");
    if (r.kind != WasmOutcome::Kind::kReturned) return r;
  }
  WasmOutcome done;
  done.kind = WasmOutcome::Kind::kReturned;
  return done;
}

int PythonSessionMain(int argc, char** argv, const EngineOptions& base) {
  return WasiMainWith(argc, argv, base, RunPythonSession);
}

}  // namespace airlock::engine::js
