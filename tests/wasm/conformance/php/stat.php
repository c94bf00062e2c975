<?php
require 'check.php';
file_put_contents('s.txt', '12345');
$s = stat('s.txt');
check('stat.size', $s !== false && $s['size'] === 5);
check('stat.isfile', is_file('s.txt') && !is_dir('s.txt') && is_dir('.') && is_dir('/work'));
check('stat.mtime.recent', abs($s['mtime'] - time()) < 120, "mtime {$s['mtime']} now " . time());
check('touch.mtime', touch('s.txt', 1000000000) && (clearstatcache() || true) && filemtime('s.txt') === 1000000000);
check('fstat', ($f = fopen('s.txt', 'r')) && fstat($f)['size'] === 5 && fclose($f));
check('filesize.dir', is_int(filesize('.')));
check('readable.writable', is_readable('s.txt') && is_writable('s.txt'));
check('stat.missing', @stat('none') === false);
check('lstat.same', lstat('s.txt')['size'] === 5 && !is_link('s.txt'));
