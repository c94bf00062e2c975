// The CPU quota a cgroup v1 jail may ask for (internal to the cgroup module).
//
// On cgroup v1 the kernel refuses (EINVAL) a cpu.cfs_quota_us whose share
// of its period exceeds what the nearest ancestor with a quota allows: a
// runner host started under `docker run --cpus 1.5` or a Kubernetes CPU
// limit could otherwise create no jail at all, since each jail asks for its
// own quota (one core by default). The jail's quota is therefore clamped to
// that ancestor's share, normalised to the jail's period. cgroup v2 takes
// any cpu.max below a smaller parent (the parent's limit still applies), so
// this is v1 only.
#ifndef AIRLOCK_JAIL_CPU_CEILING_H_
#define AIRLOCK_JAIL_CPU_CEILING_H_

#include <cstdint>
#include <optional>
#include <string>

namespace airlock::jail {

// The nearest ancestor's quota: `quota_us` of CPU time per `period_us`.
struct CpuCeiling {
  std::string dir;  // the cgroup directory that sets it
  uint64_t quota_us = 0;
  uint64_t period_us = 0;
  double cpus() const { return period_us == 0 ? 0 : static_cast<double>(quota_us) / static_cast<double>(period_us); }
};

// Walks from the cgroup v1 cpu directory `dir` up through its parents for
// as long as they are cgroups (have cpu.cfs_quota_us) and returns the first
// whose quota is set (not -1); `dir` itself counts. nullopt: no limit above.
std::optional<CpuCeiling> FindV1CpuCeiling(const std::string& dir);

// A quota and the period it is per.
struct CpuBandwidth {
  uint64_t quota_us = 0;
  uint64_t period_us = 0;
};

// What to write for `wanted` below `ceiling`: `wanted` itself when the
// ceiling allows it (or there is none); else the ceiling's share of
// `wanted.period_us`, rounded down as the kernel compares shares; when that
// is below the kernel's 1 ms minimum quota, the ceiling's own quota and
// period (the same share, which the kernel accepted for the ancestor).
CpuBandwidth ClampToCeiling(const CpuBandwidth& wanted, const std::optional<CpuCeiling>& ceiling);

// "1.5" / "0.25" / "2": CPUs for messages, at most two decimals.
std::string FormatCpus(double cpus);

}  // namespace airlock::jail

#endif  // AIRLOCK_JAIL_CPU_CEILING_H_
