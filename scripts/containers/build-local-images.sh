#!/usr/bin/env bash
# Builds, on a machine that reaches no image registry, the local images that stand in for the official
# ones: a Debian bookworm base (debootstrap), PostgreSQL, NATS (JetStream), nginx, a Node 20 base, and
# the marketplace image from the repo's Dockerfile on top of that Node base.
#   scripts/containers/build-local-images.sh [--bases-only]   (DOCKER_HOST must point at a running engine)
# Base images already present are kept (delete them, or set REBUILD=1, to build again). Needs root
# (debootstrap) and Debian's debootstrap package.
#
# The Node base is the host's own Node 20 binary and npm (the versions the tests run on), copied in;
# the host's CA certificates go into that base only, because this machine's outbound HTTPS is
# intercepted and `npm ci` inside `docker build` otherwise fails with SELF_SIGNED_CERT_IN_CHAIN.
# None of this is in the repo's Dockerfile, whose default base is the official node:20 image.
set -euo pipefail
cd "$(dirname "$0")"
REPO_ROOT=$(cd ../.. && pwd)

MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
BASE=${LOCAL_BASE_IMAGE:-local/bookworm}
POSTGRES=${LOCAL_POSTGRES_IMAGE:-local/postgres:15}
NATS=${LOCAL_NATS_IMAGE:-local/nats:2.9}
NGINX=${LOCAL_NGINX_IMAGE:-local/nginx}
NODE=${LOCAL_NODE_IMAGE:-local/node:20}
MARKET=${LOCAL_MARKET_IMAGE:-agent-market:local}

have() { [[ "${REBUILD:-0}" != 1 ]] && docker image inspect "$1" >/dev/null 2>&1; }
step() { echo "== $1 ($(date +%T))"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! have "$BASE"; then
  step "debootstrap bookworm → $BASE"
  debootstrap --variant=minbase bookworm "$tmp/rootfs" "$MIRROR" >"$tmp/debootstrap.log" 2>&1 ||
    { tail -30 "$tmp/debootstrap.log"; exit 1; }
  rm -rf "$tmp/rootfs/var/lib/apt/lists/"* "$tmp/rootfs/var/cache/apt/archives/"*.deb
  tar -C "$tmp/rootfs" -c . | docker import - "$BASE" >/dev/null
  rm -rf "$tmp/rootfs"
fi

if ! have "$POSTGRES"; then
  step "$POSTGRES"
  docker build -q --build-arg BASE="$BASE" -t "$POSTGRES" images/postgres
fi

if ! have "$NATS"; then
  step "$NATS"
  docker build -q --build-arg BASE="$BASE" -t "$NATS" images/nats
fi

if ! have "$NGINX"; then
  step "$NGINX"
  docker build -q --build-arg BASE="$BASE" -t "$NGINX" images/nginx
fi

if ! have "$NODE"; then
  step "$NODE (host's $(node --version) and npm $(npm --version))"
  mkdir -p "$tmp/node/certs"
  cp "$(readlink -f "$(command -v node)")" "$tmp/node/node"
  cp -a "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$tmp/node/npm"
  cp /usr/local/share/ca-certificates/*.crt "$tmp/node/certs/" 2>/dev/null || true
  cp images/node/Dockerfile "$tmp/node/Dockerfile"
  docker build -q --build-arg BASE="$BASE" -t "$NODE" "$tmp/node"
fi

# Always rebuilt (the repo changes between runs); docker's layer cache skips unchanged steps.
if [[ "${1:-}" != --bases-only ]]; then
  step "$MARKET (repo Dockerfile, BASE_IMAGE=$NODE)"
  docker build -q --build-arg BASE_IMAGE="$NODE" -t "$MARKET" "$REPO_ROOT"
fi

step "done"
docker image ls --format '{{.Repository}}:{{.Tag}}\t{{.Size}}' | grep -E "^(${BASE}|${POSTGRES%:*}|${NATS%:*}|${NGINX}|${NODE%:*}|${MARKET%:*})[:\t]" || true
