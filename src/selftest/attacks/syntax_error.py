# Allowed: a syntax error comes back as a result with the traceback.
def broken(:
    pass
