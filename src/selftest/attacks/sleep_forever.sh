# Enforced: sleep far past the deadline.
sleep 1000
