<?php
// Attack: read the file the suite planted on the host (outside the jail).
$allowed = false;
foreach (['@SECRET_PATH@', '/proc/@HOST_PID@/root@SECRET_PATH@', '/proc/1/root@SECRET_PATH@'] as $p) {
  $c = @file_get_contents($p);
  if ($c === false) {
    $err = error_get_last();
    echo "$p: " . ($err ? $err['message'] : 'failed') . "\n";
  } else {
    echo "ALLOWED: read $p: $c\n";
    $allowed = true;
  }
}
if (!$allowed) echo "DENIED: the secret file is not reachable\n";
