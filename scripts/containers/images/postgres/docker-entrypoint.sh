#!/bin/sh
# First start: initdb with the official image's variables; then run postgres in the foreground.
set -eu
[ "${1:-}" = postgres ] && shift
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pw=$(mktemp)
  printf '%s\n' "${POSTGRES_PASSWORD:-}" >"$pw"
  if [ -n "${POSTGRES_PASSWORD:-}" ]; then auth=scram-sha-256; else auth=trust; fi
  initdb -D "$PGDATA" -U "$user" --pwfile="$pw" --auth-local=trust --auth-host="$auth" >/dev/null
  rm -f "$pw"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  echo "host all all all $auth" >>"$PGDATA/pg_hba.conf"
  if [ "$db" != postgres ]; then
    echo "CREATE DATABASE \"$db\" OWNER \"$user\";" | postgres --single -D "$PGDATA" postgres >/dev/null
  fi
  echo "initialised $PGDATA (user $user, database $db, host auth $auth)"
fi
exec postgres -D "$PGDATA" "$@"
