<?php
require 'check.php';
$in = stream_get_contents(STDIN);
$h = 0;
for ($i = 0, $n = strlen($in); $i < $n; $i++) $h = ($h * 31 + ord($in[$i])) & 0xffffffff;
echo 'stdin ', strlen($in), ' bytes, first [', substr($in, 0, 16), '], hash ', sprintf('%u', $h), "\n";
check('stdin.eof', feof(STDIN));
check('stdin.again.empty', stream_get_contents(STDIN) === '');
