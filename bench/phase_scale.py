#!/usr/bin/env python3
"""What one phase of N Jobs costs the apiserver and the machine, this tree
against another revision, in one run.

For each N (default 10, 50, 200) and each tree (this checkout, and the
revision given with --anchor, checked out in a scratch worktree), a fresh
Python process runs the phase engine in-process on a one-wave install of N
Jobs (each runs 1 s on the bed's fake kubelet) in a new namespace. The runs
are interleaved and their order rotated, so a machine that slows down slows
both trees alike. Measured in that process:

  requests      HTTP requests the engine sent (counted in its ApiClient)
  status writes patches to phases/status, their bytes in all and the largest
  cpu           the process's CPU seconds (user + system) for the run
  rss           its peak resident memory

The Jobs' own time is the same for both trees; the difference is the engine.

Usage: KUBECONFIG=... bench/phase_scale.py [--anchor REV] [--sizes 10,50,200] [--runs 1] [--json FILE]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build" / "collections"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kubernetes import config, dynamic  # noqa: E402

from anchor import kubeconfig as bench_kubeconfig, rotated, side_by_side_args, trees  # noqa: E402
from phase_lag import install_crds  # noqa: E402

# The start of a worker: a fresh interpreter with the tree under test (argv[1])
# first on sys.path, an ApiClient `api` on the kubeconfig (argv[2]) that counts
# what it sends into `stats`, and `dyn` on it.
COUNTING = r'''
import json, os, resource, sys, time, uuid
sys.path.insert(0, sys.argv[1])
from kubernetes import config, dynamic

kubeconfig = sys.argv[2]
api = config.new_client_from_config(config_file=kubeconfig)
stats = {"requests": 0, "status_writes": 0, "status_bytes": 0, "largest_write": 0, "by": {}}
inner = api.call_api

def call_api(*args, **kwargs):
    # kubernetes < 34 calls call_api(path, method, ..., body=...); later
    # clients call_api(method, url, headers, body, ...) with the URL built.
    first, second = args[0], args[1]
    method, path = (first, second) if first.isupper() else (second, first)
    body = kwargs["body"] if "body" in kwargs else (args[3] if len(args) > 3 else None)
    path = path.split("?")[0]
    stats["requests"] += 1
    parts = path.strip("/").split("/")
    at = parts.index("namespaces") + 2 if "namespaces" in parts and len(parts) > parts.index("namespaces") + 2 \
        else len(parts) - 1
    what = "/".join([parts[at]] + parts[at + 2:at + 3])
    stats["by"][f"{method} {what}"] = stats["by"].get(f"{method} {what}", 0) + 1
    if method == "PATCH" and path.endswith("/status") and "/phases/" in path:
        size = len(body) if isinstance(body, (str, bytes)) else len(json.dumps(body, default=str))
        stats["status_writes"] += 1
        stats["status_bytes"] += size
        stats["largest_write"] = max(stats["largest_write"], size)
    return inner(*args, **kwargs)
api.call_api = call_api
dyn = dynamic.DynamicClient(api)
'''

# A one-wave install of argv[3] Jobs in a new namespace (prefix argv[4]).
WORKER = COUNTING + r'''
from ansible_collections.lcm.openstack.plugins.module_utils.phase.runner import PhaseRunner
from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import PhaseRequest, Source

count = int(sys.argv[3])
ns = (sys.argv[4] if len(sys.argv) > 4 else "scale") + "-" + uuid.uuid4().hex[:6]
namespaces = dyn.resources.get(api_version="v1", kind="Namespace")
namespaces.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
sas = dyn.resources.get(api_version="v1", kind="ServiceAccount")
while not sas.get(namespace=ns).to_dict()["items"]:  # pods need the default account
    time.sleep(0.1)
jobs = [{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": f"scale-{n:03d}"},
         "spec": {"backoffLimit": 0, "template": {
             "metadata": {"annotations": {"bed.lcm.openstack.org/duration": "1s"}},
             "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "registry.invalid/x:1"}]}}}}
        for n in range(count)]
req = PhaseRequest(type="install", service="scale", release="scale", namespace=ns, timeout=900,
                   source=Source(manifests=jobs, selection="manifests"))
stats["requests"] = stats["status_writes"] = stats["status_bytes"] = stats["largest_write"] = 0
stats["by"] = {}
cpu0, wall0 = os.times(), time.monotonic()
PhaseRunner(dyn, req).present()
cpu1 = os.times()
stats.update(cpu=(cpu1.user - cpu0.user) + (cpu1.system - cpu0.system), wall=time.monotonic() - wall0,
             rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
namespaces.delete(name=ns)
print(json.dumps(stats))
'''


def worker(code: str, tree: Path, kubeconfig: str, *args: str) -> Dict[str, Any]:
    """Run a worker (COUNTING + its own code) for `tree`; what it printed last, as JSON."""
    out = subprocess.run([sys.executable, "-c", code, str(tree), kubeconfig, *args],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"a bench worker failed in {tree} ({' '.join(args)}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_one(tree: Path, count: int, kubeconfig: str, prefix: str = "scale") -> Dict[str, Any]:
    return worker(WORKER, tree, kubeconfig, str(count), prefix)


def main() -> None:
    parser = side_by_side_args(__doc__, runs=1)
    parser.add_argument("--sizes", default="10,50,200")
    args = parser.parse_args()
    kubeconfig = bench_kubeconfig()
    sizes = [int(s) for s in args.sizes.split(",")]
    install_crds(dynamic.DynamicClient(config.new_client_from_config(config_file=kubeconfig)))
    with trees(args.anchor) as found:
        names = list(found)
        results: Dict[str, Dict[int, List[Dict[str, float]]]] = {t: {n: [] for n in sizes} for t in found}
        turn = 0
        for _ in range(args.runs):
            for n in sizes:
                for name in rotated(names, turn):
                    results[name][n].append(run_one(found[name], n, kubeconfig))
                    print(f"{name}, {n} Jobs: {results[name][n][-1]}", file=sys.stderr, flush=True)
                turn += 1
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    print(f"### One phase of N Jobs ({args.runs} run(s) each, medians, {datetime.now(timezone.utc):%Y-%m-%d})\n")
    print("| tree | Jobs | requests | status writes | status bytes | largest write | CPU | peak RSS |")
    print("|---|---|---|---|---|---|---|---|")
    for n in sizes:
        for name in names:
            runs = results[name][n]

            def med(field: str) -> float:
                return statistics.median(r[field] for r in runs)
            print(f"| {name} | {n} | {med('requests'):.0f} | {med('status_writes'):.0f} "
                  f"| {med('status_bytes') / 1024:.1f} KiB | {med('largest_write') / 1024:.1f} KiB "
                  f"| {med('cpu'):.2f} s | {med('rss_mib'):.0f} MiB |")


if __name__ == "__main__":
    main()
