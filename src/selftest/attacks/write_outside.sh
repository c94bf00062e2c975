# Attack: create files outside the work dir (and overwrite the planted secret).
allowed=0
for p in /usr/@MARKER@ /etc/@MARKER@ /@MARKER@ /work/../@MARKER@.up "@SECRET_PATH@"; do
  if (echo pwned > "$p") 2>/dev/null; then echo "ALLOWED: created $p"; allowed=1; else echo "$p: not writable"; fi
done
[ "$allowed" = 0 ] && echo "DENIED: nothing outside the work dir is writable"
exit 0
