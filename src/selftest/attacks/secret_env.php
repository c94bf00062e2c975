<?php
// Attack: read the secret variable @SECRET_ENV_NAME@ set in the supervisor's
// environment; the whole environment is printed too.
foreach (getenv() as $k => $v) echo "env: $k=$v\n";
$v = getenv('@SECRET_ENV_NAME@');
if ($v !== false) echo "ALLOWED: @SECRET_ENV_NAME@=$v\n";
else echo "DENIED: @SECRET_ENV_NAME@ is not set\n";
