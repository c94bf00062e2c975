// `airlock selftest`: placeholder until the containment suite lands.
#include <iostream>

#include "cli/commands.h"

namespace airlock::cli {

int SelftestCommand(bool json) {
  std::cerr << "airlock: selftest not built yet\n";
  return 1;
}

}  // namespace airlock::cli
