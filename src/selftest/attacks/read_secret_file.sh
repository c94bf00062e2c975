# Attack: read the file the suite planted on the host (outside the jail).
allowed=0
for p in "@SECRET_PATH@" "/proc/@HOST_PID@/root@SECRET_PATH@" "/proc/1/root@SECRET_PATH@"; do
  if content=$(cat "$p" 2>&1); then
    echo "ALLOWED: read $p: $content"
    allowed=1
  else
    echo "$p: $content"
  fi
done
[ "$allowed" = 0 ] && echo "DENIED: the secret file is not reachable"
exit 0
