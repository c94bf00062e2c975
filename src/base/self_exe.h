// Where the running executable lives, for finding the binaries installed
// next to it (airlock-init, airlock-js).
//
//   std::string init = SiblingOfSelf("airlock-init");   // "/opt/airlock/bin/airlock-init"
#ifndef AIRLOCK_BASE_SELF_EXE_H_
#define AIRLOCK_BASE_SELF_EXE_H_

#include <string>

namespace airlock {

// The absolute path of /proc/self/exe; empty if it cannot be read.
std::string SelfExecutablePath();

// `name` in the directory of the running executable (whether or not it
// exists) — or, when it is not there but ../lib/airlock/`name` is (an
// installed /usr/bin/airlock), that; just `name` if the directory is unknown.
std::string SiblingOfSelf(const std::string& name);

}  // namespace airlock

#endif  // AIRLOCK_BASE_SELF_EXE_H_
