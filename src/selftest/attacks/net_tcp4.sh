# Attack: TCP connection to 127.0.0.1:@TCP_PORT@ (bash /dev/tcp), where the suite listens on the host.
if { exec 3<>/dev/tcp/127.0.0.1/@TCP_PORT@; } 2>/tmp/err; then
  echo "ALLOWED: connected to 127.0.0.1:@TCP_PORT@"
else
  echo "DENIED: /dev/tcp/127.0.0.1/@TCP_PORT@: $(tr '\n' ' ' </tmp/err)"
fi
