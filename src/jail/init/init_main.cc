// airlock-init: PID 1 inside every jail. See jail/init/init.h.
#include "jail/init/init.h"

int main() { return airlock::jail::InitMain(airlock::jail::kInitChannelFd); }
