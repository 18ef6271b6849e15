#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the store tests.
#
#   .ci/postgres.sh start <directory>   # prints DATABASE_URL=… on its last line
#   .ci/postgres.sh stop <directory>
#
# `start` installs PostgreSQL from Debian packages when no server binaries are
# found (root only: apt-get update && apt-get install -y postgresql), runs
# initdb in <directory> as a non-root user (the `postgres` user when run as
# root; servers refuse to run as root), and starts the server on 127.0.0.1 at
# a free port with trust authentication — reachable only from this machine,
# gone when the directory is removed. Every step has a time limit and
# package installs retry.
set -euo pipefail

command="${1:-}"
directory="${2:-}"
if [ -z "$command" ] || [ -z "$directory" ]; then
  echo "usage: $0 start|stop <directory>" >&2
  exit 2
fi

find_bin() {
  local candidate
  for candidate in /usr/lib/postgresql/*/bin; do
    if [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ]; then echo "$candidate"; fi
  done | sort -V | tail -n 1
}

as_owner() {
  if [ "$(id -u)" = "0" ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

install_postgres() {
  if [ "$(id -u)" != "0" ]; then
    echo "error: PostgreSQL server binaries not found and not root: install the 'postgresql' Debian package" >&2
    return 1
  fi
  local attempt
  for attempt in 1 2 3; do
    if timeout 600 apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq postgresql >/dev/null; then
      return 0
    fi
    echo "ci: apt-get install postgresql failed or timed out (attempt $attempt of 3)" >&2
    sleep 5
  done
  return 1
}

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

case "$command" in
  start)
    bin="$(find_bin)"
    if [ -z "$bin" ]; then
      echo "ci: installing PostgreSQL from Debian packages" >&2
      install_postgres
      bin="$(find_bin)"
    fi
    mkdir -p "$directory"
    if [ "$(id -u)" = "0" ]; then
      id postgres >/dev/null 2>&1 || useradd --system --home-dir "$directory" postgres
      chown postgres "$directory"
    fi
    chmod 700 "$directory"
    # C.UTF-8 keeps full-text word splitting Unicode-aware; a system without it falls back to the C locale.
    as_owner timeout 120 "$bin/initdb" -D "$directory/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null ||
      { rm -rf "$directory/data" && as_owner timeout 120 "$bin/initdb" -D "$directory/data" -U postgres --auth=trust -E UTF8 --no-locale >/dev/null; }
    port="$(free_port)"
    as_owner timeout 120 "$bin/pg_ctl" -D "$directory/data" -l "$directory/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $directory -c fsync=on -c max_connections=100" start >/dev/null
    timeout 60 "$bin/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "CREATE DATABASE context_engine_test" >/dev/null
    echo "$port" >"$directory/port"
    echo "DATABASE_URL=postgres://postgres@127.0.0.1:$port/context_engine_test"
    ;;
  stop)
    bin="$(find_bin)"
    if [ -n "$bin" ] && [ -d "$directory/data" ]; then
      as_owner timeout 60 "$bin/pg_ctl" -D "$directory/data" -m fast -w -t 30 stop >/dev/null 2>&1 || true
    fi
    rm -rf "$directory"
    ;;
  *)
    echo "usage: $0 start|stop <directory>" >&2
    exit 2
    ;;
esac
