# Attack: read the secret variable @SECRET_ENV_NAME@ set in the supervisor's
# environment; the whole environment is printed too.
env | sed 's/^/env: /'
if [ -n "${@SECRET_ENV_NAME@+set}" ]; then
  echo "ALLOWED: @SECRET_ENV_NAME@=${@SECRET_ENV_NAME@}"
else
  echo "DENIED: @SECRET_ENV_NAME@ is not set"
fi
