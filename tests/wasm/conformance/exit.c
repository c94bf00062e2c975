// Exit statuses: exit(N) is proc_exit(N), returning from main is the same,
// abort() traps. argv[1] picks the way out; stdio is flushed on exit.
#include <stdlib.h>
#include <unistd.h>

#include "conformance.h"

static void at_exit_handler(void) { printf("atexit handler ran\n"); }

int main(int argc, char** argv) {
  const char* how = argc > 1 ? argv[1] : "";
  printf("leaving by %s\n", how);  // buffered: exit() must flush it
  if (strcmp(how, "exit0") == 0) exit(0);
  if (strcmp(how, "exit3") == 0) exit(3);
  if (strcmp(how, "exit255") == 0) exit(255);
  if (strcmp(how, "_exit9") == 0) {
    fflush(stdout);
    _exit(9);
  }
  if (strcmp(how, "return0") == 0) return 0;
  if (strcmp(how, "return7") == 0) return 7;
  if (strcmp(how, "abort") == 0) abort();
  if (strcmp(how, "atexit4") == 0) {
    atexit(at_exit_handler);
    exit(4);
  }
  return 42;
}
