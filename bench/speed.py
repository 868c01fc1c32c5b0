#!/usr/bin/env python3
"""Issue #13's speed measurements in one run, held against the issue's targets.

Every item prepares its state once, then the items take turns for --runs
rounds, the order of the items rotated each round, and within an item its
cases rotated too, so a machine that slows down slows every case alike.
Measured on the same bed, in the same run:

  lag         A one-Job phase (lcm.openstack.phase) beside kubernetes.core.k8s
              wait: true with wait_sleep 5 and 1, each a fresh `ansible`
              process. The Job runs 2 s plus 0, 1/4, 1/2, 3/4 (--quick: 0, 1/2)
              of wait_sleep, which moves its completion across the poller's
              whole cycle; where it fell is measured too (the time since the
              module's last GET of the Job before the completion, noted
              client-side). Per run: end-to-end (process start to exit) minus
              the Job's own time (a watch in this process: its first event to
              the first showing it Complete), and the reaction lag (exit
              minus that Complete).
  noop        bench/noop.py's calls that change nothing, with the number of
              helm processes each ran (binary_path is a wrapper that logs them).
  helm        Install, upgrade (another version value) and no-op of the
              example chart (examples/charts/keystone, the install role's
              values, wait off) with lcm.openstack.helm_release,
              kubernetes.core.helm and a plain `helm upgrade --install`,
              Helm 3 and Helm 4, each in a namespace of its own: wall time
              and helm processes. Beside them, the same plain helm run as an
              ansible.builtin.command task: the floor of any Ansible module.
  scale       bench/phase_scale.py's one phase of 10, 50, 200 Jobs
              (--quick: 10, 50): requests, status writes and their bytes,
              CPU, peak RSS of the engine's process.
  greenfield  bench/greenfield.py's flow: wall time against its deliberate work.
  wait        What waiting costs the apiserver: a one-Job phase whose Job
              runs 60 s (--quick: 20 s), lcm.openstack.phase beside
              kubernetes.core.k8s with wait_sleep 5 and 1; the requests the
              run's processes sent while the Job ran (client-side), and the
              apiserver's apiserver_request_total delta over the run for the
              resources a phase touches (the whole bed's: others add to it).
  update      One UpdateStatus refresh (the second of two in a fresh process,
              so the first has written what changed) with 1, 5 and 20
              (--quick: 1, 5) namespaces of this run each holding a
              ServiceLifecycle: the requests it sent. The refresh reads the
              whole cluster, so the bed's other services count too; the
              number of namespaces it saw is reported beside.
  site-noop   bench/site_noop.py's site at rest: a synthetic site of 6 and 12
              services (--quick: 6) deployed once by playbooks/site.yml, then
              site.yml again, a no-op, the plan reading each release for drift
              (the default) against -e site_read_releases=false (the versions
              alone): wall time of the ansible-playbook process. An anchor runs
              its own site.yml as it is, on the same sites.

With --anchor REV, the lcm.openstack cases run for REV too (a scratch git
worktree of it). Writes build/bench/speed-<date>.json (every run's numbers)
and build/bench/speed-<date>.md (the table, also printed).

Usage: KUBECONFIG=... HELM3_BIN=... HELM4_BIN=... bench/speed.py [--anchor REV] [--runs 3] [--quick] [--only lag,noop]
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build" / "collections"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kubernetes import config, dynamic  # noqa: E402

from anchor import THIS_TREE, kubeconfig as bench_kubeconfig, rotated, side_by_side_args, trees  # noqa: E402
from flow_time import CALLBACK  # noqa: E402
from greenfield import VERSION, Bed, install_values, one_run as greenfield_run  # noqa: E402
from noop import COMMAND, ansible, cases as noop_cases, changes_expected, timed  # noqa: E402
from phase_lag import Observer, fresh_namespace, install_crds, job, metrics  # noqa: E402
from phase_scale import COUNTING, run_one as scale_run, worker  # noqa: E402
from requests_log import hooked, noted  # noqa: E402
from site_noop import SIZES as SITE_SIZES, TARGET as SITE_TARGET, VARIANTS as SITE_VARIANTS, Deployed, judge  # noqa: E402
from speed_report import (  # noqa: E402
    FRACTIONS, QUICK_FRACTIONS, Row, at_most, by_kind, constant, cycle_position, growth, median, ratio, seconds, summary,
    sweep, table,
)

ITEMS = ("lag", "noop", "helm", "scale", "greenfield", "wait", "update", "site-noop")
CHART = ROOT / "examples" / "charts" / "keystone"
UPGRADE_VERSION = "2025.2"
# What a waiting phase touches, as apiserver_request_total names the resources.
WAIT_RESOURCES = ("jobs", "jobs/status", "pods", "pods/log", "events", "phases", "phases/status",
                  "servicelifecycles", "servicelifecycles/status", "updatestatuses", "updatestatuses/status")

# One UpdateStatus refresh after another, the second counted (COUNTING's stats).
UPDATE_WORKER = COUNTING + r'''
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.keeper import StatusKeeper

StatusKeeper(dyn).run()
stats.update(requests=0, by={})
status = StatusKeeper(dyn).run()["status"]
stats["namespaces"] = len({s.get("namespace") for s in status.get("services") or []})
print(json.dumps(stats))
'''


class Bench:
    """What every item shares: the cluster, the trees, the helm binaries and
    wrappers that count their processes, scratch space and the namespaces."""

    def __init__(self, args: Any, found: Dict[str, Path], scratch: Path) -> None:
        self.args, self.found, self.scratch = args, found, scratch
        self.kubeconfig = bench_kubeconfig()
        self.api = config.new_client_from_config(config_file=self.kubeconfig)
        self.dyn = dynamic.DynamicClient(self.api)
        self.beds: Dict[str, Bed] = {}
        self.current = ""  # the item at work
        self.helm = {"3": os.environ["HELM3_BIN"], "4": os.environ["HELM4_BIN"]}
        self.wrappers = {major: self._wrapper(major, real) for major, real in self.helm.items()}
        self.anchors = [t for t in found if t != THIS_TREE]

    def _wrapper(self, major: str, real: str) -> str:
        """A helm that notes each of its runs (argv, a line) and goes on as the real one."""
        path = self.scratch / f"helm{major}"
        path.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> {shlex.quote(str(self.helm_log(major)))}\n"
                        f"exec {shlex.quote(real)} \"$@\"\n")
        path.chmod(0o755)
        return str(path)

    @property
    def bed(self) -> Bed:
        """The namespaces of the item at work: a round deletes its own, never
        the state another item prepared."""
        if self.current not in self.beds:
            self.beds[self.current] = Bed(self.api, prefix=f"{self.args.prefix}-")
        return self.beds[self.current]

    def delete_all(self) -> None:
        for bed in self.beds.values():
            bed.delete_all(wait=300)

    def helm_log(self, major: str) -> Path:
        return self.scratch / f"helm{major}.argv"

    def helm_runs(self) -> Dict[str, List[str]]:
        """The helm processes started through the wrappers so far, by major: their
        subcommands (the first word of each argv)."""
        return {m: [(line.split() or [""])[0] for line in self.helm_log(m).read_text().splitlines()]
                if self.helm_log(m).exists() else [] for m in self.helm}

    def collection(self, tree: str) -> Path:
        return self.found[tree] / "ansible_collections" / "lcm" / "openstack"

    def counted(self, case: Tuple[List[str], Dict[str, str]], changes: Optional[bool]) -> Dict[str, Any]:
        """noop.timed, with the helm processes the run started."""
        before = {m: len(runs) for m, runs in self.helm_runs().items()}
        out: Dict[str, Any] = dict(timed(case, changes))
        out["helm_commands"] = [c for m, runs in self.helm_runs().items() for c in runs[before[m]:]]
        out["helm"] = len(out["helm_commands"])
        return out

    def note(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)


def tree_label(tree: str) -> str:
    return "" if tree == THIS_TREE else f" ({tree})"


def per_tree(b: Bench, value: Any) -> Tuple[str, Dict[str, str]]:
    """(this tree's cell, {anchor: its cell}) from value(tree) -> str."""
    return value(THIS_TREE), {a: value(a) for a in b.anchors}


# -- waiting on one Job: the lag sweep and the 60-second wait ---------------------------------

def waiter_case(b: Bench, tree: str, waiter: str, wait_sleep: int, ns: str, name: str, duration_ms: int) -> Any:
    """An `ansible` run that creates Job `name` (running duration_ms) and waits for it."""
    body = job(name, f"{duration_ms}ms")
    if waiter == "phase":
        return ansible("lcm.openstack.phase", {
            "type": "install", "service": name, "namespace": ns,
            "source": {"manifests": [body], "selection": "manifests"}}, b.found[tree])
    body["metadata"]["namespace"] = ns
    return ansible("kubernetes.core.k8s", {
        "definition": body, "wait": True, "wait_timeout": 600, "wait_sleep": wait_sleep,
        "wait_condition": {"type": "Complete", "status": "True"}}, b.found[THIS_TREE])


def wait_once(b: Bench, observer: Observer, case: Dict[str, Any], server: bool = False) -> Dict[str, Any]:
    """Run one waiter; its times against the Job's, and its requests."""
    name, ns = case["job"], observer.namespace
    log = b.scratch / "requests" / f"{ns}-{name}.log"
    log.parent.mkdir(exist_ok=True)
    argv_env = waiter_case(b, case["tree"], case["waiter"], case["wait_sleep"], ns, name, case["duration_ms"])
    before = metrics(b.dyn, None) if server else {}
    run = timed(argv_env, changes=True, extra_env=hooked(b.scratch, log))
    after = metrics(b.dyn, None) if server else {}
    deadline = time.monotonic() + 10
    while name not in observer.seen and time.monotonic() < deadline:  # the watch event may trail the waiter's read
        time.sleep(0.05)
    created, done = observer.created[name], observer.seen[name]
    sent = noted(log)
    polls = [t for t, method, url in sent if method == "GET" and url.split("?")[0].endswith(f"/jobs/{name}")]
    out = dict(case, namespace=ns, e2e=run["wall"], cpu=run["cpu"], job_time=done - created,
               e2e_minus_job=run["wall"] - (done - created), lag=run["end"] - done, requests=len(sent),
               requests_waiting=sum(1 for t, method, url in sent if created <= t <= done),
               waiting_by=by_kind(sent, created, done), run_by=by_kind(sent, run["start"], run["end"]),
               position=cycle_position(polls, done, case["wait_sleep"]) if case["waiter"] == "k8s" else None)
    if server:
        out["server_requests"] = int(sum(after.get(k, 0) - before.get(k, 0) for k in after if k[0] in WAIT_RESOURCES))
    return out


def waiting_round(b: Bench, prefix: str, todo: Sequence[Dict[str, Any]], turn: int, server: bool) -> List[Dict[str, Any]]:
    ns = b.bed.name(prefix)
    fresh_namespace(b.dyn, ns)
    observer = Observer(b.dyn, ns)
    observer.start()
    observer.ready.wait()
    out = []
    try:
        for case in rotated(list(todo), turn):
            out.append(wait_once(b, observer, dict(case, job=f"{case['key']}-{turn}"), server))
            r = out[-1]
            b.note(f"  {r['key']}: end-to-end {r['e2e']:.2f} s, Job {r['job_time']:.2f} s, lag {r['lag']:.2f} s, "
                   f"{r['requests']} requests ({r['requests_waiting']} while the Job ran)")
    finally:
        observer.stop()
        b.bed.delete_all()
    return out


def waiters(b: Bench, durations: Dict[int, Dict[float, int]]) -> List[Dict[str, Any]]:
    """The phase of each tree (at wait_sleep 1's run times: it does not poll) and
    kubernetes.core.k8s at wait_sleep 5 and 1, for each fraction of the cycle."""
    out = []
    for fraction in durations[1]:
        tag = f"{int(fraction * 100):02d}"
        for i, tree in enumerate(b.found):
            out.append({"key": f"phase{i}-{tag}", "tree": tree, "waiter": "phase", "wait_sleep": 1,
                        "fraction": fraction, "duration_ms": durations[1][fraction]})
        for ws in (5, 1):
            out.append({"key": f"k8s{ws}-{tag}", "tree": THIS_TREE, "waiter": "k8s", "wait_sleep": ws,
                        "fraction": fraction, "duration_ms": durations[ws][fraction]})
    return out


class Lag:
    name = "lag"

    def __init__(self, b: Bench) -> None:
        self.b = b
        fractions = QUICK_FRACTIONS if b.args.quick else FRACTIONS
        self.durations = {ws: sweep(ws, fractions, base=2.0) for ws in (1, 5)}
        self.todo = waiters(b, self.durations)
        self.runs: List[Dict[str, Any]] = []

    def prepare(self) -> None:
        pass

    def round(self, turn: int) -> None:
        self.runs += waiting_round(self.b, "lag", self.todo, turn, server=False)

    def data(self) -> Any:
        return {"durations_ms": {str(ws): {str(f): ms for f, ms in d.items()} for ws, d in self.durations.items()},
                "runs": self.runs}

    def med(self, field: str, waiter: str, fraction: float, tree: str = THIS_TREE, ws: int = 1) -> Optional[float]:
        return median(r[field] for r in self.runs if r["waiter"] == waiter and r["fraction"] == fraction
                      and r["tree"] == tree and (waiter == "phase" or r["wait_sleep"] == ws))

    def rows(self) -> List[Row]:
        out = []
        for fraction in self.durations[1]:
            for field, what in (("e2e_minus_job", "end-to-end minus the Job's time"), ("lag", "reaction lag")):
                for ws in (1, 5):
                    base = self.med(field, "k8s", fraction, ws=ws)
                    pos = self.med("position", "k8s", fraction, ws=ws)
                    mine, anchors = per_tree(self.b, lambda t, f=field, fr=fraction: seconds(self.med(f, "phase", fr, t)))
                    value = self.med(field, "phase", fraction)
                    judged = field == "e2e_minus_job" and ws == 1
                    out.append(Row(
                        item="lag sweep", anchors=anchors, lcm=mine,
                        case=(f"{what}, completion at {fraction:g} of k8s wait_sleep {ws}'s cycle "
                              f"(measured {'-' if pos is None else f'{pos:.2f}'})"),
                        baseline=f"kubernetes.core.k8s wait_sleep {ws}: {seconds(base)}",
                        ratio=ratio(value, base), target="at or below (<= 1.00)" if judged else "",
                        met=at_most(ratio(value, base), 1.0) if judged else None))
        return out


class Wait:
    name = "wait"

    def __init__(self, b: Bench) -> None:
        self.b = b
        self.seconds = 20 if b.args.quick else 60
        self.todo = [dict(c, key=c["key"].rsplit("-", 1)[0]) for c in waiters(b, {
            ws: {0.0: self.seconds * 1000} for ws in (1, 5)})]
        self.runs: List[Dict[str, Any]] = []

    def prepare(self) -> None:
        pass

    def round(self, turn: int) -> None:
        self.runs += waiting_round(self.b, "wait", self.todo, turn, server=True)

    def data(self) -> Any:
        return {"job_seconds": self.seconds, "runs": self.runs}

    def med(self, field: str, waiter: str, tree: str = THIS_TREE, ws: int = 1) -> Optional[float]:
        return median(r[field] for r in self.runs if r["waiter"] == waiter and r["tree"] == tree
                      and (waiter == "phase" or r["wait_sleep"] == ws))

    def rows(self) -> List[Row]:
        out = []
        for field, what in (("requests_waiting", "requests sent while the Job ran (client-side)"),
                            ("requests", "requests of the whole run (client-side)"),
                            ("server_requests", "apiserver_request_total delta over the run, jobs/pods/events/"
                                                "lifecycle resources (whole bed)")):
            for ws in (1, 5):
                base = self.med(field, "k8s", ws=ws)
                mine, anchors = per_tree(self.b, lambda t, f=field: _count(self.med(f, "phase", t)))
                out.append(Row(item=f"waiting {self.seconds} s", case=f"{what}, vs kubernetes.core.k8s wait_sleep {ws}",
                               lcm=mine, anchors=anchors, baseline=f"wait_sleep {ws}: {_count(base)}",
                               ratio=ratio(self.med(field, "phase"), base)))
        return out


def _count(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.0f}"


# -- calls that change nothing -------------------------------------------------------------

class Noop:
    name = "noop"

    def __init__(self, b: Bench) -> None:
        self.b = b
        self.todo: Dict[str, Any] = {}
        self.runs: Dict[str, List[Dict[str, Any]]] = {}

    def prepare(self) -> None:
        ns = self.b.bed.name("noop")
        self.b.bed.create(ns)
        self.todo = noop_cases(ns, self.b.found, self.b.wrappers, plain=self.b.helm)
        for case in self.todo.values():  # the state each no-op finds
            timed(case, changes=None)
        self.runs = {n: [] for n in self.todo}

    def round(self, turn: int) -> None:
        for name in rotated(list(self.todo), turn):
            self.runs[name].append(self.b.counted(self.todo[name], changes=changes_expected(name)))
        self.b.note("  " + ", ".join(f"{n} {r[-1]['wall']:.2f} s" for n, r in self.runs.items()))

    def data(self) -> Any:
        return self.runs

    def med(self, name: str, field: str = "wall") -> Optional[float]:
        return median(r[field] for r in self.runs.get(name, []))

    def cell(self, name: str) -> str:
        wall = self.med(name)
        if wall is None:
            return "-"
        helm = self.med(name, "helm")
        return f"{wall:.2f} s" + (f", {helm:.0f} helm" if helm else "")

    def rows(self) -> List[Row]:
        out = []
        for mine, base, limit in (("phase", "kubernetes.core.k8s", 1.2),
                                  ("helm_release, Helm 3", "kubernetes.core.helm, Helm 3", 1.2),
                                  ("helm_release, Helm 4", "helm status, Helm 4", 1.5),
                                  ("helm_release, Helm 4", f"{COMMAND} helm status, Helm 4", None),
                                  ("helm_release, Helm 3", "helm status, Helm 3", None),
                                  ("helm_release, Helm 3", f"{COMMAND} helm status, Helm 3", None)):
            value = ratio(self.med(mine), self.med(base))
            out.append(Row(item="no-op call", case=f"lcm.openstack.{mine} vs {base}",
                           lcm=self.cell(mine), anchors={a: self.cell(f"{mine}{tree_label(a)}") for a in self.b.anchors},
                           baseline=f"{base}: {self.cell(base)}", ratio=value,
                           target="" if limit is None else f"<= {limit:.2f}",
                           met=None if limit is None else at_most(value, limit)))
        return out


# -- Helm: install, upgrade, no-op -----------------------------------------------------------

HELM_TASK = f"{COMMAND} helm upgrade --install"


class Helm:
    name = "helm"
    steps = ("install", "upgrade", "no-op")

    def __init__(self, b: Bench) -> None:
        self.b = b
        self.tools = [(f"helm_release{tree_label(t)}", t) for t in b.found] + [
            ("kubernetes.core.helm", ""), ("helm upgrade --install", ""), (HELM_TASK, "")]
        self.todo = [(tool, tree, major) for major in b.helm for tool, tree in self.tools]
        self.runs: List[Dict[str, Any]] = []
        self.values: Dict[str, Path] = {}
        self.unsupported: Dict[Tuple[str, str], str] = {}  # (tool, major): why it cannot run

    def prepare(self) -> None:
        for step in ("install", "upgrade"):
            path = self.b.scratch / f"values-{step}.yaml"
            path.write_text(yaml.safe_dump(self.values_for(step)))
            self.values[step] = path
        # kubernetes.core.helm may not drive every Helm major: an install and an upgrade to find out.
        for major in self.b.helm:
            ns = self.b.bed.name("helm")
            self.b.bed.create(ns)
            for step in ("install", "upgrade"):
                argv, env = self.case("kubernetes.core.helm", "", major, ns, step)
                proc = subprocess.run(argv, env=dict(os.environ, **env), capture_output=True, text=True, check=False)
                if proc.returncode != 0:
                    break
            if proc.returncode != 0:
                found = re.search(r"Error: ([^\\\n\"]+)", proc.stdout + proc.stderr)
                why = f"helm said \"{found.group(1).strip()}\"" if found else f"exit {proc.returncode}"
                self.unsupported[("kubernetes.core.helm", major)] = why
                self.todo.remove(("kubernetes.core.helm", "", major))
                self.b.note(f"  kubernetes.core.helm cannot drive Helm {major}: {why}")
        self.b.bed.delete_all()

    @staticmethod
    def values_for(step: str) -> Dict[str, Any]:
        return install_values(CHART, VERSION if step == "install" else UPGRADE_VERSION)

    def case(self, tool: str, tree: str, major: str, ns: str, step: str) -> Any:
        values = self.values_for(step)
        if tool.startswith("helm_release"):
            return ansible("lcm.openstack.helm_release", {
                "name": "keystone", "namespace": ns, "chart": str(CHART), "values": values,
                "binary_path": self.b.wrappers[major], "wait": False}, self.b.found[tree])
        if tool == "kubernetes.core.helm":
            return ansible("kubernetes.core.helm", {
                "name": "keystone", "release_namespace": ns, "chart_ref": str(CHART), "release_values": values,
                "binary_path": self.b.wrappers[major]}, self.b.found[THIS_TREE])
        argv = [self.b.helm[major], "upgrade", "keystone", str(CHART), "--install", "--namespace", ns,
                "--values", str(self.values["install" if step == "install" else "upgrade"]),
                "--kubeconfig", self.b.kubeconfig]
        if tool == HELM_TASK:  # the floor of any module: the same helm run as an Ansible task
            return ansible(COMMAND, {"argv": argv}, self.b.found[THIS_TREE])
        return (argv, {})

    def round(self, turn: int) -> None:
        spaces = {}
        for todo in self.todo:
            spaces[todo] = self.b.bed.name("helm")
            self.b.bed.create(spaces[todo])
        try:
            for i, step in enumerate(self.steps):
                for tool, tree, major in rotated(self.todo, turn + i):
                    plain = tool in ("helm upgrade --install", HELM_TASK)
                    run = self.b.counted(self.case(tool, tree, major, spaces[(tool, tree, major)], step),
                                         changes=None if plain else step != "no-op")
                    if plain:
                        run["helm"] = 1
                    self.runs.append(dict(run, tool=tool, major=major, step=step))
                self.b.note(f"  {step}: " + ", ".join(f"{r['tool']} Helm {r['major']} {r['wall']:.2f} s ({r['helm']})"
                                                      for r in self.runs[-len(self.todo):]))
        finally:
            self.b.bed.delete_all()

    def data(self) -> Any:
        return self.runs

    def med(self, tool: str, major: str, step: str, field: str = "wall") -> Optional[float]:
        return median(r[field] for r in self.runs if (r["tool"], r["major"], r["step"]) == (tool, major, step))

    def cell(self, tool: str, major: str, step: str) -> str:
        wall = self.med(tool, major, step)
        return "-" if wall is None else f"{wall:.2f} s, {self.med(tool, major, step, 'helm'):.0f} helm"

    def rows(self) -> List[Row]:
        out = []
        for major in self.b.helm:
            for step in self.steps:
                mine = self.med("helm_release", major, step)
                anchors = {a: self.cell(f"helm_release{tree_label(a)}", major, step) for a in self.b.anchors}
                for base, judged in (("helm upgrade --install", step != "no-op"), ("kubernetes.core.helm", False),
                                     (HELM_TASK, False)):
                    value = ratio(mine, self.med(base, major, step))
                    cell = self.cell(base, major, step)
                    if (base, major) in self.unsupported:
                        cell = f"does not run: {self.unsupported[(base, major)]}"
                    label = base if not base.endswith("helm upgrade --install") or step != "no-op" else \
                        f"{base} (a new revision: plain helm has no no-op)"
                    out.append(Row(item=f"Helm {major}", case=f"{step}: helm_release vs {label}",
                                   lcm=self.cell("helm_release", major, step), anchors=anchors,
                                   baseline=f"{base}: {cell}", ratio=value,
                                   target="<= 1.20" if judged else "", met=at_most(value, 1.2) if judged else None))
        return out


# -- one phase of many Jobs ----------------------------------------------------------------

class Scale:
    name = "scale"

    def __init__(self, b: Bench) -> None:
        self.b = b
        self.sizes = (10, 50) if b.args.quick else (10, 50, 200)
        self.runs: Dict[str, Dict[int, List[Dict[str, Any]]]] = {t: {n: [] for n in self.sizes} for t in b.found}

    def prepare(self) -> None:
        pass

    def round(self, turn: int) -> None:
        for i, n in enumerate(self.sizes):
            for tree in rotated(list(self.b.found), turn + i):
                self.runs[tree][n].append(scale_run(self.b.found[tree], n, self.b.kubeconfig, f"{self.b.args.prefix}-scale"))
                r = self.runs[tree][n][-1]
                self.b.note(f"  {tree}, {n} Jobs: {r['requests']} requests, {r['status_writes']} status writes, "
                            f"CPU {r['cpu']:.2f} s")

    def data(self) -> Any:
        return self.runs

    def med(self, tree: str, n: int, field: str) -> Optional[float]:
        if field == "rest_bytes":  # the mean write but the largest (the first: the whole object list)
            return median((r["status_bytes"] - r["largest_write"]) / max(1, r["status_writes"] - 1)
                          for r in self.runs[tree][n])
        return median(r[field] for r in self.runs[tree][n])

    def cell(self, tree: str, n: int) -> str:
        if not self.runs[tree][n]:
            return "-"
        return (f"{self.med(tree, n, 'requests'):.0f} requests, {self.med(tree, n, 'status_writes'):.0f} status writes "
                f"({self.med(tree, n, 'status_bytes') / 1024:.1f} KiB, largest {self.med(tree, n, 'largest_write') / 1024:.1f}"
                f" KiB), CPU {self.med(tree, n, 'cpu'):.2f} s, RSS {self.med(tree, n, 'rss_mib'):.0f} MiB")

    def series(self, tree: str, field: str) -> Dict[int, float]:
        return {n: self.med(tree, n, field) for n in self.sizes if self.runs[tree][n]}

    def rows(self) -> List[Row]:
        out = [Row(item="phase of N Jobs", case=f"{n} Jobs, engine in one process", lcm=self.cell(THIS_TREE, n),
                   anchors={a: self.cell(a, n) for a in self.b.anchors}) for n in self.sizes]
        lo, hi = self.sizes[0], self.sizes[-1]
        sizes = {n: float(n) for n in self.sizes}
        ones = {n: 1.0 for n in self.sizes}
        for field, per, what, unit in (
                ("status_writes", sizes, f"status writes per Job, {lo} to {hi} Jobs (O(N) in count)", "writes"),
                ("rest_bytes", ones, f"bytes per status write but the largest, {lo} to {hi} Jobs (O(1) in size)", "B")):
            def cell(tree: str, f: str = field, u: str = unit) -> str:
                s = self.series(tree, f)
                return " / ".join(f"{v:.0f}" for v in s.values()) + f" {u}" if s else "-"
            grown = growth(self.series(THIS_TREE, field), per)
            out.append(Row(item="phase of N Jobs", case=what, lcm=cell(THIS_TREE),
                           anchors={a: cell(a) for a in self.b.anchors}, ratio=grown,
                           baseline="growth from the smallest N to the largest", target="<= 1.50",
                           met=at_most(grown, 1.5)))
        cpu = self.med(THIS_TREE, hi, "cpu") if self.runs[THIS_TREE][hi] else None
        out.append(Row(item="phase of N Jobs", case=f"engine CPU at {hi} Jobs", lcm=seconds(cpu),
                       anchors={a: seconds(self.med(a, hi, "cpu") if self.runs[a][hi] else None) for a in self.b.anchors},
                       target="<= 3 s at 200 Jobs" + ("" if hi == 200 else f" (not judged at {hi})"),
                       met=at_most(cpu, 3.0) if hi == 200 else None))
        return out


# -- greenfield ------------------------------------------------------------------------------

class Greenfield:
    name = "greenfield"

    def __init__(self, b: Bench) -> None:
        self.b = b
        self.plugins = b.scratch / "callbacks"
        self.runs: Dict[str, List[Dict[str, Any]]] = {t: [] for t in b.found}

    def prepare(self) -> None:
        self.plugins.mkdir(exist_ok=True)
        (self.plugins / "greenfield_tasks.py").write_text(CALLBACK)

    def round(self, turn: int) -> None:
        try:
            for tree in rotated(list(self.b.found), turn):
                run = greenfield_run(self.b.collection(tree), self.b.bed, self.b.api, self.b.kubeconfig,
                                     self.b.helm["3"], self.plugins)
                self.runs[tree].append(run)
                self.b.note(f"  {tree}: wall {run['wall']:.1f} s, deliberate {run['deliberate']:.1f} s, "
                            f"overhead {run['overhead']:.1f} s")
                self.b.bed.delete_all()
        finally:
            self.b.bed.delete_all()

    def data(self) -> Any:
        return self.runs

    def cell(self, tree: str) -> str:
        over = median(r["overhead"] for r in self.runs[tree])
        wall = median(r["wall"] for r in self.runs[tree])
        return "-" if over is None else f"{over:.1f} s above (wall {wall:.1f} s)"

    def rows(self) -> List[Row]:
        over = median(r["overhead"] for r in self.runs[THIS_TREE])
        deliberate = median(r["deliberate"] for r in self.runs[THIS_TREE])
        return [Row(item="greenfield", case="example chart: wall time above its deliberate work (Jobs + plain helm)",
                    lcm=self.cell(THIS_TREE), anchors={a: self.cell(a) for a in self.b.anchors},
                    baseline=f"deliberate work: {seconds(deliberate)}", target="<= 8 s above, on an idle bed",
                    met=at_most(over, 8.0))]


# -- the UpdateStatus refresh ------------------------------------------------------------------

class Update:
    name = "update"

    def __init__(self, b: Bench) -> None:
        self.b = b
        self.sizes = (1, 5) if b.args.quick else (1, 5, 20)
        self.runs: Dict[str, Dict[int, List[Dict[str, Any]]]] = {t: {n: [] for n in self.sizes} for t in b.found}

    def prepare(self) -> None:
        pass

    def round(self, turn: int) -> None:
        lifecycles = self.b.dyn.resources.get(api_version="lifecycle.openstack.org/v1alpha1", kind="ServiceLifecycle")
        for i, n in enumerate(rotated(list(self.sizes), turn)):
            try:
                for k in range(n):
                    ns = self.b.bed.name("upd")
                    self.b.bed.create(ns)
                    lifecycles.create(namespace=ns, body={
                        "apiVersion": "lifecycle.openstack.org/v1alpha1", "kind": "ServiceLifecycle",
                        "metadata": {"name": f"svc{k}"}, "spec": {"service": f"svc{k}", "release": f"svc{k}"}})
                for tree in rotated(list(self.b.found), turn + i):
                    self.runs[tree][n].append(worker(UPDATE_WORKER, self.b.found[tree], self.b.kubeconfig))
                    r = self.runs[tree][n][-1]
                    self.b.note(f"  {tree}, {n} namespaces of this run ({r['namespaces']} in all): "
                                f"{r['requests']} requests")
            finally:
                self.b.bed.delete_all()

    def data(self) -> Any:
        return self.runs

    def cell(self, tree: str, field: str = "requests") -> str:
        return " / ".join(_count(median(r[field] for r in self.runs[tree][n])) for n in self.sizes)

    def rows(self) -> List[Row]:
        series = [median(r["requests"] for r in self.runs[THIS_TREE][n]) for n in self.sizes]
        series = [v for v in series if v is not None]
        return [Row(item="update status", case=(f"requests of one refresh, {' / '.join(map(str, self.sizes))} namespaces "
                                                f"of this run with a service ({self.cell(THIS_TREE, 'namespaces')} "
                                                f"in the cluster)"),
                    lcm=self.cell(THIS_TREE), anchors={a: self.cell(a) for a in self.b.anchors},
                    target="constant", met=constant(series))]


# -- a site at rest, planned again -------------------------------------------------------------

class SiteNoop:
    name = "site-noop"

    def __init__(self, b: Bench) -> None:
        self.b = b
        self.sizes = SITE_SIZES[:1] if b.args.quick else SITE_SIZES
        self.sites: Dict[int, Deployed] = {}
        # This tree with and without the releases read; an anchor with the plan it has.
        self.todo = [(THIS_TREE, size, variant) for size in self.sizes for variant in SITE_VARIANTS] + [
            (a, size, "drift") for a in b.anchors for size in self.sizes]
        self.runs: List[Dict[str, Any]] = []

    def prepare(self) -> None:
        for size in self.sizes:
            self.sites[size] = Deployed(size, 3, 7, f"{self.b.args.prefix}-noop", self.b.bed, self.b.scratch,
                                        self.b.kubeconfig)
            wall = self.sites[size].deploy(self.b.found[THIS_TREE])
            self.b.note(f"  site-noop: {size} services deployed in {wall:.0f} s")

    def round(self, turn: int) -> None:
        for tree, size, variant in rotated(self.todo, turn):
            run = self.sites[size].noop(self.b.found[tree], variant, turn, "" if tree == THIS_TREE else tree)
            self.runs.append(dict(run, tree=tree))
            self.b.note(f"  {tree}, {size} services, {variant}: {run['wall']:.1f} s"
                        + (f", drift reported on {', '.join(run['reported'])}" if run["reported"] else ""))

    def data(self) -> Any:
        return self.runs

    def med(self, size: int, variant: str, tree: str = THIS_TREE) -> Optional[float]:
        return median(r["wall"] for r in self.runs if (r["tree"], r["services"], r["variant"]) == (tree, size, variant))

    def rows(self) -> List[Row]:
        out = []
        for size in self.sizes:
            base, drift = self.med(size, "versions-only"), self.med(size, "drift")
            value, met = judge(base, drift)
            out.append(Row(item="no-op site", case=(f"{size} services at rest: playbooks/site.yml, the plan reading "
                                                    "the releases (drift) vs the versions alone"),
                           lcm=seconds(drift), anchors={a: seconds(self.med(size, "drift", a)) for a in self.b.anchors},
                           baseline=f"-e site_read_releases=false: {seconds(base)}", ratio=value,
                           target=f"{SITE_TARGET}, on an idle bed", met=met))
        return out


CLASSES = {c.name: c for c in (Lag, Noop, Helm, Scale, Greenfield, Wait, Update, SiteNoop)}


def commit() -> str:
    out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                         check=False)
    return out.stdout.strip()


def main() -> None:
    parser = side_by_side_args(__doc__, runs=0)
    parser.add_argument("--quick", action="store_true", help="small counts and one round, for a smoke run")
    parser.add_argument("--only", default=",".join(ITEMS), help=f"some of {','.join(ITEMS)}")
    parser.add_argument("--prefix", default="speed", help="of the namespaces the bench makes")
    parser.add_argument("--out", default=str(ROOT / "build" / "bench"), help="where the JSON and the table go")
    args = parser.parse_args()
    args.runs = args.runs or (1 if args.quick else 3)
    chosen = [i for i in args.only.split(",") if i]
    unknown = sorted(set(chosen) - set(ITEMS))
    if unknown:
        parser.error(f"unknown items {', '.join(unknown)}; choose among {', '.join(ITEMS)}")
    started = datetime.now(timezone.utc)
    kubeconfig = bench_kubeconfig()
    install_crds(dynamic.DynamicClient(config.new_client_from_config(config_file=kubeconfig)))
    with tempfile.TemporaryDirectory(prefix="speed-bench-") as scratch, trees(args.anchor) as found:
        b = Bench(args, found, Path(scratch))
        items = [CLASSES[name](b) for name in ITEMS if name in chosen]
        try:
            for item in items:
                b.current = item.name
                item.prepare()
            for turn in range(args.runs):
                for item in rotated(items, turn):
                    b.note(f"round {turn + 1}/{args.runs}: {item.name}")
                    b.current = item.name
                    item.round(turn)
        finally:
            b.delete_all()
        rows = [row for item in items for row in item.rows()]
        anchors = b.anchors
    met, judged = summary(rows)
    title = (f"### Speed ({args.runs} round(s){', --quick' if args.quick else ''}, interleaved, medians, "
             f"{started:%Y-%m-%d}, at {commit()}{f' against {args.anchor}' if args.anchor else ''})")
    text = f"{title}\n\n{table(rows, anchors)}\n\n{met} of {judged} targets met.\n"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"speed-{started:%Y-%m-%d}"
    stem.with_suffix(".json").write_text(json.dumps({
        "started": started.isoformat(), "commit": commit(), "anchor": args.anchor, "quick": args.quick,
        "runs": args.runs, "items": {item.name: item.data() for item in items},
        "rows": [r.as_dict() for r in rows], "targets": {"met": met, "judged": judged}}, indent=2, default=str))
    stem.with_suffix(".md").write_text(text)
    print(text)
    b.note(f"wrote {stem}.json and {stem}.md")


if __name__ == "__main__":
    main()
