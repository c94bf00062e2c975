<?php
require 'check.php';
echo "argc $argc\n";
foreach ($argv as $i => $a) echo "arg $i [$a]\n";
$env = getenv();
foreach ($env as $k => $v) echo "env [$k=$v]\n";
echo 'envc ', count($env), "\n";
$v = getenv('AIRLOCK_A');
echo 'getenv AIRLOCK_A [', $v === false ? '(false)' : $v, "]\n";
check('argv.server', $_SERVER['argv'] === $argv && $_SERVER['argc'] === $argc);
check('env.superglobal', $_ENV === [] || $_ENV == $env);
check('putenv', putenv('SET_HERE=1') && getenv('SET_HERE') === '1');
