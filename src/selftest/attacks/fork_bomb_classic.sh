# Enforced: the classic exponential fork bomb, kept running until the
# deadline. The process limit must contain it, the deadline must end it, and
# the host must stay usable.
bomb() { bomb | bomb & }
bomb
sleep 30
