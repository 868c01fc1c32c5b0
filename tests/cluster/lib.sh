# Shared settings for the test bed scripts. Sourced, not executed.
# shellcheck shell=bash
# shellcheck disable=SC2034  # the variables are used by the scripts that source this

CLUSTER_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PROJECT_ROOT="$(cd "$CLUSTER_SRC/../.." && pwd)"

# Pinned versions. The Go modules pin the code; these only stamp the version
# strings that the binaries report, and key the cache.
KUBE_VERSION="v1.36.3"
HELM3_VERSION="v3.22.0"
HELM4_VERSION="v4.3.1"

# Bump when the build flags in ./build change, so the cache is rebuilt.
BUILD_REV=1

# The cache lives outside the work tree and is keyed by everything that
# decides the build, so a second build of the same pins is a no-op.
LCM_CACHE_DIR="${LCM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lcm-openstack}"
bed_cache_key() {
  { echo "$BUILD_REV $KUBE_VERSION $HELM3_VERSION $HELM4_VERSION"
    cat "$CLUSTER_SRC/go.mod" "$CLUSTER_SRC/go.sum" "$CLUSTER_SRC/cmd/etcd/main.go" \
        "$CLUSTER_SRC/helm/go.mod" "$CLUSTER_SRC/helm/go.sum"
  } | sha256sum | cut -c1-16
}
BED_BIN="$LCM_CACHE_DIR/bed-$KUBE_VERSION-$(bed_cache_key)/bin"

# bedlet (cmd/bedlet, the bed's own component) changes more often than the
# pins: its binary carries a key of its own sources, so editing it rebuilds
# that one binary (seconds), not the whole bed.
bedlet_key() {
  cat "$CLUSTER_SRC/go.mod" "$CLUSTER_SRC/go.sum" "$CLUSTER_SRC"/cmd/bedlet/*.go | sha256sum | cut -c1-12
}
BEDLET_BIN="$BED_BIN/bedlet-$(bedlet_key)"

# Runtime state of a running bed (gitignored).
BED_STATE="${BED_STATE:-$PROJECT_ROOT/.cluster}"

API_PORT="${BED_API_PORT:-16443}"
SERVER="https://127.0.0.1:$API_PORT"
PKI="$BED_STATE/pki"
LOGS="$BED_STATE/logs"
PIDS="$BED_STATE/pids"
# Start order; ./down stops them in reverse. The control plane (CORE) keeps
# the cluster's state; kwok and bedlet play the nodes and can be restarted
# alone, which ./up does when their configuration or code changed.
CORE=(etcd kube-apiserver kube-controller-manager kube-scheduler)
NODE_SIDE=(kwok bedlet)
COMPONENTS=("${CORE[@]}" "${NODE_SIDE[@]}")

# What a running kwok or bedlet must have been started from: its stamp,
# recorded by ./up next to its pid.
expected_stamp() { # name
  case $1 in
    kwok) sha256sum <"$CLUSTER_SRC/kwok-stages.yaml" | cut -c1-12 ;;
    bedlet) basename "$BEDLET_BIN" ;;
  esac
}
fresh() { # name -> 0 when it runs and was started from the current stamp
  pid_alive "$1" && [[ "$(cat "$PIDS/$1.stamp" 2>/dev/null)" == "$(expected_stamp "$1")" ]]
}

pid_alive() { # name -> 0 when the recorded process runs our binary
  local f="$PIDS/$1.pid" pid
  [[ -f $f ]] || return 1
  pid=$(<"$f")
  [[ -d /proc/$pid ]] || return 1
  [[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" == "$BED_BIN/$1"* ]]
}

api_ready() {
  curl -sf --max-time 2 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
    "$SERVER/readyz" >/dev/null 2>&1
}

all_alive() { # [names...] -> 0 when each (default: every component) runs
  local c
  (( $# )) || set -- "${COMPONENTS[@]}"
  for c in "$@"; do pid_alive "$c" || return 1; done
}

bed_running() { [[ -f "$BED_STATE/kubeconfig" ]] && all_alive && api_ready; }
core_running() { [[ -f "$BED_STATE/kubeconfig" ]] && all_alive "${CORE[@]}" && api_ready; }

# Stop one recorded process: TERM, then KILL after 10 s.
ours() { # pid name -> 0 when the pid still runs the bed's binary of that name
  [[ -d /proc/$1 ]] && [[ "$(readlink "/proc/$1/exe" 2>/dev/null)" == */"$2"* ]]
}
stop_component() { # name -> 0 when it was running and is stopped now
  local c=$1 f="$PIDS/$1.pid" pid
  [[ -f $f ]] || return 1
  pid=$(<"$f")
  rm -f "$PIDS/$c.stamp"
  if ! ours "$pid" "$c"; then rm -f "$f"; return 1; fi
  log "stopping $c (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do ours "$pid" "$c" || break; sleep 0.1; done
  if ours "$pid" "$c"; then
    log "$c did not stop within 10s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do ours "$pid" "$c" || break; sleep 0.1; done
  fi
  ours "$pid" "$c" && die "could not stop $c (pid $pid)"
  rm -f "$f"
}

log() { printf '[bed %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { printf '[bed] ERROR: %s\n' "$*" >&2; exit 1; }
