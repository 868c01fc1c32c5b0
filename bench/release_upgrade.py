#!/usr/bin/env python3
"""A release upgrade on the bed: a whole site's against its ordered critical
path, and an API's ready endpoints over time with update_strategy rolling
against drain.

  site       examples/compute-kit deployed at 2025.2 into a namespace of its
             own (as bench/compute_kit.py does), then `playbooks/site.yml
             -e openstack_release=2026.1` (--site-strategy adds -e
             update_strategy=...). From the ServiceLifecycles: each updated
             service's update flow (status.flow startedAt to completedAt,
             whole seconds as the apiserver stamps them, from the run's
             start), the wall time of the upgrade run (ansible-playbook's
             start to its end, the plan included), the critical path (the
             heaviest chain of updated services by the records' dependsOn,
             each weighing its update's duration) and the serial sum (one
             service after the other). The ready endpoints of keystone-api and
             nova-api are watched during the upgrade (tests/support/endpoint_watch.py).
  endpoints  a small site (mariadb, memcached, rabbitmq, keystone of
             examples/site) in a namespace of its own; keystone updated to
             the next release --runs times with each of update_strategy=drain
             and update_strategy=rolling, the order alternating each round,
             each update a `playbooks/site.yml --limit keystone`. Beside each,
             tests/support/endpoint_watch.py watches the EndpointSlices of
             Service keystone-api: the seconds it had no ready endpoint, the
             fewest ready endpoints, and the update's wall time. keystone runs
             two API pods that roll one at a time (ROLLING_VALUES: the chart's
             pod.replicas.api 2 and rolling_update.max_unavailable 0); its
             default, one pod and max_unavailable 1, may drop to none whatever
             the strategy. The Phases each update ran are listed, so a run
             shows which strategy the flow took.

Usage: KUBECONFIG=... HELM_BIN=... bench/release_upgrade.py [--runs 2] [--only site,endpoints] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build" / "collections"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from anchor import bench_site, kubeconfig as bench_kubeconfig, rotated  # noqa: E402
from phase_lag import install_crds  # noqa: E402
from support import compute_kit, openstack_helm  # noqa: E402
from support.endpoint_watch import EndpointWatch  # noqa: E402
from support.site_run import Site  # noqa: E402

from ansible_collections.lcm.openstack.plugins.module_utils.common.openstack_release import name, series  # noqa: E402


critical_path, stamp = bench_site().critical_path, bench_site().stamp

from kubernetes import config, dynamic  # noqa: E402

ITEMS = ("site", "endpoints")
STRATEGIES = ("drain", "rolling")
FROM_RELEASE, TO_RELEASE = "2025.2", "2026.1"
API = "keystone-api"
SITE_APIS = ("keystone-api", "nova-api")  # watched during the site's upgrade too
SMALL_SITE = ("mariadb", "memcached", "rabbitmq", "keystone")
# keystone's chart: two API pods, replaced one at a time, a new one Ready before an old one goes.
ROLLING_VALUES: Dict[str, Any] = {"pod": {"replicas": {"api": 2},
                                          "lifecycle": {"upgrades": {"deployments": {"rolling_update": {"max_unavailable": 0}}}}}}


# -- the arithmetic ---------------------------------------------------------------------------

def next_release(version: str) -> str:
    """The OpenStack release after `version` (N -> N+1: 2026.1 -> 2026.2 -> 2027.1)."""
    found = series(version)
    if found is None:
        raise ValueError(f"{version} is no OpenStack release")
    year, half = found
    return name((year, 2) if half == 1 else (year + 1, 1))


def update_times(records: Sequence[Mapping[str, Any]], since: float) -> Dict[str, Dict[str, float]]:
    """Per service whose last flow is an update begun at or after `since` (epoch
    seconds): its start and end from `since`, and its duration."""
    out = {}
    for r in records:
        flow = (r.get("status") or {}).get("flow") or {}
        if flow.get("name") != "update" or not flow.get("startedAt") or not flow.get("completedAt"):
            continue
        started, done = stamp(flow["startedAt"]), stamp(flow["completedAt"])
        if started < int(since):  # stamped in whole seconds
            continue
        out[r["spec"]["service"]] = {"start": started - since, "end": done - since, "duration": done - started}
    return out


def dependency_name(dep: str) -> str:
    """`ns/keystone>=2026.1` -> keystone."""
    return dep.split("/")[-1].split(">=")[0]


def updated_dependencies(records: Sequence[Mapping[str, Any]], updated: Sequence[str]) -> Dict[str, List[str]]:
    """Each updated service's dependencies (the records' dependsOn) among the updated ones."""
    out = {}
    for r in records:
        svc = r["spec"]["service"]
        if svc in updated:
            out[svc] = sorted({dependency_name(d) for d in r["spec"].get("dependsOn") or []} & set(updated))
    return out


def site_result(records: Sequence[Mapping[str, Any]], since: float, wall: float) -> Dict[str, Any]:
    times = update_times(records, since)
    path, chain = critical_path(updated_dependencies(records, list(times)), {s: t["duration"] for s, t in times.items()})
    return {"wall": round(wall, 1), "critical_path": path, "chain": chain,
            "serial": sum(t["duration"] for t in times.values()), "services": times}


def site_table(result: Mapping[str, Any]) -> List[str]:
    lines = ["| service | start | end | duration |", "|---|---|---|---|"]
    for svc, t in sorted(result["services"].items(), key=lambda kv: (kv[1]["start"], kv[0])):
        lines.append(f"| {svc} | {t['start']:.0f} s | {t['end']:.0f} s | {t['duration']:.0f} s |")
    wall, path = result["wall"], result["critical_path"]
    lines += ["", "| wall | critical path | wall / path | serial sum | serial / path |", "|---|---|---|---|---|",
              f"| {wall:.0f} s | {path:.0f} s ({' -> '.join(result['chain'])}) | {wall / path:.2f} "
              f"| {result['serial']:.0f} s | {result['serial'] / path:.1f} |" if path else
              f"| {wall:.0f} s | no update | | {result['serial']:.0f} s | |"]
    return lines


def endpoint_rows(endpoints: Mapping[str, Mapping[str, Any]]) -> List[str]:
    """Per Service watched during a site's upgrade: its seconds without a ready endpoint, its fewest."""
    lines = ["| Service | no ready endpoint | zero spans | fewest ready |", "|---|---|---|---|"]
    for api, seen in sorted(endpoints.items()):
        lines.append(f"| {api} | {seen['zero_seconds']:.1f} s | {seen['zero_spans']} | {seen['min_ready']} |")
    return lines


def strategy_rounds(runs: int) -> List[str]:
    """Each strategy `runs` times, taking turns going first."""
    return [s for turn in range(runs) for s in rotated(list(STRATEGIES), turn)]


def strategy_rows(runs: Sequence[Mapping[str, Any]]) -> List[str]:
    """Per strategy: runs, seconds without a ready endpoint (median, max), fewest ready, wall (median)."""
    lines = ["| update_strategy | runs | no ready endpoint, median (max) | zero spans | fewest ready "
             "| update wall, median | phases |", "|---|---|---|---|---|---|---|"]
    for strategy in STRATEGIES:
        mine = [r for r in runs if r["strategy"] == strategy]
        if not mine:
            continue
        zero = [r["zero_seconds"] for r in mine]
        phases = sorted({" -> ".join(r["phases"]) for r in mine})
        lines.append(f"| {strategy} | {len(mine)} | {statistics.median(zero):.1f} s ({max(zero):.1f} s) "
                     f"| {sum(r['zero_spans'] for r in mine)} | {min(r['min_ready'] for r in mine)} "
                     f"| {statistics.median(r['wall'] for r in mine):.0f} s | {'; '.join(phases)} |")
    return lines


def keystone_values(version: str, values: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """keystone's host var `values` at `version`: its images' tags, and ROLLING_VALUES."""
    tag = f"quay.io/airshipit/keystone:{version}-ubuntu_noble"
    out = json.loads(json.dumps(values or {}))
    out.setdefault("images", {}).setdefault("tags", {}).update(keystone_api=tag, keystone_db_sync=tag)
    out["pod"] = json.loads(json.dumps(ROLLING_VALUES["pod"]))
    return out


# -- the runs on the bed ----------------------------------------------------------------------

def _run_ok(site: Site, *args: str, playbook: str = "site.yml") -> None:
    run = site.run(*args, playbook=playbook)
    if run.returncode != 0:
        raise SystemExit(f"ansible-playbook {playbook} {' '.join(args)} failed in {site.namespace}:\n"
                         f"{(run.stdout + run.stderr)[-4000:]}")


def _remove(dyn: Any, site: Site, *args: str) -> None:
    removed = site.run(*args, playbook="site_remove.yml")
    if removed.returncode == 0:
        dyn.resources.get(api_version="v1", kind="Namespace").delete(name=site.namespace)
    else:
        print(f"the removal of {site.namespace} failed; the namespace is left", file=sys.stderr)


def site_upgrade(dyn: Any, kubeconfig: str, scratch: Path, strategy: str) -> Dict[str, Any]:
    namespace = f"ru-kit-{uuid.uuid4().hex[:6]}"
    site = Site(scratch / namespace, kubeconfig, dyn, namespace, example="compute-kit")
    # One cluster holds one nova (its cluster-wide ClusterRoles): a nova of another
    # namespace still Active stops the bench before it deploys anything.
    with openstack_helm.locked(".compute-kit.lock"):
        compute_kit.clear_leftovers(kubeconfig, namespace)
        return _site_upgrade(dyn, site, strategy)


def _site_upgrade(dyn: Any, site: Site, strategy: str) -> Dict[str, Any]:
    namespace = site.namespace
    started = time.monotonic()
    _run_ok(site)
    greenfield = time.monotonic() - started
    print(f"compute kit at {FROM_RELEASE} in {namespace}: {greenfield:.0f} s", file=sys.stderr, flush=True)
    extra = ["-e", f"openstack_release={TO_RELEASE}"] + (["-e", f"update_strategy={strategy}"] if strategy else [])
    with EndpointWatch(dyn, namespace, SITE_APIS) as watch:
        since, started = time.time(), time.monotonic()
        _run_ok(site, *extra)
        wall = time.monotonic() - started
    result = site_result([site.lifecycle(s) for s in site.services], since, wall)
    result["endpoints"] = {api: {"zero_seconds": round(watch.zero_seconds(api), 2), "zero_spans": len(watch.zero_spans(api)),
                                 "min_ready": watch.min_ready(api)} for api in SITE_APIS}
    result.update(namespace=namespace, greenfield=round(greenfield, 1), strategy=strategy or "the site's default")
    _remove(dyn, site, "-e", f"openstack_release={TO_RELEASE}")
    # nova's hooks made its ClusterRoles; no uninstall takes them: those of this
    # namespace, now going, are deleted, so the next nova of the cluster can be installed.
    try:
        compute_kit.clear_leftovers(site.kubeconfig, "")
    except RuntimeError as exc:
        print(f"nova's cluster-wide objects left as they are: {exc}", file=sys.stderr)
    return result


def small_site(dyn: Any, kubeconfig: str, scratch: Path) -> Site:
    """examples/site without placement, keystone with ROLLING_VALUES."""
    namespace = f"ru-ep-{uuid.uuid4().hex[:6]}"
    site = Site(scratch / namespace, kubeconfig, dyn, namespace, example="site")
    inventory = site.dir / "inventory.yml"
    data = yaml.safe_load(inventory.read_text())
    data["all"]["children"]["openstack_services"]["hosts"] = {s: None for s in SMALL_SITE}
    inventory.write_text(yaml.safe_dump(data))
    for extra in set(site.services) - set(SMALL_SITE):
        (site.dir / "host_vars" / f"{extra}.yml").unlink()
    site.services = list(SMALL_SITE)
    site.set_host_var("keystone", "values", keystone_values(site.host_vars("keystone")["version"],
                                                            site.host_vars("keystone").get("values")))
    return site


def one_update(site: Site, strategy: str) -> Dict[str, Any]:
    version = next_release(site.host_vars("keystone")["version"])
    site.set_host_var("keystone", "version", version)
    site.set_host_var("keystone", "values", keystone_values(version, site.host_vars("keystone").get("values")))
    before = {p["metadata"]["name"] for p in site.phases("keystone")}
    with EndpointWatch(site.dyn, site.namespace, [API]) as watch:
        if watch.ready_now(API) == 0:
            raise SystemExit(f"{API} in {site.namespace} has no ready endpoint before the update")
        started = time.monotonic()
        _run_ok(site, "--limit", "keystone", "-e", f"update_strategy={strategy}")
        wall = time.monotonic() - started
    record = site.lifecycle("keystone")["status"]
    if (record["flow"]["name"], record["currentVersion"]) != ("update", version):
        raise SystemExit(f"keystone did not update to {version}: {record['flow']}")
    phases = [p["spec"]["type"] for p in site.phases("keystone") if p["metadata"]["name"] not in before]
    spans = watch.zero_spans(API)
    return {"strategy": strategy, "version": version, "wall": round(wall, 1),
            "zero_seconds": round(watch.zero_seconds(API), 2), "zero_spans": len(spans),
            "min_ready": watch.min_ready(API), "breaks": watch.breaks, "phases": phases,
            "timeline": [(round(s.monotonic - started, 2), s.ready) for s in watch.timeline(API)]}


def endpoints_over_time(dyn: Any, kubeconfig: str, scratch: Path, runs: int) -> List[Dict[str, Any]]:
    site = small_site(dyn, kubeconfig, scratch)
    _run_ok(site)
    out = []
    try:
        for n, strategy in enumerate(strategy_rounds(runs), 1):
            r = one_update(site, strategy)
            out.append(r)
            print(f"update {n}, {strategy}, keystone -> {r['version']}: wall {r['wall']:.0f} s, no ready endpoint "
                  f"{r['zero_seconds']:.1f} s in {r['zero_spans']} span(s), fewest ready {r['min_ready']}, "
                  f"phases {' -> '.join(r['phases'])}", file=sys.stderr, flush=True)
    finally:
        _remove(dyn, site)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2, help="keystone updates per strategy")
    parser.add_argument("--only", default=",".join(ITEMS), help=f"some of {','.join(ITEMS)}")
    parser.add_argument("--site-strategy", default="", choices=("", *STRATEGIES),
                        help="-e update_strategy=... for the site's upgrade (default: none given)")
    parser.add_argument("--json", default="", help="write every run's numbers here")
    args = parser.parse_args()
    chosen = [i for i in args.only.split(",") if i]
    if set(chosen) - set(ITEMS):
        parser.error(f"choose among {', '.join(ITEMS)}")
    kubeconfig = bench_kubeconfig()
    dyn = dynamic.DynamicClient(config.new_client_from_config(config_file=kubeconfig))
    install_crds(dyn)
    results: Dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="lcm-release-bench-") as scratch:
        if "site" in chosen:
            results["site"] = site_upgrade(dyn, kubeconfig, Path(scratch), args.site_strategy)
        if "endpoints" in chosen:
            results["endpoints"] = endpoints_over_time(dyn, kubeconfig, Path(scratch), args.runs)
    day = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    if "site" in results:
        r = results["site"]
        print(f"\n### Site release upgrade: examples/compute-kit {FROM_RELEASE} -> {TO_RELEASE}, "
              f"update_strategy: {r['strategy']} ({day})\n")
        print("\n".join(site_table(r)))
        print("\n" + "\n".join(endpoint_rows(r["endpoints"])))
    if "endpoints" in results:
        print(f"\n### {API}'s ready endpoints during keystone's update, rolling against drain "
              f"({args.runs} run(s) each, alternating, {day})\n")
        given = ["pod.replicas.api: 2", "pod.lifecycle.upgrades.deployments.rolling_update.max_unavailable: 0"]
        print("keystone with " + ", ".join(given) + " (ROLLING_VALUES)\n")
        print("\n".join(strategy_rows(results["endpoints"])))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
