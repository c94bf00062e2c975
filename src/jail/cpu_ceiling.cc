#include "jail/cpu_ceiling.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "jail/cgroup_fs.h"

namespace airlock::jail {
namespace {

namespace fs = cgroup_fs;

constexpr uint64_t kMinQuotaUs = 1000;  // the kernel's min_cfs_quota_period

// A signed decimal control file (cpu.cfs_quota_us is -1 when unlimited);
// nullopt when unreadable or not a number.
std::optional<long long> ReadSigned(const std::string& path) {
  StatusOr<std::string> text = fs::ReadFile(path);
  if (!text.ok()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text->c_str(), &end, 10);
  if (errno != 0 || end == text->c_str()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<CpuCeiling> FindV1CpuCeiling(const std::string& dir) {
  std::string at = dir;
  while (!at.empty() && fs::Exists(at + "/cpu.cfs_quota_us")) {
    const std::optional<long long> quota = ReadSigned(at + "/cpu.cfs_quota_us");
    const std::optional<long long> period = ReadSigned(at + "/cpu.cfs_period_us");
    if (quota && period && *quota > 0 && *period > 0) {
      return CpuCeiling{at, static_cast<uint64_t>(*quota), static_cast<uint64_t>(*period)};
    }
    const size_t slash = at.rfind('/');
    if (slash == std::string::npos || slash == 0) break;
    at.resize(slash);
  }
  return std::nullopt;
}

CpuBandwidth ClampToCeiling(const CpuBandwidth& wanted, const std::optional<CpuCeiling>& ceiling) {
  if (!ceiling || ceiling->period_us == 0 || wanted.period_us == 0) return wanted;
  // Compare shares exactly: wanted.quota / wanted.period <= quota / period.
  const unsigned __int128 lhs = static_cast<unsigned __int128>(wanted.quota_us) * ceiling->period_us;
  const unsigned __int128 rhs = static_cast<unsigned __int128>(ceiling->quota_us) * wanted.period_us;
  if (lhs <= rhs) return wanted;
  const uint64_t share = static_cast<uint64_t>(rhs / ceiling->period_us);  // floor: never above the ceiling
  if (share >= kMinQuotaUs) return {share, wanted.period_us};
  return {ceiling->quota_us, ceiling->period_us};
}

std::string FormatCpus(double cpus) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", cpus);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace airlock::jail
