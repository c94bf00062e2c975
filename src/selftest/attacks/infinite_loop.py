# Enforced: spin forever; the deadline must end the run.
while True:
    pass
