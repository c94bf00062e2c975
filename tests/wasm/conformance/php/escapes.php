<?php
require 'check.php';
function hidden(string $p): bool { return @file_get_contents($p) === false && !file_exists($p); }
check('hidden.etc.passwd', hidden('/etc/passwd'));
check('hidden.etc.shadow', hidden('/etc/shadow'));
check('hidden.proc.environ', hidden('/proc/self/environ'));
check('hidden.proc.root', hidden('/proc/1/root/etc/passwd'));
check('hidden.airlock-js', hidden('/opt/airlock/airlock-js'));
check('hidden.php.binary', hidden('/usr/bin/php'));
check('hidden.dev.mem', hidden('/dev/mem'));
check('hidden.sys', hidden('/sys/kernel/notes'));
check('hidden.dotdot', hidden('/work/../etc/passwd'));
check('input.visible', file_get_contents('input.txt') === "input\n");
check('root.is.work', scandir('/') === scandir('/work'));
check('no.exec', !function_exists('proc_open') || @proc_open('id', [], $pipes) === false);
check('no.shell_exec', !function_exists('shell_exec') || @shell_exec('id') === null || @shell_exec('id') === false);
check('no.dl', !function_exists('dl') || @dl('x.so') === false);
check('open_basedir.unneeded', ini_get('open_basedir') === '' || ini_get('open_basedir') === false);
