<?php
// Allowed: plain computation.
$s = array_sum(range(0, 999999));
echo ($s === 499999500000 ? 'OK: ' : 'FAIL: ') . $s . "\n";
