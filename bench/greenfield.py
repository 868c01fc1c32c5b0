#!/usr/bin/env python3
"""What the greenfield flow costs beyond the work it sets out to do, this
tree against another revision, in one run.

Each run is one `ansible-playbook playbooks/greenfield.yml` of the example
keystone chart (examples/charts/keystone, version 2025.1, the inventory of
examples/) into a namespace that does not exist yet, with the tree's own
playbook, chart and collection. With --anchor REV the revision runs too (a
scratch git worktree of it); the trees take turns, the order rotated each
round, so a machine that slows down slows both alike. Measured per run:

  wall        from the start of the ansible-playbook process to its exit.
  deliberate  the time the flow's own work takes by design, two parts:
              - jobs: the time during which at least one of the run's Jobs or
                bare run-to-completion Pods (the test pod) exists and has not
                finished, from the first watch event that shows it to the
                first that shows it Complete/Failed (Succeeded/Failed for a
                pod); the length of the union of those intervals, so Jobs that
                run side by side in one wave count once. Waves run one after
                the other, so this is the sum over the waves of first Job
                created to last one completed. Whatever the bed does inside a
                Job (scheduling, the fake kubelet's start and its 1 s run) is
                the Job's; the gaps between waves (the engine noticing that a
                wave is done and applying the next) are not.
              - helm: the wall time of a plain `helm upgrade --install` of
                the same chart with the values the install role gives it (its
                jobs switched off, the version label), into another fresh
                namespace, just before the run: what Helm itself costs, as the
                flow's helm_release task cannot be split into Helm and the
                rest from outside.
  overhead    wall - deliberate: Ansible's start-up, templating and task
              machinery, the module processes, the engine's rendering,
              applying, reading and status writes, and the waits between a
              thing being done and the flow going on.
  modules     module runs: task results (loop items counted one by one) that
              carry the `invocation` a module returns, i.e. an AnsiballZ
              module process ran; debug, set_fact, include_role and argument
              validation run in the controller and are not counted.
  tasks       tasks Ansible started (skipped ones included).

Per task (a callback plugin, enabled for the run only, stamps each task's
start): its span, from its start to the next task's start, and its overhead,
the span minus the part of the jobs intervals inside it (and, for the
helm_release task, minus the plain helm time). Start-up, before the first
task, and the time after the last are listed as tasks of their own.
The Jobs are watched from this process, so both ends of an interval carry
the same small watch delay; the Jobs' own timestamps (whole seconds) give
the same sum to within about a second per wave (`jobs_server` in the JSON,
beside each object's interval in seconds from the process start, `objects`).

Usage: KUBECONFIG=... HELM_BIN=... bench/greenfield.py [--anchor REV] [--runs 3] [--json FILE]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build" / "collections"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kubernetes import client, config, dynamic, watch  # noqa: E402

from anchor import kubeconfig as bench_kubeconfig, rotated, side_by_side_args, trees  # noqa: E402
from flow_time import CALLBACK, Interval, breakdown, covered, merged, task_spans, top  # noqa: E402
from phase_lag import install_crds  # noqa: E402

PLAYBOOK = str(Path(sys.executable).parent / "ansible-playbook")
VERSION = "2025.1"


class Observer:
    """Notes when each Job and bare run-to-completion Pod of a namespace is first
    seen, and first seen finished (time.time(), as the callback stamps tasks)."""

    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        self.namespace = namespace
        self.seen: Dict[str, float] = {}
        self.done: Dict[str, float] = {}
        self.stopping = threading.Event()
        batch, core = client.BatchV1Api(api), client.CoreV1Api(api)
        self.threads = [threading.Thread(target=self._follow, args=(batch.list_namespaced_job, "Job"), daemon=True),
                        threading.Thread(target=self._follow, args=(core.list_namespaced_pod, "Pod"), daemon=True)]
        self.ready = threading.Barrier(3)

    def __enter__(self) -> "Observer":
        for t in self.threads:
            t.start()
        try:
            self.ready.wait(timeout=60)
        except threading.BrokenBarrierError:
            raise SystemExit(f"could not list the Jobs and Pods of {self.namespace}") from None
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stopping.set()
        for t in self.threads:
            t.join(timeout=30)

    def intervals(self) -> List[Interval]:
        return [(self.seen[k], self.done[k]) for k in self.done if k in self.seen]

    def _note(self, kind: str, obj: Dict[str, Any]) -> None:
        meta, status = obj.get("metadata") or {}, obj.get("status") or {}
        if kind == "Pod":
            owners = {o.get("kind") for o in meta.get("ownerReferences") or []}
            if owners & {"Job", "ReplicaSet", "StatefulSet", "DaemonSet"} or \
                    (obj.get("spec") or {}).get("restartPolicy", "Always") == "Always":
                return
            finished = status.get("phase") in ("Succeeded", "Failed")
        else:
            finished = any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
                           for c in status.get("conditions") or [])
        key, now = f"{kind}/{meta.get('name')}", time.time()
        self.seen.setdefault(key, now)
        if finished:
            self.done.setdefault(key, now)

    def _follow(self, lister: Callable[..., Any], kind: str) -> None:
        first = True
        while not self.stopping.is_set():
            try:
                listed = lister(self.namespace, _preload_content=False)
                body = json.loads(listed.data)
                for item in body.get("items") or []:
                    self._note(kind, item)
                rv = body["metadata"]["resourceVersion"]
                if first:
                    first = False
                    self.ready.wait(timeout=60)  # both lists done before the playbook starts
                while not self.stopping.is_set():
                    for event in watch.Watch().stream(lister, self.namespace, resource_version=rv,
                                                      timeout_seconds=2, _preload_content=False):
                        obj = event["raw_object"]
                        rv = (obj.get("metadata") or {}).get("resourceVersion") or rv
                        if event["type"] in ("ADDED", "MODIFIED"):
                            self._note(kind, obj)
            except Exception:  # noqa: BLE001 - a watch that breaks (410 Gone, a reset) lists again
                time.sleep(0.2)


def server_intervals(api: client.ApiClient, namespace: str) -> List[Interval]:
    """The same intervals from the objects' own timestamps (whole seconds)."""
    def ts(value: Optional[str]) -> Optional[float]:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() if value else None
    out: List[Interval] = []
    for j in json.loads(client.BatchV1Api(api).list_namespaced_job(namespace, _preload_content=False).data)["items"]:
        status = j.get("status") or {}
        end = ts(status.get("completionTime")) or max(
            [ts(c.get("lastTransitionTime")) or 0.0 for c in status.get("conditions") or [] if c.get("type") == "Failed"],
            default=None)
        if end:
            out.append((ts(j["metadata"]["creationTimestamp"]), end))
    for p in json.loads(client.CoreV1Api(api).list_namespaced_pod(namespace, _preload_content=False).data)["items"]:
        owners = {o.get("kind") for o in p["metadata"].get("ownerReferences") or []}
        if owners & {"Job", "ReplicaSet", "StatefulSet", "DaemonSet"} or p["spec"].get("restartPolicy") == "Always":
            continue
        ends = [ts((c.get("state") or {}).get("terminated", {}).get("finishedAt"))
                for c in (p.get("status") or {}).get("containerStatuses") or []]
        if ends and all(ends):
            out.append((ts(p["metadata"]["creationTimestamp"]), max(ends)))
    return out


class Bed:
    """Namespaces of the bench, created and deleted through the API."""

    def __init__(self, api: client.ApiClient, prefix: str = "") -> None:
        self.core = client.CoreV1Api(api)
        self.made: List[str] = []
        self.prefix = prefix  # before every name made, e.g. "speed-"

    def name(self, prefix: str) -> str:
        name = f"{self.prefix}{prefix}-{uuid.uuid4().hex[:6]}"
        self.made.append(name)
        return name

    def create(self, name: str) -> None:
        self.core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})

    def delete_all(self, wait: float = 180) -> None:
        """Delete every namespace made so far and wait until they are gone, so a
        namespace being torn down does not load the bed under the next run."""
        for name in self.made:
            try:
                self.core.delete_namespace(name)
            except client.ApiException as exc:
                if exc.status != 404:
                    raise
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            left = {n.metadata.name for n in self.core.list_namespace().items} & set(self.made)
            if not left:
                break
            time.sleep(1)
        self.made = []


def install_values(chart: Path, version: str = VERSION) -> Dict[str, Any]:
    """The values the install role gives helm_release for `chart`: every
    manifests.job_* off (the phases run them), the version."""
    defaults = yaml.safe_load((chart / "values.yaml").read_text()) or {}
    jobs = sorted(k for k in (defaults.get("manifests") or {}) if str(k).startswith("job_"))
    return {"lifecycle": {"version": version}, "manifests": {k: False for k in jobs}}


def plain_helm(tree: Path, bed: Bed, helm: str, kubeconfig: str) -> float:
    """Seconds a plain `helm upgrade --install` of the chart takes, with the values
    the install role gives helm_release (every manifests.job_* off, the version)."""
    chart = tree / "examples" / "charts" / "keystone"
    values = install_values(chart)
    ns = bed.name("gfh")
    bed.create(ns)
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        yaml.safe_dump(values, f)
        f.flush()
        argv = [helm, "upgrade", "keystone", str(chart), "--install", "--namespace", ns, "--timeout", "300s",
                "--values", f.name, "--kubeconfig", kubeconfig]
        start = time.monotonic()
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        took = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"helm install failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return took


def one_run(tree: Path, bed: Bed, api: client.ApiClient, kubeconfig: str, helm: str, plugins: Path) -> Dict[str, Any]:
    helm_s = plain_helm(tree, bed, helm, kubeconfig)
    ns = bed.name("gf")
    variables = {"service": "keystone", "openstack_namespace": ns, "chart": str(tree / "examples" / "charts" / "keystone"),
                 "version": VERSION, "phase_timeout": 600}
    argv = [PLAYBOOK, "-i", str(tree / "examples" / "inventory.yml"), str(tree / "playbooks" / "greenfield.yml"),
            "-e", json.dumps(variables)]
    events_file = plugins / f"{ns}.jsonl"
    env = dict(os.environ, KUBECONFIG=kubeconfig, K8S_AUTH_KUBECONFIG=kubeconfig, ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0", ANSIBLE_COLLECTIONS_PATH=str(tree.parents[2]),
               ANSIBLE_CALLBACK_PLUGINS=str(plugins), ANSIBLE_CALLBACKS_ENABLED="greenfield_tasks",
               GREENFIELD_TASKS_FILE=str(events_file), HELM_BIN=helm)
    with Observer(api, ns) as seen:
        start_t, start = time.time(), time.monotonic()
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        wall = time.monotonic() - start
        end_t = start_t + wall
        time.sleep(1)  # the last events reach the watch
    if proc.returncode != 0:
        raise SystemExit(f"greenfield in {ns} failed (rc {proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}")
    union = merged(seen.intervals())
    jobs = covered(union, start_t, end_t)
    events = [json.loads(line) for line in events_file.read_text().splitlines() if line.strip()]
    tasks = breakdown(task_spans(events, start_t, end_t, ns), union, helm_s)
    server = merged(server_intervals(api, ns))
    return {"namespace": ns, "wall": wall, "jobs": jobs, "helm": helm_s, "deliberate": jobs + helm_s,
            "overhead": wall - jobs - helm_s, "jobs_server": covered(server, 0, float("inf")),
            "objects": {k: [round(seen.seen[k] - start_t, 2), round(seen.done[k] - start_t, 2)]
                        for k in seen.done if k in seen.seen},
            "modules": sum(t["modules"] for t in tasks), "tasks": len(tasks) - 2,
            "task_spans": [{k: t[k] for k in ("name", "action", "status", "modules", "span", "deliberate", "overhead")}
                           for t in tasks]}


def main() -> None:
    parser = side_by_side_args(__doc__, runs=3)
    args = parser.parse_args()
    kubeconfig = bench_kubeconfig()
    helm = os.environ.get("HELM_BIN") or os.environ["HELM3_BIN"]
    api = config.new_client_from_config(config_file=kubeconfig)
    install_crds(dynamic.DynamicClient(api))
    bed = Bed(api)
    with tempfile.TemporaryDirectory(prefix="greenfield-bench-") as scratch, trees(args.anchor) as found:
        plugins = Path(scratch)
        (plugins / "greenfield_tasks.py").write_text(CALLBACK)
        names = list(found)
        results: Dict[str, List[Dict[str, Any]]] = {n: [] for n in names}
        try:
            for turn in range(args.runs):
                for name in rotated(names, turn):
                    tree = found[name] / "ansible_collections" / "lcm" / "openstack"
                    run = one_run(tree, bed, api, kubeconfig, helm, plugins)
                    results[name].append(run)
                    print(f"round {turn + 1}/{args.runs}, {name}: wall {run['wall']:.1f} s, jobs {run['jobs']:.1f} s "
                          f"(server {run['jobs_server']:.0f} s), helm {run['helm']:.1f} s, "
                          f"{run['modules']} modules, {run['tasks']} tasks", file=sys.stderr, flush=True)
                    bed.delete_all()
        finally:
            bed.delete_all()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    print(f"### Greenfield flow, keystone example chart ({args.runs} run(s) each, interleaved, medians, "
          f"{datetime.now(timezone.utc):%Y-%m-%d})\n")
    print("| tree | wall | deliberate (jobs + helm) | overhead | module runs | tasks |")
    print("|---|---|---|---|---|---|")
    for name in names:
        def med(field: str) -> float:
            return statistics.median(r[field] for r in results[name])
        print(f"| {name} | {med('wall'):.1f} s | {med('deliberate'):.1f} s ({med('jobs'):.1f} + {med('helm'):.1f}) "
              f"| {med('overhead'):.1f} s | {med('modules'):.0f} | {med('tasks'):.0f} |")
    for key, title in (("name", "task"), ("action", "action")):
        print(f"\n#### Where the overhead goes: the 5 {title}s with the most (medians)\n")
        print(f"| tree | {title} | span | overhead | module runs |")
        print("|---|---|---|---|---|")
        for name in names:
            for label, action, span, overhead, modules in top(results[name], key):
                shown = label if key == "action" or not action else f"{label} ({action})"
                print(f"| {name} | {shown} | {span:.1f} s | {overhead:.1f} s | {modules:.0f} |")


if __name__ == "__main__":
    main()
