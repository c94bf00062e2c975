<?php
require 'check.php';
$a = random_bytes(16);
$b = random_bytes(16);
check('random_bytes.len', strlen($a) === 16);
check('random_bytes.differ', $a !== $b);
check('random_int.range', ($n = random_int(10, 20)) >= 10 && $n <= 20);
$seen = [];
for ($i = 0; $i < 200; $i++) $seen[random_int(0, 9)] = true;
check('random_int.spread', count($seen) === 10);
check('mt_rand', mt_rand(1, 100) >= 1);
check('uniqid', uniqid() !== uniqid());
echo 'sample ', bin2hex(random_bytes(16)), "\n";
