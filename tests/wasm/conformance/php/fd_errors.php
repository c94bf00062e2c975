<?php
require 'check.php';
check('fopen.missing', @fopen('nope/x.txt', 'r') === false);
check('fopen.dir.write', @fopen('.', 'w') === false);
check('fd.high', @fopen('php://fd/99', 'r') === false);
$f = fopen('a.txt', 'w');
fclose($f);
$closed = false;
try { fwrite($f, 'x'); } catch (TypeError $e) { $closed = true; }
check('closed.handle', $closed);
check('read.wronly', ($w = fopen('a.txt', 'w')) && (@fread($w, 10) === '' || @fread($w, 10) === false) && fclose($w));
check('stdout.stderr', fwrite(STDOUT, "") === 0 && fwrite(STDERR, "to stderr\n") === 10);
check('unlink.dir', @unlink('.') === false);
