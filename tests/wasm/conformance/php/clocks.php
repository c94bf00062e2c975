<?php
require 'check.php';
check('time.plausible', time() > 1700000000 && time() < 4102444800);
$a = hrtime(true);
usleep(20000);
$b = hrtime(true);
check('usleep.20ms', $b - $a >= 20000000, (string) ($b - $a));
check('hrtime.monotonic', hrtime(true) >= $b);
$m = microtime(true);
check('microtime', abs($m - time()) < 2);
check('date.utc', date_default_timezone_get() === 'UTC' && gmdate('Y') === date('Y'));
$t0 = microtime(true);
sleep(1);
check('sleep.1s', microtime(true) - $t0 >= 0.99);
