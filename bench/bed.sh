#!/usr/bin/env bash
# Measure the test bed: cold build time, warm `up` time, and peak memory of
# the control plane under the integration suite. Prints a Markdown report.
#
#   bench/bed.sh          warm up (3 runs) + peak memory
#   bench/bed.sh --cold   also a cold build, into scratch Go and bed caches
#                         (downloads every module again: ~10 minutes on 2 cores)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cluster="$root/tests/cluster"
# shellcheck source=../tests/cluster/lib.sh
source "$cluster/lib.sh"

cold=0
[[ "${1:-}" == --cold ]] && cold=1
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
secs() { printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100)); }

echo "## Test bed benchmark"
echo
echo "- date: $(date -u +%Y-%m-%d)"
echo "- machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "- Kubernetes $KUBE_VERSION, $(go version | cut -d' ' -f3)"
echo

if (( cold )); then
  scratch="$(mktemp -d)"
  t0=$(now_ms)
  GOMODCACHE="$scratch/mod" GOCACHE="$scratch/cache" LCM_CACHE_DIR="$scratch/bed" \
    "$cluster/build" >"$scratch/build.log" 2>&1
  t1=$(now_ms)
  echo "| cold build (modules downloaded, nothing compiled) | $(secs $((t1 - t0))) s |"
  echo "|---|---|"
  grep -E 'built in' "$scratch/build.log" | sed -E 's/.*\] (.*): built in (.*)/| \1 | \2 |/'
  chmod -R u+w "$scratch" && rm -rf "$scratch"
  echo
fi

"$cluster/build" >/dev/null
"$cluster/down" >/dev/null 2>&1 || true
"$cluster/up" >/dev/null  # the first up also generates certificates
runs=()
for _ in 1 2 3; do
  "$cluster/down" >/dev/null
  t0=$(now_ms)
  "$cluster/up" >/dev/null
  runs+=($(( $(now_ms) - t0 )))
done
mapfile -t sorted < <(printf '%s\n' "${runs[@]}" | sort -n)
echo "| warm \`tests/cluster/up\` (to nodes Ready) | median $(secs "${sorted[1]}") s (runs: $(for r in "${runs[@]}"; do printf '%s ' "$(secs "$r")"; done| xargs)) |"
echo "|---|---|"

# Peak resident memory of each component after the integration suite ran.
KUBECONFIG="$BED_STATE/kubeconfig" KUBECTL_BIN="$BED_BIN/kubectl" \
  "$root/.venv/bin/pytest" -q -p no:cacheprovider "$root/tests/integration" >/dev/null
total=0
for c in "${COMPONENTS[@]}"; do
  pid=$(<"$PIDS/$c.pid")
  kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")
  total=$((total + kb))
  echo "| peak RSS $c | $((kb / 1024)) MiB |"
done
echo "| peak RSS, all components | $((total / 1024)) MiB |"
"$cluster/down" >/dev/null
