// Attack: gain privileges by executing setuid-root binaries (su, passwd, ...).
// Each is started with a stdin that never delivers input, stopped (or left a
// zombie) right after its execve() completed, and its credentials are read
// from /proc: gained capabilities or an effective uid different from ours
// mean it worked.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int Inspect(pid_t pid, const char* path) {
  char status_path[64], line[256];
  snprintf(status_path, sizeof status_path, "/proc/%d/status", pid);
  FILE* f = fopen(status_path, "r");
  if (f == NULL) {
    printf("ALLOWED: %s: its /proc status became unreadable (credentials changed?): %s\n", path,
           strerrorname_np(errno));
    return 1;
  }
  unsigned ruid = 0, euid = 0, suid = 0, fsuid = 0;
  unsigned long long cap_eff = 0, cap_prm = 0;
  char name[64] = "";
  while (fgets(line, sizeof line, f) != NULL) {
    sscanf(line, "Name:\t%63s", name);
    sscanf(line, "Uid:\t%u\t%u\t%u\t%u", &ruid, &euid, &suid, &fsuid);
    sscanf(line, "CapEff:\t%llx", &cap_eff);
    sscanf(line, "CapPrm:\t%llx", &cap_prm);
  }
  fclose(f);
  printf("%s (%s): Uid %u %u %u %u CapEff %llx CapPrm %llx\n", path, name, ruid, euid, suid, fsuid, cap_eff,
         cap_prm);
  if (euid == 0 || euid != getuid() || suid != getuid() || cap_eff != 0 || cap_prm != 0) {
    printf("ALLOWED: %s ran with raised privileges\n", path);
    return 1;
  }
  return 0;
}

int main(void) {
  const char* candidates[] = {"/usr/bin/su", "/usr/bin/passwd", "/usr/bin/chsh", "/usr/bin/chfn",
                              "/usr/bin/gpasswd", "/usr/bin/newgrp", "/usr/bin/mount", "/usr/bin/sudo"};
  int tried = 0, allowed = 0;
  for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; ++i) {
    struct stat st;
    if (stat(candidates[i], &st) != 0 || !(st.st_mode & S_ISUID)) continue;
    int in[2], sync[2];
    if (pipe(in) != 0 || pipe2(sync, O_CLOEXEC) != 0) return 1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      dup2(in[0], 0);
      int null_fd = open("/dev/null", O_WRONLY);
      dup2(null_fd, 1);
      dup2(null_fd, 2);
      execl(candidates[i], candidates[i], (char*)NULL);
      _exit(127);
    }
    close(in[0]);
    close(sync[1]);
    char c;
    (void)read(sync[0], &c, 1);  // EOF once execve() succeeded
    kill(pid, SIGSTOP);  // takes effect once execve() completed
    siginfo_t info;
    waitid(P_PID, pid, &info, WSTOPPED | WEXITED | WNOWAIT);
    ++tried;
    allowed |= Inspect(pid, candidates[i]);
    kill(pid, SIGKILL);
    kill(pid, SIGCONT);
    waitpid(pid, NULL, 0);
    close(in[1]);
    close(sync[0]);
  }
  if (!allowed) {
    if (tried) printf("DENIED: %d setuid binaries ran without privileges\n", tried);
    else printf("DENIED: no setuid binary is visible in the jail\n");
  }
  return 0;
}
