// Allowed: POSIX threads.
#include <pthread.h>
#include <stdio.h>

static void* Work(void* arg) {
  long* v = arg;
  for (int i = 0; i < 1000; ++i) *v += 1;
  return NULL;
}

int main(void) {
  pthread_t t[4];
  long counts[4] = {0};
  for (int i = 0; i < 4; ++i)
    if (pthread_create(&t[i], NULL, Work, &counts[i]) != 0) { printf("FAIL: pthread_create\n"); return 0; }
  long total = 0;
  for (int i = 0; i < 4; ++i) {
    pthread_join(t[i], NULL);
    total += counts[i];
  }
  printf(total == 4000 ? "OK: 4 threads, total %ld\n" : "FAIL: total %ld\n", total);
  return 0;
}
