#!/usr/bin/env python3
"""The compute kit's greenfield on the bed against its critical path.

examples/compute-kit (mariadb, memcached, rabbitmq, openvswitch, keystone,
placement, libvirt, neutron, nova, cinder and barbican from the stock
openstack-helm charts at 2025.2) deployed by one `ansible-playbook
playbooks/site.yml --forks 11` into a namespace of its own, --runs times (a
new namespace each), then removed.

Measured per run, from the ServiceLifecycles (bench/site.py's reading):
  wall            from the start of ansible-playbook to its end (the plan,
                  which renders the eleven charts, included).
  critical path   the heaviest chain of what the flows waited for (each
                  record's dependsOn, as the plan derived it from the charts),
                  each service weighing its flow's work: completed minus the end
                  of its wait for dependencies. nova, neutron and libvirt wait
                  for none of each other: they run side by side.
  serial          the sum of every service's work: one service after the other.
  overhead        wall minus critical path: the plan, the flows' starts, and
                  what the order costs beyond the work itself.

Usage: KUBECONFIG=... HELM_BIN=... bench/compute_kit.py [--runs 1] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from anchor import bench_site, kubeconfig as bench_kubeconfig  # noqa: E402
from support.site_run import Site  # noqa: E402


critical_path, flow_times = bench_site().critical_path, bench_site().flow_times

from kubernetes import config, dynamic  # noqa: E402


def one_run(dyn: Any, kubeconfig: str, scratch: Path) -> Dict[str, Any]:
    namespace = f"kit-bench-{uuid.uuid4().hex[:6]}"
    site = Site(scratch / namespace, kubeconfig, dyn, namespace, example="compute-kit")
    started = time.monotonic()
    run = site.run()
    wall = time.monotonic() - started
    if run.returncode != 0:
        raise SystemExit(f"the site run failed:\n{run.stdout[-4000:]}")
    records = [site.lifecycle(s) for s in site.services]
    times = flow_times(records)
    depends = {r["spec"]["service"]: [d.split("/")[-1].split(">=")[0] for d in r["spec"].get("dependsOn") or []]
               for r in records}
    path, chain = critical_path(depends, {s: t["work"] for s, t in times.items()})
    removed = site.run(playbook="site_remove.yml")
    if removed.returncode == 0:
        dyn.resources.get(api_version="v1", kind="Namespace").delete(name=namespace)
    return {"namespace": namespace, "wall": round(wall, 1), "critical_path": path, "chain": chain,
            "serial": sum(t["work"] for t in times.values()),
            "work": {s: t["work"] for s, t in sorted(times.items())}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--json", help="write the runs to this file")
    args = parser.parse_args()
    kubeconfig = bench_kubeconfig()
    dyn = dynamic.DynamicClient(config.new_client_from_config(config_file=kubeconfig))
    runs: List[Dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="lcm-kit-bench-") as scratch:
        for _ in range(args.runs):
            runs.append(one_run(dyn, kubeconfig, Path(scratch)))
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    print(f"compute kit greenfield, {len(runs)} run(s), {stamp}")
    print("| run | wall | critical path | overhead | serial | chain |")
    print("|---|---|---|---|---|---|")
    for n, r in enumerate(runs, 1):
        print(f"| {n} | {r['wall']:.0f} s | {r['critical_path']:.0f} s | {r['wall'] - r['critical_path']:.0f} s "
              f"| {r['serial']:.0f} s | {' -> '.join(r['chain'])} |")
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=2))


if __name__ == "__main__":
    main()
