// Attack: resolve example.com (needs a resolver reachable from the jail).
#include <netdb.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
  struct addrinfo* res = NULL;
  int rc = getaddrinfo("example.com", "80", &hints, &res);
  if (rc != 0) {
    printf("DENIED: getaddrinfo(example.com): %s\n", gai_strerror(rc));
    return 0;
  }
  printf("ALLOWED: example.com resolved\n");
  freeaddrinfo(res);
  return 0;
}
