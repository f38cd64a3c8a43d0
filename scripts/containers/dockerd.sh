#!/usr/bin/env bash
# Starts a private Docker engine (its own data root, exec root, socket and pid file), so it never
# touches a system-wide dockerd. Prints `export DOCKER_HOST=…` and `DOCKERD_PID=…` lines to eval.
#   eval "$(scripts/containers/dockerd.sh start /var/lib/my-docker)"   …   scripts/containers/dockerd.sh stop "$DOCKERD_PID"
# Needs root and Debian's docker.io (dockerd, containerd, runc).
set -euo pipefail

cmd=${1:?usage: dockerd.sh start <dir> | stop <pid>}
case "$cmd" in
  start)
    dir=${2:?usage: dockerd.sh start <dir>}
    mkdir -p "$dir/data" "$dir/exec"
    sock="$dir/docker.sock"
    # Output goes to a log file: the caller's stdout is only the two lines to eval.
    dockerd --data-root "$dir/data" --exec-root "$dir/exec" --pidfile "$dir/dockerd.pid" \
      -H "unix://$sock" >"$dir/dockerd.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 60); do
      if DOCKER_HOST="unix://$sock" docker version >/dev/null 2>&1; then
        echo "export DOCKER_HOST=unix://$sock"
        echo "DOCKERD_PID=$pid"
        exit 0
      fi
      if ! kill -0 "$pid" 2>/dev/null; then break; fi
      sleep 0.5
    done
    echo "dockerd did not start; see $dir/dockerd.log:" >&2
    tail -20 "$dir/dockerd.log" >&2
    kill "$pid" 2>/dev/null || true
    exit 1
    ;;
  stop)
    pid=${2:?usage: dockerd.sh stop <pid>}
    kill -TERM "$pid" 2>/dev/null || exit 0
    # dockerd stops its containers (10 s grace each) and its containerd before exiting.
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.5; done
    kill -KILL "$pid" 2>/dev/null || true
    ;;
  *)
    echo "usage: dockerd.sh start <dir> | stop <pid>" >&2
    exit 2
    ;;
esac
