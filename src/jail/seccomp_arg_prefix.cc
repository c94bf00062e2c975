#include "jail/seccomp_arg_prefix.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace airlock::jail {
namespace {

// Jump targets inside the prefix; kEnd is the first instruction after it.
enum Label { kIoctl, kPrctl, kPersonality, kDenyEperm, kKill, kEnd, kNumLabels };

// A minimal assembler with forward labels, so no jump offset is hand-counted.
class BpfAssembler {
 public:
  void Bind(Label label) { labels_[label] = static_cast<int>(code_.size()); }
  void Load(uint32_t offset) { Emit(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset)); }
  void Return(uint32_t action) { Emit(BPF_STMT(BPF_RET | BPF_K, action)); }
  // if (A == k) goto target; else fall through.
  void JumpIfEqual(uint32_t k, Label target) { Jump(k, target, /*on_true=*/true); }
  // if (A != k) goto target; else fall through.
  void JumpIfNotEqual(uint32_t k, Label target) { Jump(k, target, /*on_true=*/false); }
  void Goto(Label target) {
    fixups_.push_back({code_.size(), target, Fixup::kAlways});
    Emit(BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0));
  }

  std::vector<sock_filter> Finish() {
    Bind(kEnd);
    for (const Fixup& f : fixups_) {
      const auto offset = static_cast<uint32_t>(labels_[f.target] - static_cast<int>(f.at) - 1);
      sock_filter& insn = code_[f.at];
      if (f.field == Fixup::kAlways) {
        insn.k = offset;
      } else if (f.field == Fixup::kTrue) {
        insn.jt = static_cast<uint8_t>(offset);
      } else {
        insn.jf = static_cast<uint8_t>(offset);
      }
    }
    return std::move(code_);
  }

 private:
  struct Fixup {
    enum Field { kTrue, kFalse, kAlways };
    size_t at;
    Label target;
    Field field;
  };

  void Jump(uint32_t k, Label target, bool on_true) {
    fixups_.push_back({code_.size(), target, on_true ? Fixup::kTrue : Fixup::kFalse});
    Emit(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, 0, 0));
  }
  void Emit(sock_filter insn) { code_.push_back(insn); }

  std::vector<sock_filter> code_;
  std::vector<Fixup> fixups_;
  std::array<int, kNumLabels> labels_{};
};

constexpr uint32_t kNrOffset = offsetof(seccomp_data, nr);
constexpr uint32_t kArchOffset = offsetof(seccomp_data, arch);
// Low 32 bits of argument `i` (x86_64 is little-endian).
constexpr uint32_t ArgLow(int i) { return offsetof(seccomp_data, args) + 8 * i; }

}  // namespace

std::vector<sock_filter> SeccompArgumentPrefix() {
  BpfAssembler a;
  a.Load(kArchOffset);
  a.JumpIfNotEqual(AUDIT_ARCH_X86_64, kKill);
  a.Load(kNrOffset);
  a.JumpIfEqual(__NR_ioctl, kIoctl);
  a.JumpIfEqual(__NR_prctl, kPrctl);
  a.JumpIfEqual(__NR_personality, kPersonality);
  a.Goto(kEnd);

  a.Bind(kIoctl);
  a.Load(ArgLow(1));
  a.JumpIfEqual(TIOCSTI, kDenyEperm);
  a.JumpIfEqual(TIOCLINUX, kDenyEperm);
  a.Goto(kEnd);

  a.Bind(kPrctl);
  a.Load(ArgLow(0));
  a.JumpIfEqual(PR_SET_MM, kDenyEperm);
  a.Goto(kEnd);

  a.Bind(kPersonality);
  a.Load(ArgLow(0));
  a.JumpIfEqual(0 /* PER_LINUX */, kEnd);
  a.JumpIfEqual(0xffffffffu /* query */, kEnd);
  // Falls through to the EPERM return.

  a.Bind(kDenyEperm);
  a.Return(SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
  a.Bind(kKill);
  a.Return(SECCOMP_RET_KILL_PROCESS);
  return a.Finish();
}

}  // namespace airlock::jail
