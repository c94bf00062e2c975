<?php
require 'check.php';
check('tar.read', file_get_contents('/lib/hello.txt') === "hello from the tar\n");
check('tar.read.sub', file_get_contents('/lib/sub/data.txt') === "data\n");
check('tar.list', scandir('/lib') === ['.', '..', 'empty', 'hello.txt', 'sub']);
check('tar.write.refused', @file_put_contents('/lib/hello.txt', 'x') === false);
check('tar.create.refused', @file_put_contents('/lib/new.txt', 'x') === false && !file_exists('/lib/new.txt'));
check('tar.unlink.refused', @unlink('/lib/hello.txt') === false && file_exists('/lib/hello.txt'));
check('tar.mkdir.refused', @mkdir('/lib/d') === false);
check('tar.rename.out.refused', @rename('/lib/hello.txt', '/work/stolen.txt') === false);
check('tar.copy.out', copy('/lib/hello.txt', '/work/mine.txt'));
check('tar.unchanged', file_get_contents('/lib/hello.txt') === "hello from the tar\n");
