# Allowed: plain computation.
s=$(( 999999 * 1000000 / 2 ))
[ "$s" = 499999500000 ] && echo "OK: $s" || echo "FAIL: $s"
