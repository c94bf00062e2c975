// Attack: perf_event_open on our own task (a software clock counter, user
// space only: allowed for unprivileged users on most hosts, so only the
// seccomp policy stops it).
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void) {
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.size = sizeof attr;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  long r = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (r >= 0) printf("ALLOWED: perf_event_open -> fd %ld\n", r);
  else printf("DENIED: perf_event_open: %s\n", strerrorname_np(errno));
  return 0;
}
