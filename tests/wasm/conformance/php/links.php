<?php
require 'check.php';
file_put_contents('t.txt', 't');
check('symlink.refused', @symlink('t.txt', 'l') === false && !file_exists('l'));
check('symlink.host.refused', @symlink('/etc/passwd', 'p') === false && @file_get_contents('p') === false);
check('hardlink.refused', @link('t.txt', 'h') === false || file_get_contents('h') === 't');
check('dotdot.read', @file_get_contents('../../../etc/passwd') === false);
// ".." stops at the root, and "/" is the work dir (wasi-libc's cwd): what
// lands anywhere lands in /work (the driver checks the host's side).
check('dotdot.write.stays', @file_put_contents('../new.txt', 'x') === false || file_exists('/work/new.txt'));
check('dotdot.abs.write.stays', @file_put_contents('/work/../../new2.txt', 'x') === false || file_exists('/work/new2.txt'));
check('dotdot.rename.stays', @rename('t.txt', '../moved.txt') === false || file_exists('/work/moved.txt'));
check('readlink.none', @readlink('/work/new.txt') === false);
check('realpath.inside', realpath('new.txt') !== false && !str_contains((string) realpath('new.txt'), '..'));
