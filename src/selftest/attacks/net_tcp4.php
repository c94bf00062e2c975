<?php
// Attack: TCP connection to 127.0.0.1:@TCP_PORT@, where the suite listens on the host.
$fp = @fsockopen('127.0.0.1', @TCP_PORT@, $errno, $errstr, 3);
if ($fp === false) {
  echo "DENIED: fsockopen(127.0.0.1:@TCP_PORT@): $errno $errstr\n";
} else {
  echo "ALLOWED: connected to 127.0.0.1:@TCP_PORT@\n";
}
