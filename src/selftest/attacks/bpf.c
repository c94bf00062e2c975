// Attack: bpf() — create a map and load a socket filter program.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void) {
  int allowed = 0;
  union bpf_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.map_type = BPF_MAP_TYPE_ARRAY;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = 1;
  long r = syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
  if (r >= 0) { printf("ALLOWED: BPF_MAP_CREATE -> fd %ld\n", r); allowed = 1; }
  else printf("BPF_MAP_CREATE: %s\n", strerrorname_np(errno));
  struct bpf_insn prog[] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
      {.code = BPF_JMP | BPF_EXIT},
  };
  memset(&attr, 0, sizeof attr);
  attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
  attr.insn_cnt = 2;
  attr.insns = (unsigned long)prog;
  attr.license = (unsigned long)"GPL";
  r = syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof attr);
  if (r >= 0) { printf("ALLOWED: BPF_PROG_LOAD -> fd %ld\n", r); allowed = 1; }
  else printf("BPF_PROG_LOAD: %s\n", strerrorname_np(errno));
  if (!allowed) printf("DENIED: bpf() is not available\n");
  return 0;
}
