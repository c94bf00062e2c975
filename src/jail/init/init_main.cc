// Placeholder; replaced by the jail init.
int main() { return 0; }
