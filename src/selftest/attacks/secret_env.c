// Attack: read the secret variable @SECRET_ENV_NAME@ set in the supervisor's
// environment; the whole environment is printed too.
#include <stdio.h>
#include <stdlib.h>

extern char** environ;

int main(void) {
  for (char** e = environ; *e != NULL; ++e) printf("env: %s\n", *e);
  const char* v = getenv("@SECRET_ENV_NAME@");
  if (v != NULL) printf("ALLOWED: @SECRET_ENV_NAME@=%s\n", v);
  else printf("DENIED: @SECRET_ENV_NAME@ is not set\n");
  return 0;
}
