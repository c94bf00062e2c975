// Arguments and environment: exactly what the runner was given, nothing
// more (no inherited host environment). Prints them for the driver.
#include <stdlib.h>

#include "conformance.h"

extern char** environ;

int main(int argc, char** argv) {
  printf("argc %d\n", argc);
  for (int i = 0; i < argc; ++i) printf("arg %d [%s]\n", i, argv[i]);
  CHECK("argv.terminated", argv[argc] == NULL);
  int n = 0;
  for (char** e = environ; *e; ++e, ++n) printf("env [%s]\n", *e);
  printf("envc %d\n", n);
  CHECK("no.host.path", getenv("PATH") == NULL || strcmp(getenv("PATH"), "/given") == 0);
  CHECK("no.host.home", getenv("HOME") == NULL);
  const char* v = getenv("AIRLOCK_A");
  printf("getenv AIRLOCK_A [%s]\n", v ? v : "(null)");
  return 0;
}
