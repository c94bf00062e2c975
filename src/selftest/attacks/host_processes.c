// Attack: see and signal host processes. Only the jail's own processes
// (PID 1 = airlock-init, this program) may be visible, and the supervisor
// (host pid @HOST_PID@) must not be signalable.
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  DIR* d = opendir("/proc");
  if (d == NULL) {
    printf("DENIED: /proc not readable: %s\n", strerrorname_np(errno));
    return 0;
  }
  int foreign = 0, total = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (!isdigit((unsigned char)e->d_name[0])) continue;
    int pid = atoi(e->d_name);
    ++total;
    printf("visible pid %d\n", pid);
    if (pid != 1 && pid != getpid() && pid != getppid()) ++foreign;
  }
  closedir(d);
  // In a container the supervisor's pid is small and this program may have
  // the same number in the jail's own PID namespace: signalling it then
  // reaches this program, not the supervisor.
  int self = getpid() == @HOST_PID@;
  int k = self ? -1 : kill(@HOST_PID@, 0);
  int kerr = self ? ESRCH : errno;
  if (k == 0) printf("ALLOWED: kill(@HOST_PID@, 0) succeeded\n");
  else if (foreign > 0) printf("ALLOWED: %d processes outside this program are visible\n", foreign);
  else printf("DENIED: only %d jail processes visible; kill(@HOST_PID@, 0): %s\n", total, strerrorname_np(kerr));
  return 0;
}
