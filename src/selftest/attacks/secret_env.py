# Attack: read the secret variable @SECRET_ENV_NAME@ set in the supervisor's
# environment; the whole environment is printed too.
import os

for k, v in os.environ.items():
    print("env: %s=%s" % (k, v))
if "@SECRET_ENV_NAME@" in os.environ:
    print("ALLOWED: @SECRET_ENV_NAME@=" + os.environ["@SECRET_ENV_NAME@"])
else:
    print("DENIED: @SECRET_ENV_NAME@ is not set")
