// Allowed: a syntax error comes back as compile_error with gcc's diagnostics.
int main(void) {
  return 0
}
