// Enforced: spin forever; the deadline must end the run.
int main(void) {
  volatile unsigned long x = 0;
  for (;;) ++x;
}
