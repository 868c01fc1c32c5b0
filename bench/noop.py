#!/usr/bin/env python3
"""What a call that changes nothing costs, from process start to exit, side by
side with kubernetes.core and plain helm, in one run.

Each case runs once to make its state (a Succeeded one-Job phase, a deployed
release, a ConfigMap), then every case runs --runs times more, interleaved,
the order rotated each round, so a machine that slows down slows every case
alike. Each run is a fresh `ansible localhost -m <module>` (or `helm status`)
process; measured are its wall time and the CPU it and its children used.

  phase                  lcm.openstack.phase re-run on a Succeeded phase
  kubernetes.core.k8s    a ConfigMap applied again, unchanged
  helm_release (3 / 4)   lcm.openstack.helm_release on a deployed, unchanged release
  kubernetes.core.helm   the same chart and values, Helm 3
  helm status (3 / 4)    plain helm on the same release
  ansible.builtin.command helm status (3 / 4)
                         the same helm run as an Ansible task: what any
                         module costs at least

With --anchor REV, the lcm.openstack cases run for REV too (a scratch git
worktree of it), beside this tree.

Usage: KUBECONFIG=... HELM3_BIN=... HELM4_BIN=... bench/noop.py [--anchor REV] [--runs 5] [--json FILE]
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build" / "collections"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kubernetes import config, dynamic  # noqa: E402

from anchor import THIS_TREE, kubeconfig as bench_kubeconfig, rotated, side_by_side_args, trees  # noqa: E402
from phase_lag import install_crds, job  # noqa: E402

ANSIBLE = str(Path(sys.executable).parent / "ansible")
CHART = str(ROOT / "tests" / "integration" / "charts" / "svc")
# One quick db-sync hook, the other Jobs off: the release's own time stays small.
VALUES = {"manifests": {"job_db_init": False, "job_bootstrap": False, "job_db_backup": False,
                        "job_db_restore": False, "job_db_drop": False},
          "jobs": {"db_sync": {"duration": "0s"}}}
Case = Tuple[List[str], Dict[str, str]]


def ansible(module: str, args: Dict, collections: Path) -> Case:
    env = {"ANSIBLE_COLLECTIONS_PATH": str(collections), "ANSIBLE_LOCALHOST_WARNING": "false",
           "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false"}
    return [ANSIBLE, "localhost", "-m", module, "-a", json.dumps(args)], env


def cases(ns: str, found: Dict[str, Path], helm: Dict[str, str], plain: Optional[Dict[str, str]] = None) -> Dict[str, Case]:
    """The calls, by name; `helm` the binary_path of the modules by major, `plain`
    the helm run directly (default: the same)."""
    out: Dict[str, Case] = {}
    core = found[THIS_TREE]  # kubernetes.core comes with the ansible package
    for tree, path in found.items():
        suffix = "" if tree == THIS_TREE else f" ({tree})"
        out[f"phase{suffix}"] = ansible("lcm.openstack.phase", {
            "type": "install", "service": "noop", "namespace": ns,
            "source": {"manifests": [job("noop-job")], "selection": "manifests"}}, path)
        for major, binary in helm.items():
            out[f"helm_release, Helm {major}{suffix}"] = ansible("lcm.openstack.helm_release", {
                "name": f"rel{major}", "namespace": ns, "chart": CHART, "values": VALUES,
                "binary_path": binary}, path)
    out["kubernetes.core.k8s"] = ansible("kubernetes.core.k8s", {"definition": {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "noop", "namespace": ns},
        "data": {"a": "1"}}}, core)
    out["kubernetes.core.helm, Helm 3"] = ansible("kubernetes.core.helm", {
        "name": "relk", "release_namespace": ns, "chart_ref": CHART, "release_values": VALUES,
        "binary_path": helm["3"]}, core)
    for major, binary in (plain or helm).items():
        out[f"helm status, Helm {major}"] = ([binary, "status", f"rel{major}", "-n", ns], {})
        # The floor of any Ansible module: the same helm run as a task (process
        # start, the module's own start, the helm process). It reports changed.
        out[f"{COMMAND} helm status, Helm {major}"] = ansible(
            COMMAND, {"argv": [binary, "status", f"rel{major}", "-n", ns]}, core)
    return out


COMMAND = "ansible.builtin.command"


def changes_expected(name: str) -> Optional[bool]:
    """What a no-op case must report: nothing changed, but a command task always says it did."""
    return None if name.startswith(COMMAND) else False


def timed(case: Case, changes: Optional[bool] = False, extra_env: Optional[Dict[str, str]] = None) -> Dict[str, float]:
    """One run of `case`: its wall time, the CPU it and its children used, and
    when it started and ended (time.time()). `changes`: whether an Ansible
    module must report a change (False: a no-op; None: either)."""
    argv, env = case
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started, start = time.time(), time.monotonic()
    proc = subprocess.run(argv, env=dict(os.environ, **env, **(extra_env or {})), capture_output=True, text=True,
                          check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    changed = "| CHANGED" in proc.stdout
    if changes is not None and changed != changes:
        raise SystemExit(f"{' '.join(argv[:4])} {'changed something on a no-op run' if changed else 'changed nothing'}:"
                         f"\n{proc.stdout[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "start": started, "end": started + wall}


def main() -> None:
    parser = side_by_side_args(__doc__, runs=5)
    args = parser.parse_args()
    kubeconfig = bench_kubeconfig()
    helm = {"3": os.environ["HELM3_BIN"], "4": os.environ["HELM4_BIN"]}
    dyn = dynamic.DynamicClient(config.new_client_from_config(config_file=kubeconfig))
    install_crds(dyn)
    ns = f"noop-{uuid.uuid4().hex[:6]}"
    namespaces = dyn.resources.get(api_version="v1", kind="Namespace")
    namespaces.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    try:
        with trees(args.anchor) as found:
            todo = cases(ns, found, helm)
            for argv, env in todo.values():  # the state each no-op finds
                subprocess.run(argv, env=dict(os.environ, **env), capture_output=True, check=True)
            names = list(todo)
            results: Dict[str, List[Dict[str, float]]] = {n: [] for n in names}
            for turn in range(args.runs):
                for name in rotated(names, turn):
                    results[name].append(timed(todo[name], changes_expected(name)))
                print(f"round {turn + 1}/{args.runs}", file=sys.stderr, flush=True)
    finally:
        namespaces.delete(name=ns)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    print(f"### No-op calls ({args.runs} runs each, interleaved, medians, {datetime.now(timezone.utc):%Y-%m-%d})\n")
    print("| call | wall | CPU (process and children) |")
    print("|---|---|---|")
    for name in names:
        wall = statistics.median(r["wall"] for r in results[name])
        cpu = statistics.median(r["cpu"] for r in results[name])
        print(f"| {name} | {wall:.2f} s | {cpu:.2f} s |")


if __name__ == "__main__":
    main()
