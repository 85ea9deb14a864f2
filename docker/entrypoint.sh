#!/bin/sh
# First argument picks the process: api | worker | migrate | admin <command...> | health <url>.
# `exec` makes node the process that receives SIGTERM from `docker stop`.
set -eu

cmd="${1:-api}"
[ "$#" -gt 0 ] && shift

case "$cmd" in
  api)     exec node dist/apps/api/src/main.js "$@" ;;
  worker)  exec node dist/apps/worker/src/main.js "$@" ;;
  migrate) exec node dist/apps/admin/src/main.js migrate "$@" ;;
  admin)   exec node dist/apps/admin/src/main.js "$@" ;;
  # A health probe for orchestrators that run a command (compose healthchecks): exit 0 when the
  # URL answers 200 within 4 s. The image has no curl; the api's certificate may be self-signed
  # (the probe checks liveness, not identity), hence rejectUnauthorized false, as `curl -k`.
  health)
    exec node -e "
      const url = new URL(process.argv[1]);
      const client = require(url.protocol === 'https:' ? 'node:https' : 'node:http');
      client.get(url, { rejectUnauthorized: false, timeout: 4000 }, (res) => process.exit(res.statusCode === 200 ? 0 : 1))
        .on('error', () => process.exit(1)).on('timeout', () => process.exit(1));
    " "$@" ;;
  *)
    echo "usage: entrypoint.sh api | worker | migrate | admin <command...> | health <url> (got: $cmd)" >&2
    exit 64
    ;;
esac
