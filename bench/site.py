#!/usr/bin/env python3
"""A whole site on the bed: playbooks/site.yml against the critical path of
its dependency graph, and the apiserver reads its dependency waits cost.

The site is synthetic: --services services in --depth levels (level N
depends on 1 to 3 services of level N-1, drawn with --seed), each a release
of the example chart (examples/charts/keystone) whose install phase takes a
known time on the bed (simulate.duration: db_init 1 s, db_sync --db-sync,
bootstrap 1 s, in three waves one after the other) and whose test phase
--test seconds (rally_test). The chart names its objects keystone-*, so two
releases cannot share a namespace: each service gets its own,
<run>-<service>, and depends on the others as <namespace>/<service>. The
inventory is written to a temporary directory. Variants, each in namespaces
of its own, run in turn (the order rotated each round, --runs rounds):

  site      one `ansible-playbook -i <dir> playbooks/site.yml --forks N`
  slices    two at once, each given half the hosts (every other one, as AWX
            slices an inventory) in an inventory of its own, -e sliced=true;
            wall time until both have ended
  slow-0    as site, the jobs of level 0 --slow times longer: the reads per
            service must not grow with the time spent waiting

Measured per variant:
  wall               from the start of the ansible-playbook process(es) to the end.
  critical path      the longest chain of the graph, each service weighing its
                     flow time: its ServiceLifecycle's status.flow completedAt
                     minus the end of its wait for dependencies (the
                     DependenciesReady condition's lastTransitionTime, True);
                     whole seconds, as the apiserver stamps them.
  deliberate path    the same chain weighed by the job seconds configured.
  serial / path      the sum of every service's flow time over the measured
                     path: what one service after the other would take,
                     computed, not run.
  reads / service    apiserver_request_total (its /metrics) for resource
                     servicelifecycles, verbs LIST, WATCH and GET, after the run
                     minus before, over the number of services. The counter is
                     the whole apiserver's: other users of the bed add to it.
                     So the run's own are counted too, client-side: every Python
                     process of the run (ansible-playbook, each module) notes
                     each HTTP request it sends (a sitecustomize on PYTHONPATH
                     wraps urllib3's connection pool), classified the same way.

Usage: KUBECONFIG=... HELM_BIN=... bench/site.py [--services 30] [--depth 4] [--runs 1] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Sequence, Tuple

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from anchor import ROOT, kubeconfig as bench_kubeconfig, rotated  # noqa: E402
from greenfield import PLAYBOOK, VERSION, Bed  # noqa: E402
from phase_lag import GROUP, install_crds, metrics  # noqa: E402
from requests_log import hooked, noted as noted_requests  # noqa: E402

from kubernetes import config, dynamic  # noqa: E402

CHART = ROOT / "examples" / "charts" / "keystone"
READS = ("LIST", "WATCH", "GET")
VARIANTS = ("site", "slices", "slow-0")
Site = Dict[str, Dict[str, Any]]  # service -> {level, depends_on}


def request_verb(method: str, url: str) -> str:
    """LIST, WATCH or GET for a read of ServiceLifecycles (not of their status), else ''."""
    path, _, query = url.partition("?")
    parts = path.rstrip("/").split("/")
    if method != "GET" or "servicelifecycles" not in parts:
        return ""
    tail = parts[parts.index("servicelifecycles") + 1:]
    if "watch=true" in query.lower().split("&"):
        return "WATCH"
    return "LIST" if not tail else "GET" if len(tail) == 1 else ""


def level_sizes(services: int, depth: int) -> List[int]:
    """Services per level: as even as can be, the later levels taking the remainder."""
    if depth < 1 or services < depth:
        raise SystemExit(f"{services} services cannot fill {depth} levels")
    base, extra = divmod(services, depth)
    return [base + (1 if level >= depth - extra else 0) for level in range(depth)]


def make_site(services: int, depth: int, seed: int) -> Site:
    """s00, s01, ... by level; each service of level N > 0 depends on 1 to 3
    services of level N-1, so the graph has no cycle and exactly `depth` levels."""
    rng = random.Random(seed)
    site: Site = {}
    previous: List[str] = []
    for level, size in enumerate(level_sizes(services, depth)):
        names = [f"s{len(site) + i:02d}" for i in range(size)]
        for name in names:
            deps = sorted(rng.sample(previous, rng.randint(1, min(3, len(previous))))) if previous else []
            site[name] = {"level": level, "depends_on": deps}
        previous = names
    return site


def job_seconds(level: int, db_sync: int, test: int, slow: float = 1.0) -> Dict[str, int]:
    """The seconds each job of a service runs on the bed; level 0's times `slow`."""
    factor = slow if level == 0 else 1.0
    return {job: int(round(s * factor)) for job, s in
            {"db_init": 1, "db_sync": db_sync, "bootstrap": 1, "rally_test": test}.items()}


def host_vars(site: Site, run: str, seconds: Callable[[int], Dict[str, int]]) -> Dict[str, Dict[str, Any]]:
    """Each service's host vars: its namespace, its dependencies by namespace, its jobs' durations."""
    out = {}
    for name, svc in site.items():
        jobs = seconds(svc["level"])
        out[name] = {"openstack_namespace": f"{run}-{name}",
                     "depends_on": [f"{run}-{d}/{d}" for d in svc["depends_on"]],
                     "expected_duration": sum(jobs.values()),
                     "values": {"simulate": {"duration": {job: f"{s}s" for job, s in jobs.items()}}}}
    return out


def write_inventory(directory: Path, run: str, hosts: Mapping[str, Dict[str, Any]]) -> Path:
    """An inventory as examples/site lays it out, holding only `hosts`."""
    (directory / "host_vars").mkdir(parents=True)
    (directory / "group_vars").mkdir()
    (directory / "inventory.yml").write_text(yaml.safe_dump(
        {"all": {"children": {"openstack_services": {"hosts": {h: None for h in hosts}}}}}))
    (directory / "group_vars" / "openstack_services.yml").write_text(yaml.safe_dump({
        "ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}",
        "site_name": run, "chart": str(CHART), "version": VERSION, "phase_timeout": 600,
        "traffic_target": "keystone-api"}))  # the chart's Service, whatever the release
    for name, variables in hosts.items():
        (directory / "host_vars" / f"{name}.yml").write_text(yaml.safe_dump(variables))
    return directory


def critical_path(depends_on: Mapping[str, Sequence[str]], weight: Mapping[str, float]) -> Tuple[float, List[str]]:
    """The heaviest chain, as (its weight, its services from the first to run)."""
    finish: Dict[str, float] = {}
    via: Dict[str, str] = {}
    todo = sorted(depends_on)
    while todo:
        ready = [s for s in todo if all(d in finish for d in depends_on[s])]
        if not ready:
            raise ValueError(f"a cycle among {', '.join(todo)}")
        for s in ready:
            before = max(depends_on[s], key=lambda d: finish[d], default=None)
            finish[s] = weight[s] + (finish[before] if before else 0.0)
            if before:
                via[s] = before
        todo = [s for s in todo if s not in finish]
    if not finish:
        return 0.0, []
    last = max(sorted(finish), key=lambda s: finish[s])
    chain = [last]
    while chain[-1] in via:
        chain.append(via[chain[-1]])
    return finish[last], chain[::-1]


def stamp(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()


def flow_times(records: Sequence[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """Per service, from its ServiceLifecycle: when it arrived (the record made, as
    its wait began), when its wait for dependencies ended (ready: DependenciesReady
    True, or the flow's start if later), when the flow completed, its work (done - ready)."""
    out = {}
    for r in records:
        status = r.get("status") or {}
        flow = status.get("flow") or {}
        ready = [c["lastTransitionTime"] for c in status.get("conditions") or []
                 if c.get("type") == "DependenciesReady" and c.get("status") == "True"]
        started, done = stamp(flow["startedAt"]), stamp(flow["completedAt"])
        begun = max(started, stamp(ready[0])) if ready else started
        arrived = min(stamp(r["metadata"]["creationTimestamp"]), begun)
        out[r["spec"]["service"]] = {"arrived": arrived, "ready": begun, "done": done, "work": done - begun,
                                     "waited": begun - arrived, "state": flow.get("state", "")}
    return out


def lifecycle_reads(before: Mapping[Tuple[str, str], float], after: Mapping[Tuple[str, str], float]) -> Dict[str, int]:
    """The ServiceLifecycle reads between two readings of phase_lag.metrics, by verb."""
    return {v: int(after.get(("servicelifecycles", v), 0) - before.get(("servicelifecycles", v), 0)) for v in READS}


def levels(site: Site, times: Mapping[str, Dict[str, Any]], t0: float) -> List[Dict[str, float]]:
    """Per level: its first work start and last end (seconds from t0), median work,
    median wait, median wake (ready - the last dependency's completion)."""
    out = []
    for level in sorted({s["level"] for s in site.values()}):
        names = [n for n, s in site.items() if s["level"] == level]
        wake = [times[n]["ready"] - max(times[d]["done"] for d in site[n]["depends_on"])
                for n in names if site[n]["depends_on"]]
        out.append({"level": level, "services": len(names),
                    "first_start": min(times[n]["ready"] for n in names) - t0,
                    "last_end": max(times[n]["done"] for n in names) - t0,
                    "work": statistics.median(times[n]["work"] for n in names),
                    "waited": statistics.median(times[n]["waited"] for n in names),
                    "wake": statistics.median(wake) if wake else 0.0})
    return out


def one_run(variant: str, site: Site, args: argparse.Namespace, dyn: Any, bed: Bed, scratch: Path) -> Dict[str, Any]:
    run = f"stb-{uuid.uuid4().hex[:6]}"  # not site-*: the integration tests use that
    slow = args.slow if variant == "slow-0" else 1.0

    def seconds(level: int) -> Dict[str, int]:
        return job_seconds(level, args.db_sync, args.test, slow)
    hosts = host_vars(site, run, seconds)
    bed.made.extend(h["openstack_namespace"] for h in hosts.values())  # the flows create them
    names = list(hosts)
    slices = [names[i::2] for i in range(2)] if variant == "slices" else [names]
    extra = ["-e", "sliced=true"] if variant == "slices" else []
    dirs = [write_inventory(scratch / run / f"slice{i}", run, {h: hosts[h] for h in part})
            for i, part in enumerate(slices)]
    env = dict(os.environ, KUBECONFIG=args.kubeconfig, K8S_AUTH_KUBECONFIG=args.kubeconfig, ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0", ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build" / "collections"))
    noted = scratch / run / "requests.log"
    env.update(hooked(scratch, noted))
    before = metrics(dyn)
    t0, start = time.time(), time.monotonic()
    logs = [(d / "run.log").open("w") for d in dirs]
    procs = [subprocess.Popen([PLAYBOOK, "-i", str(d), str(ROOT / "playbooks" / "site.yml"),
                               "--forks", str(len(names)), *extra], env=env, stdout=log, stderr=subprocess.STDOUT)
             for d, log in zip(dirs, logs)]
    codes = [p.wait() for p in procs]
    wall = time.monotonic() - start
    for log in logs:
        log.close()
    reads = lifecycle_reads(before, metrics(dyn))
    own = {v: 0 for v in READS}
    for _when, method, url in noted_requests(noted):
        verb = request_verb(method, url)
        own[verb] = own.get(verb, 0) + 1
    own.pop("", None)
    for d, code in zip(dirs, codes):
        if code != 0:  # the scratch directory is kept, with the whole log
            raise SystemExit(f"{variant}: site.yml failed (rc {code}), log in {d / 'run.log'}:\n"
                             f"{(d / 'run.log').read_text()[-6000:]}")
    slcs = dyn.resources.get(api_version=f"{GROUP}/v1alpha1", kind="ServiceLifecycle")
    times = flow_times(slcs.get(label_selector=f"{GROUP}/site={run}").to_dict()["items"])
    deps = {n: s["depends_on"] for n, s in site.items()}
    path, chain = critical_path(deps, {n: t["work"] for n, t in times.items()})
    deliberate, deliberate_chain = critical_path(deps, {n: float(sum(seconds(s["level"]).values()))
                                                        for n, s in site.items()})
    return {"variant": variant, "run": run, "wall": wall, "path": path, "chain": chain,
            "deliberate": deliberate, "deliberate_chain": deliberate_chain,
            "serial": sum(t["work"] for t in times.values()), "reads": reads, "own_reads": own,
            "reads_per_service": sum(reads.values()) / len(names), "own_per_service": sum(own.values()) / len(names),
            "own_watches_per_service": own["WATCH"] / len(names), "levels": levels(site, times, t0),
            "services": {n: {k: (round(v - t0, 1) if k in ("arrived", "ready", "done") else v) for k, v in t.items()}
                         for n, t in times.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--services", type=int, default=30)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--db-sync", type=int, default=20, help="seconds of each db_sync job")
    parser.add_argument("--test", type=int, default=5, help="seconds of each test pod (rally_test)")
    parser.add_argument("--slow", type=float, default=3.0, help="how many times longer level 0 runs in slow-0")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--json", default="", help="write every run's numbers here")
    args = parser.parse_args()
    args.kubeconfig = bench_kubeconfig()
    variants = [v for v in args.variants.split(",") if v]
    api = config.new_client_from_config(config_file=args.kubeconfig)
    dyn = dynamic.DynamicClient(api)
    install_crds(dyn)
    site = make_site(args.services, args.depth, args.seed)
    bed = Bed(api)
    results: Dict[str, List[Dict[str, Any]]] = {v: [] for v in variants}
    scratch = Path(tempfile.mkdtemp(prefix="site-bench-"))
    try:
        for turn in range(args.runs):
            for variant in rotated(variants, turn):
                r = one_run(variant, site, args, dyn, bed, scratch)
                results[variant].append(r)
                print(f"round {turn + 1}/{args.runs}, {variant}: wall {r['wall']:.1f} s, path {r['path']:.0f} s "
                      f"({' -> '.join(r['chain'])}), deliberate {r['deliberate']:.0f} s, serial {r['serial']:.0f} s, "
                      f"reads {r['reads']}, own {r['own_reads']}", file=sys.stderr, flush=True)
                for lv in r["levels"]:
                    print("  level {level}: {services} services, {first_start:.0f}..{last_end:.0f} s, work {work:.0f} s, "
                          "waited {waited:.0f} s, woke {wake:.0f} s after its last dependency".format(**lv),
                          file=sys.stderr, flush=True)
                bed.delete_all(wait=900)
    finally:
        bed.delete_all(wait=900)
    shutil.rmtree(scratch)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    sizes = "/".join(str(n) for n in level_sizes(args.services, args.depth))
    print(f"### A whole site: {args.services} services in {args.depth} levels ({sizes}), db_sync {args.db_sync} s, "
          f"test {args.test} s ({args.runs} run(s) each, medians, {datetime.now(timezone.utc):%Y-%m-%d})\n")
    print("| variant | wall | critical path, measured | wall / path | deliberate path | wall / deliberate "
          "| serial / path (computed) | SLC reads per service, apiserver | own, client-side (WATCH of them) |")
    print("|---|---|---|---|---|---|---|---|---|")
    labels = {"site": f"one run, --forks {args.services}", "slices": "two slices, -e sliced=true",
              "slow-0": f"one run, level 0 {args.slow:g}x longer"}
    for variant in variants:
        def med(field: str) -> float:
            return statistics.median(r[field] for r in results[variant])
        wall, path, deliberate = med("wall"), med("path"), med("deliberate")
        print(f"| {labels[variant]} | {wall:.0f} s | {path:.0f} s | {wall / path:.2f} | {deliberate:.0f} s "
              f"| {wall / deliberate:.2f} | {med('serial') / path:.1f} | {med('reads_per_service'):.1f} "
              f"| {med('own_per_service'):.1f} ({med('own_watches_per_service'):.1f}) |")


if __name__ == "__main__":
    main()
