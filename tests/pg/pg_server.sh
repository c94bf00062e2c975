#!/usr/bin/env bash
# A throwaway PostgreSQL 15 for tests (docs/state.md#tests): no system
# service, no cluster managed by postgresql-common, nothing outside DIR.
#
#   tests/pg/pg_server.sh start DIR PORT   # prints the DSN on stdout
#   tests/pg/pg_server.sh stop DIR         # idempotent; DIR itself stays
#
# start: initdb in DIR/data (once; a later start reuses it), then a server
# listening on 127.0.0.1:PORT and on a unix socket in DIR. The role
# `airlock` (LOGIN, a random password kept in DIR/airlock.password) owns the
# database `airlock` (UTF8); the last line on stdout is its DSN:
#
#   host=127.0.0.1 port=PORT dbname=airlock user=airlock password=...
#
# TCP connections need that password (scram-sha-256); unix-socket
# connections are trusted, so a test can administer the server as the
# superuser with "host=DIR port=PORT user=postgres dbname=postgres".
# Durability is traded for speed (fsync off): test data only.
#
# Run as root (CI), the server runs as the `postgres` system user (the
# postgresql-15 package creates it; PostgreSQL refuses to run as root) and
# DIR is chowned to it: DIR's parent directories must let that user in
# (a directory under /tmp does). Run as another user, it runs as that user.
# Diagnostics go to stderr; the server's log is DIR/server.log.
# AIRLOCK_PG_TEMPLATE=DIR: keep a pristine cluster there and copy it rather
# than run initdb every time (see copy_template).
set -euo pipefail

PG_BIN="${AIRLOCK_PG_BIN:-/usr/lib/postgresql/15/bin}"

die() {
  echo "pg_server.sh: $*" >&2
  exit 1
}

usage() {
  echo "usage: $0 start DIR PORT | stop DIR" >&2
  exit 2
}

# as_pg CMD...: CMD as the server's OS user.
as_pg() {
  if [[ "$(id -u)" == 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

INITDB_ARGS=(-U postgres -E UTF8 --no-locale --auth-local=trust --auth-host=scram-sha-256)

# copy_template DATA: with AIRLOCK_PG_TEMPLATE=DIR set, a cluster initdb'ed
# once into DIR (per PostgreSQL version) is copied to DATA instead of
# running initdb each time (1.7 s -> 0.1 s; the unit tests start one server
# per test process). False if there is no usable template.
copy_template() {
  local cache="${AIRLOCK_PG_TEMPLATE:-}" data="$1"
  [[ -n "$cache" ]] || return 1
  local owner=postgres
  [[ "$(id -u)" == 0 ]] || owner="$(id -un)"
  if [[ ! -d "$cache" ]]; then
    mkdir -p -m 0700 "$cache" || return 1
    [[ "$(id -u)" == 0 ]] && chown postgres: "$cache"
  fi
  # Only a cache the server's user owns (and nobody else may write) is used.
  [[ ! -L "$cache" && "$(stat -c %U "$cache")" == "$owner" && "$(stat -c %a "$cache")" == 700 ]] || return 1
  as_pg test -x "$cache" || return 1
  local version
  version="$("$PG_BIN/postgres" --version | tr -c 'A-Za-z0-9.\n' '_')"
  local tpl="$cache/$version"
  (
    flock 9
    if [[ ! -s "$tpl/PG_VERSION" ]]; then
      as_pg rm -rf "$tpl.tmp"
      as_pg "$PG_BIN/initdb" "${INITDB_ARGS[@]}" -D "$tpl.tmp" >/dev/null 2>&1 || exit 1
      as_pg mv "$tpl.tmp" "$tpl"
    fi
  ) 9>>"$cache/.lock" || return 1
  as_pg cp -a "$tpl" "$data"
}

start() {
  local dir="$1" port="$2"
  [[ "$port" =~ ^[0-9]+$ ]] && ((port > 0 && port < 65536)) || die "PORT must be 1-65535, got '$port'"
  [[ -x "$PG_BIN/initdb" && -x "$PG_BIN/pg_ctl" ]] ||
    die "no PostgreSQL 15 in $PG_BIN (apt-get install postgresql-15)"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd -P)"
  # The socket path (DIR/.s.PGSQL.PORT) must fit in sun_path.
  ((${#dir} <= 90)) || die "DIR is too long for a unix socket path: $dir"
  if [[ "$(id -u)" == 0 ]]; then
    id postgres >/dev/null 2>&1 || die "there is no 'postgres' user (is postgresql-15 installed?)"
    chown postgres: "$dir"
    chmod 0700 "$dir"
    # A parent made by `mktemp -d` (0700) is closed to postgres: let it
    # pass through (o+x: search only, nothing becomes readable).
    local parent="$dir"
    while [[ "$parent" != / ]]; do
      parent="$(dirname "$parent")"
      if ! runuser -u postgres -- test -x "$parent"; then
        echo "pg_server.sh: chmod o+x $parent (the postgres user must reach $dir)" >&2
        chmod o+x "$parent"
      fi
    done
    runuser -u postgres -- test -x "$dir" || die "the postgres user cannot reach $dir"
  fi
  local data="$dir/data" pwfile="$dir/airlock.password" log="$dir/server.log"
  if [[ ! -s "$data/PG_VERSION" ]]; then
    rm -rf "$data"
    local password
    password="$(head -c 18 /dev/urandom | base64 | tr -d '/+=\n')"
    (umask 077 && printf '%s\n' "$password" >"$pwfile")
    [[ "$(id -u)" == 0 ]] && chown postgres: "$pwfile"
    if ! copy_template "$data"; then
      as_pg "$PG_BIN/initdb" "${INITDB_ARGS[@]}" -D "$data" >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; die "initdb failed"; }
    fi
  fi
  [[ -s "$pwfile" ]] || die "$pwfile is missing: remove $dir and start again"
  if as_pg "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    echo "pg_server.sh: already running in $dir" >&2
  else
    # -k: the socket in DIR, not /var/run/postgresql (which may not exist).
    if ! as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
      start >&2; then
      tail -n 30 "$log" >&2 2>/dev/null || true
      die "the server did not start (port $port in use?)"
    fi
  fi
  local password psql=("$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres)
  password="$(cat "$pwfile")"
  # Idempotent: a second start finds the role and the database.
  as_pg "${psql[@]}" >&2 <<SQL
SELECT 'CREATE ROLE airlock LOGIN'
  WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'airlock') \gexec
ALTER ROLE airlock LOGIN PASSWORD '$password';
SELECT 'CREATE DATABASE airlock OWNER airlock ENCODING ''UTF8'' TEMPLATE template0'
  WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'airlock') \gexec
SQL
  echo "host=127.0.0.1 port=$port dbname=airlock user=airlock password=$password"
}

stop() {
  local dir="$1"
  local data="$dir/data"
  [[ -f "$data/postmaster.pid" ]] || return 0
  as_pg "$PG_BIN/pg_ctl" -D "$data" -m fast -w -t 30 stop >&2 2>&1 ||
    as_pg "$PG_BIN/pg_ctl" -D "$data" -m immediate -w -t 30 stop >&2 2>&1 ||
    { as_pg "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1 && die "could not stop the server in $dir"; }
  return 0
}

case "${1:-}" in
  start)
    (($# == 3)) || usage
    start "$2" "$3"
    ;;
  stop)
    (($# == 2)) || usage
    stop "$2"
    ;;
  *) usage ;;
esac
