#include "selftest/host_snapshot.h"

#include <chrono>
#include <thread>

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace airlock::selftest {
namespace {

namespace fs = std::filesystem;

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Cmdline(pid_t pid) {
  std::string c = ReadSmallFile("/proc/" + std::to_string(pid) + "/cmdline");
  for (char& ch : c)
    if (ch == '\0') ch = ' ';
  while (!c.empty() && c.back() == ' ') c.pop_back();
  return c;
}

// pid -> ppid for every process on the host.
std::map<pid_t, pid_t> ParentMap() {
  std::map<pid_t, pid_t> parents;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename();
    if (name.empty() || !isdigit(static_cast<unsigned char>(name[0]))) continue;
    const std::string stat = ReadSmallFile("/proc/" + name + "/stat");
    const size_t close = stat.rfind(')');  // comm may contain spaces and parens
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    parents[std::stoi(name)] = ppid;
  }
  return parents;
}

void CollectCgroupDirs(const fs::path& dir, int depth, const std::string& parent_name, std::set<std::string>* out) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_directory(ec) || e.is_symlink(ec)) continue;
    if (e.path().filename() == parent_name) {
      for (auto it = fs::recursive_directory_iterator(e.path(), ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec)) {
        if (it->is_directory(ec)) out->insert(it->path().string());
      }
    } else if (depth > 0) {
      CollectCgroupDirs(e.path(), depth - 1, parent_name, out);
    }
  }
}

}  // namespace

HostSnapshot TakeHostSnapshot() {
  HostSnapshot s;
  std::istringstream mounts(ReadSmallFile("/proc/self/mountinfo"));
  for (std::string line; std::getline(mounts, line);) {
    // id parent major:minor root mountpoint options [optional...] - fstype source superopts
    std::istringstream f(line);
    std::string id, parent, dev, root, point;
    f >> id >> parent >> dev >> root >> point;
    const size_t dash = line.find(" - ");
    std::string tail = dash == std::string::npos ? "" : line.substr(dash + 3);
    tail = tail.substr(0, tail.rfind(' '));  // drop super options (they change, e.g. cgroup counts)
    s.mounts.insert(point + " (" + tail + ")");
  }

  const std::map<pid_t, pid_t> parents = ParentMap();
  std::set<pid_t> below = {getpid()};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, ppid] : parents) {
      if (below.count(ppid) && !below.count(pid)) {
        below.insert(pid);
        grew = true;
      }
    }
  }
  below.erase(getpid());
  for (pid_t pid : below) s.descendants.insert(std::to_string(pid) + " " + Cmdline(pid));

  CollectCgroupDirs("/sys/fs/cgroup", 6, "airlock-" + std::to_string(getpid()), &s.cgroup_dirs);
  return s;
}

std::vector<std::string> LeftBehind(const HostSnapshot& before, const HostSnapshot& after) {
  std::vector<std::string> out;
  for (const auto& m : after.mounts)
    if (!before.mounts.count(m)) out.push_back("new host mount: " + m);
  for (const auto& p : after.descendants)
    if (!before.descendants.count(p)) out.push_back("process left behind: " + p);
  for (const auto& d : after.cgroup_dirs)
    if (!before.cgroup_dirs.count(d)) out.push_back("cgroup left behind: " + d);
  return out;
}

std::vector<std::string> ProcessesWithCmdline(std::string_view needle) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename();
    if (name.empty() || !isdigit(static_cast<unsigned char>(name[0]))) continue;
    const pid_t pid = std::stoi(name);
    if (pid == getpid()) continue;
    const std::string cmd = Cmdline(pid);
    if (cmd.find(needle) != std::string::npos) out.push_back(name + " " + cmd);
  }
  return out;
}

std::vector<std::string> AwaitNothingLeftBehind(const HostSnapshot& before, int timeout_ms) {
  std::vector<std::string> left;
  for (int waited = 0;; waited += 50) {
    left = LeftBehind(before, TakeHostSnapshot());
    if (left.empty() || waited >= timeout_ms) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace airlock::selftest
