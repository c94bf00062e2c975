<?php
// Shared check for the PHP conformance programs (the PHP side of
// tests/wasm/conformance, run by php.wasm in airlock-js --wasi; driver:
// tests/unit/wasi_conformance_test.cc). One "ok <check>" line per passing
// check; the first failing check prints "FAIL <check>: <detail>" and exits 1.
// The driver reads every check('<name>', ...) from the program's source and
// wants an "ok" line for each.
function check(string $name, bool $cond, string $detail = ''): void {
  if (!$cond) {
    $e = error_get_last();
    echo "FAIL $name: ", $detail !== '' ? $detail : ($e['message'] ?? 'false'), "\n";
    exit(1);
  }
  echo "ok $name\n";
}
