#!/bin/sh
# First argument picks the process: api | worker | migrate | admin <command...>.
# `exec` makes node the process that receives SIGTERM from `docker stop`.
set -eu

cmd="${1:-api}"
[ "$#" -gt 0 ] && shift

case "$cmd" in
  api)     exec node dist/apps/api/src/main.js "$@" ;;
  worker)  exec node dist/apps/worker/src/main.js "$@" ;;
  migrate) exec node dist/apps/admin/src/main.js migrate "$@" ;;
  admin)   exec node dist/apps/admin/src/main.js "$@" ;;
  *)
    echo "usage: entrypoint.sh api | worker | migrate | admin <command...> (got: $cmd)" >&2
    exit 64
    ;;
esac
