<?php
// Leaves in the way its argument names (no checks: the driver reads the status).
$how = $argv[1] ?? '';
echo "leaving by $how\n";
if ($how === 'shutdown4') { register_shutdown_function(function () { echo "shutdown ran\n"; exit(4); }); return; }
if ($how === 'fatal') { function f() { g(); } function g() { nope(); } f(); }
if ($how === 'exception') throw new LogicException('thrown');
if ($how === 'return') return;
if (preg_match('/^exit(\d+)$/', $how, $m)) { function deep($n, $c) { if ($n) deep($n - 1, $c); exit($c); } deep(20, (int) $m[1]); }
exit(42);
