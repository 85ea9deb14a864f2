#!/bin/sh
# The entrypoint of the local Postgres and Redis images (scripts/image.sh --servers), made from
# Debian's postgresql and redis-server packages, for what docker/docker-compose.yml uses of the
# official images:
# - `postgres`: POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB make the cluster on first start in
#   /var/lib/postgresql/data (the compose volume), with password auth from other hosts;
# - `redis-server …`: in /data (the compose volume), reachable from other containers (the official
#   image builds Redis with protected mode off; Debian's keeps it on, so it is switched off here).
# Both servers run as their own user. Any other command runs as given.
set -eu

case "${1:-}" in
  postgres) shift ;;
  redis-server)
    shift
    mkdir -p /data
    chown redis:redis /data
    exec setpriv --reuid=redis --regid=redis --init-groups redis-server "$@" --protected-mode no
    ;;
  *) exec "$@" ;;
esac

# setpriv execs the command as the user (runuser would stay as its parent).
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
PGDATA=${PGDATA:-/var/lib/postgresql/data}
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
if [ -z "${POSTGRES_PASSWORD:-}" ]; then
  echo "servers-entrypoint: POSTGRES_PASSWORD is not set (the compose file sets it)" >&2
  exit 1
fi

mkdir -p "$PGDATA" /run/postgresql
chown -R postgres:postgres "$PGDATA" /run/postgresql
chmod 700 "$PGDATA"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  chown postgres "$pwfile"
  as_postgres "$BIN/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" \
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    # A socket-only server for the set-up, as the official image does it.
    as_postgres "$BIN/pg_ctl" -D "$PGDATA" -o "-c listen_addresses='' -k /run/postgresql" -w -s start
    as_postgres "$BIN/psql" -q -h /run/postgresql -U "$POSTGRES_USER" -d postgres -v ON_ERROR_STOP=1 \
      -c "CREATE DATABASE \"$POSTGRES_DB\""
    as_postgres "$BIN/pg_ctl" -D "$PGDATA" -m fast -w -s stop
  fi
  echo "servers-entrypoint: cluster made in $PGDATA (user $POSTGRES_USER, database $POSTGRES_DB)"
fi

exec setpriv --reuid=postgres --regid=postgres --init-groups "$BIN/postgres" -D "$PGDATA" -c listen_addresses='*' -k /run/postgresql "$@"
