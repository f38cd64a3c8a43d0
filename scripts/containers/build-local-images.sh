#!/usr/bin/env bash
# Builds, on a machine that reaches no image registry, the local images that stand in for the official
# ones: a Debian bookworm base (debootstrap), PostgreSQL, NATS (JetStream), nginx, a Node base, and
# the marketplace image from the repo's Dockerfile on top of that Node base.
#   scripts/containers/build-local-images.sh [--bases-only]   (DOCKER_HOST must point at a running engine)
# Base images already present are kept (delete them, or set REBUILD=1, to build again). Needs root
# (debootstrap) and Debian's debootstrap package.
#
# The Node base is the host's own Node binary and npm (those first on PATH: .ci/run puts Node 24 there), copied in;
# the host's CA certificates go into that base only, because this machine's outbound HTTPS is
# intercepted and `npm ci` inside `docker build` otherwise fails with SELF_SIGNED_CERT_IN_CHAIN.
# None of this is in the repo's Dockerfile, whose default base is the official node:24 image.
set -euo pipefail
cd "$(dirname "$0")"
REPO_ROOT=$(cd ../.. && pwd)

MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
BASE=${LOCAL_BASE_IMAGE:-local/bookworm}
POSTGRES=${LOCAL_POSTGRES_IMAGE:-local/postgres:15}
NATS=${LOCAL_NATS_IMAGE:-local/nats:2.9}
NGINX=${LOCAL_NGINX_IMAGE:-local/nginx}
NODE=${LOCAL_NODE_IMAGE:-local/node:$(node -p 'process.versions.node.split(".")[0]')}
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

# Each build's output goes to its own log, shown only when it fails.
build() {
  local image=$1 log="$tmp/build-${1//[\/:]/_}.log"
  shift
  local t=$SECONDS
  if docker build -q "$@" -t "$image" >"$log" 2>&1; then
    echo "== built $image in $((SECONDS - t)) s"
  else
    echo "== FAILED: $image" >&2
    cat "$log" >&2
    return 1
  fi
}

# PostgreSQL, NATS and nginx build in the background while the Node base and the marketplace image
# (the longest chain) build in the foreground.
pids=()
have "$POSTGRES" || { build "$POSTGRES" --build-arg BASE="$BASE" images/postgres & pids+=($!); }
have "$NATS" || { build "$NATS" --build-arg BASE="$BASE" images/nats & pids+=($!); }
have "$NGINX" || { build "$NGINX" --build-arg BASE="$BASE" images/nginx & pids+=($!); }

if ! have "$NODE"; then
  step "$NODE (host's $(node --version) and npm $(npm --version))"
  mkdir -p "$tmp/node/certs"
  cp "$(readlink -f "$(command -v node)")" "$tmp/node/node"
  cp -a "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$tmp/node/npm"
  cp /usr/local/share/ca-certificates/*.crt "$tmp/node/certs/" 2>/dev/null || true
  cp images/node/Dockerfile "$tmp/node/Dockerfile"
  build "$NODE" --build-arg BASE="$BASE" "$tmp/node"
fi

# Always rebuilt (the repo changes between runs); docker's layer cache skips unchanged steps.
failed=0
if [[ "${1:-}" != --bases-only ]]; then
  step "$MARKET (repo Dockerfile, BASE_IMAGE=$NODE)"
  build "$MARKET" --build-arg BASE_IMAGE="$NODE" "$REPO_ROOT" || failed=1
fi
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
((failed == 0)) || exit 1

step "done"
docker image ls --format '{{.Repository}}:{{.Tag}}\t{{.Size}}' | grep -E "^(${BASE}|${POSTGRES%:*}|${NATS%:*}|${NGINX}|${NODE%:*}|${MARKET%:*})[:\t]" || true
