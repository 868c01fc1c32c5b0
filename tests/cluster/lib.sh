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

# Runtime state of a running bed (gitignored).
BED_STATE="${BED_STATE:-$PROJECT_ROOT/.cluster}"

API_PORT="${BED_API_PORT:-16443}"
SERVER="https://127.0.0.1:$API_PORT"
PKI="$BED_STATE/pki"
LOGS="$BED_STATE/logs"
PIDS="$BED_STATE/pids"
# Start order; ./down stops them in reverse.
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

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

all_alive() {
  local c
  for c in "${COMPONENTS[@]}"; do pid_alive "$c" || return 1; done
}

bed_running() { [[ -f "$BED_STATE/kubeconfig" ]] && all_alive && api_ready; }

log() { printf '[bed %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { printf '[bed] ERROR: %s\n' "$*" >&2; exit 1; }
