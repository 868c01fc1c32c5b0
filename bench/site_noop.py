#!/usr/bin/env python3
"""A site at rest, planned again: what reading each release for drift adds to
a run of playbooks/site.yml that has nothing to do, against the plan that
reads the versions alone.

A synthetic site of --sizes services (each size a site of its own, in
--depth levels, as bench/site.py makes them: each service a release of the
example chart in a namespace of its own, depending on 1 to 3 services of the
level below) is deployed once by one `ansible-playbook playbooks/site.yml`.
Each service is given values inline and two values files (one the site's,
one its own), so the plan's comparison of the values asked against the
deployed revision has keys to walk. Then playbooks/site.yml runs again on the
deployed site, --runs rounds, every (size, variant) once a round, the order
rotated each round:

  drift          the default: the plan reads each release at rest, the chart
                 and values asked against the deployed revision and its live
                 objects against its manifest (read_releases: true)
  versions-only  -e site_read_releases=false: the plan reads the
                 ServiceLifecycle records (and renders the charts for the
                 order) as before drift was read

Measured: the wall time of the ansible-playbook process, start to exit. Each
run must be a no-op, or the bench stops: exit 0, changed=0 and failed=0 for
every host in the PLAY RECAP, the plan's every service `nothing`, and the
site's summary `Nothing to do` for each. A drift run whose plan could not
compare a release stops it too (it would measure a read that did not happen);
drift the plan reports on a service at rest is counted, as it is a finding.

The issue's target: a no-op site of 12 services within 2x of the
versions-only plan, and below 10 s on an idle bed. Prints a table and
writes every run's numbers to build/bench/site-noop-<date>.json (or --json).

Usage: KUBECONFIG=... HELM_BIN=... bench/site_noop.py [--sizes 6,12] [--depth 3] [--runs 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from anchor import ROOT, bench_site, kubeconfig as bench_kubeconfig, rotated  # noqa: E402
from greenfield import PLAYBOOK, Bed  # noqa: E402
from phase_lag import install_crds  # noqa: E402
from requests_log import hooked, noted  # noqa: E402
from speed_report import at_most, by_kind, median, ratio  # noqa: E402

from kubernetes import config, dynamic  # noqa: E402

VARIANTS: Dict[str, List[str]] = {"versions-only": ["-e", "site_read_releases=false"], "drift": []}
SIZES = (6, 12)
TARGET_RATIO = 2.0  # drift / versions-only
TARGET_SECONDS = 10.0  # drift, on an idle bed
TARGET = f"<= {TARGET_RATIO:g}x and < {TARGET_SECONDS:g} s"
NOTHING = "Nothing to do"  # the site summary's result for a service whose flow had nothing to do
REPORTED = "(reported;"  # a live drift the plan names without acting on it (site/decide.py)
UNREAD = "its release was not compared"
RECAP = re.compile(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)"
                   r"\s+skipped=(\d+)\s+rescued=(\d+)\s+ignored=(\d+)\s*$")
RECAP_FIELDS = ("ok", "changed", "unreachable", "failed", "skipped", "rescued", "ignored")
HEADLINE = re.compile(r"^site plan \((\w+)\): (\d+) service\(s\) in (\d+) level\(s\)")


# -- what a run printed ----------------------------------------------------------------------

def recap(output: str) -> Dict[str, Dict[str, int]]:
    """The PLAY RECAP: {host: {ok, changed, unreachable, failed, skipped, rescued, ignored}}."""
    out: Dict[str, Dict[str, int]] = {}
    lines = output.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("PLAY RECAP")]
    for line in lines[starts[-1] + 1:] if starts else []:
        found = RECAP.match(line.strip())
        if found:
            out[found.group(1)] = dict(zip(RECAP_FIELDS, (int(v) for v in found.groups()[1:])))
    return out


def _printed_list(lines: Sequence[str], start: int) -> List[str]:
    """The strings of a list the default callback printed as JSON, one a line,
    from the line after `start` to its closing bracket."""
    out = []
    for line in lines[start + 1:]:
        text = line.strip()
        if text.startswith("]"):
            break
        out.append(json.loads(text.rstrip(",")))
    return out


def _messages(output: str, first: str) -> List[List[str]]:
    """Every debug msg (a list of lines) whose first line starts with `first`."""
    lines = output.splitlines()
    found = []
    for i, line in enumerate(lines):
        if line.strip() == '"msg": [' and i + 1 < len(lines) and lines[i + 1].strip().startswith(json.dumps(first)[:-1]):
            found.append(_printed_list(lines, i))
    return found


def plan_of(output: str) -> Dict[str, Any]:
    """The plan as the playbook printed it: its headline and, per service, its
    level, flow and reason (site/plan.py's summary: the REASON column starts
    where its heading does)."""
    messages = _messages(output, "site plan (")
    if not messages:
        return {"headline": "", "services": {}}
    head, *rows = messages[0]
    services: Dict[str, Dict[str, Any]] = {}
    if rows:
        reason_at = rows[0].index("REASON")
        for row in rows[1:]:
            level, name, flow = row.split()[:3]
            services[name] = {"level": int(level), "flow": flow, "reason": row[reason_at:].strip()}
    return {"headline": head, "services": services}


def summary_of(output: str) -> Dict[str, str]:
    """{service: result} from the table that ends the site run (site/report.py)."""
    for message in _messages(output, "LEVEL"):
        head, rows = message[0], message[1:]
        if "RESULT" not in head.split():
            continue
        at = head.index("RESULT")
        width = head.index("VERSIONS") - at
        return {row.split()[1]: row[at:at + width].strip() for row in rows if len(row.split()) > 2
                and not re.match(r"^\d+ services: ", row)}
    return {}


def noop_problems(output: str, hosts: Sequence[str], drift: bool) -> List[str]:
    """What keeps a run of site.yml on a site at rest from being the no-op it
    must be (empty: it was one). `drift`: the plan read the releases, and must
    have compared each."""
    problems = []
    seen = recap(output)
    for host in hosts:
        counts = seen.get(host)
        if counts is None:
            problems.append(f"{host}: not in the PLAY RECAP")
        elif counts["changed"] or counts["failed"] or counts["unreachable"]:
            problems.append(f"{host}: changed={counts['changed']} failed={counts['failed']} "
                            f"unreachable={counts['unreachable']}")
    plan = plan_of(output)
    if not HEADLINE.match(plan["headline"]):
        problems.append("no site plan in the output")
    for host in hosts:
        entry = plan["services"].get(host)
        if entry is None:
            problems.append(f"{host}: not in the plan")
        elif entry["flow"] != "nothing":
            problems.append(f"{host}: planned {entry['flow']} ({entry['reason']})")
        elif drift and UNREAD in entry["reason"]:
            problems.append(f"{host}: {entry['reason']}")
    results = summary_of(output)
    problems += [f"{h}: {results.get(h) or 'not in the summary'}" for h in hosts if results.get(h) != NOTHING]
    return problems


def reads_releases(sent: Sequence[Tuple[float, str, str]]) -> bool:
    """Whether a run's requests (requests_log.noted) list Helm's deployed release
    records, as the plan does to read the releases at rest (drift/records.py)."""
    return any(method == "GET" and "owner%3Dhelm" in url and "status%3Ddeployed" in url for _when, method, url in sent)


def reported(output: str) -> List[str]:
    """The services at rest whose plan names a live drift it leaves as it is."""
    return sorted(n for n, e in plan_of(output)["services"].items() if REPORTED in e["reason"])


# -- the site ----------------------------------------------------------------------------------

def site_values(index: int) -> Tuple[Dict[str, Any], Dict[str, Any], Dict[str, Any]]:
    """A service's values: (inline, the site's values file, its own values file).
    Only keys the example chart reads and no secret: the plan prints what differs."""
    inline = {"conf": {"keystone": {"DEFAULT": {"debug": index % 2 == 0}}}, "pod": {"replicas": {"api": 1}}}
    site_file = {"endpoints": {"identity": {"port": 5000, "auth": {"admin": {"region_name": "RegionOne"}}},
                               "oslo_db": {"host": "mariadb.bench", "port": 3306}},
                 "jobs": {"backoff_limit": 0}}
    own_file = {"conf": {"keystone": {"token": {"provider": "fernet", "expiration": 3600 + 60 * index}}},
                "endpoints": {"identity": {"host": f"keystone-api-{index}"}}}
    return inline, site_file, own_file


def merged(base: Mapping[str, Any], over: Mapping[str, Any]) -> Dict[str, Any]:
    """`over` on `base`, mappings merged key by key."""
    out = dict(base)
    for key, value in over.items():
        out[key] = merged(out[key], value) if isinstance(value, Mapping) and isinstance(out.get(key), Mapping) else value
    return out


def site_hosts(services: int, depth: int, seed: int, run: str, values_dir: Path) -> Dict[str, Dict[str, Any]]:
    """bench/site.py's host vars for a site of `services` (its jobs 1 s each, so
    the deploy is quick), each with values inline and two values files written
    to `values_dir`."""
    site_bench = bench_site()
    site = site_bench.make_site(services, depth, seed)
    hosts = site_bench.host_vars(site, run, lambda level: site_bench.job_seconds(level, 1, 1))
    values_dir.mkdir(parents=True, exist_ok=True)
    for index, (name, variables) in enumerate(sorted(hosts.items())):
        inline, site_file, own_file = site_values(index)
        shared, own = values_dir / "site.yaml", values_dir / f"{name}.yaml"
        shared.write_text(yaml.safe_dump(site_file))
        own.write_text(yaml.safe_dump(own_file))
        variables["values"] = merged(variables["values"], inline)
        variables["values_files"] = [str(shared), str(own)]
    return hosts


class Deployed:
    """One site of `services`, deployed once, then planned again and again."""

    def __init__(self, services: int, depth: int, seed: int, prefix: str, bed: Bed, scratch: Path,
                 kubeconfig: str) -> None:
        self.services = services
        self.run = f"{prefix}-{uuid.uuid4().hex[:6]}"
        self.directory = scratch / self.run
        self.hosts = site_hosts(services, depth, seed, self.run, self.directory / "values")
        self.inventory = bench_site().write_inventory(self.directory / "inventory", self.run, self.hosts)
        bed.made.extend(h["openstack_namespace"] for h in self.hosts.values())  # the flows create them
        self.kubeconfig = kubeconfig

    def playbook(self, collections: Path, extra: Sequence[str], log: Path) -> Tuple[float, str]:
        """One run of `collections`' playbooks/site.yml on the site: (wall seconds, its output).
        The requests its processes send are noted in `log` with .requests for a suffix."""
        # The plan and the summary are read from the output as the default callback prints them in JSON
        # (the Makefile exports ANSIBLE_CALLBACK_RESULT_FORMAT=yaml for people).
        env = dict(os.environ, KUBECONFIG=self.kubeconfig, K8S_AUTH_KUBECONFIG=self.kubeconfig, ANSIBLE_NOCOLOR="1",
                   ANSIBLE_FORCE_COLOR="0", ANSIBLE_COLLECTIONS_PATH=str(collections), ANSIBLE_CALLBACK_RESULT_FORMAT="json",
                   **hooked(self.directory.parent, log.with_suffix(".requests")))
        playbook = collections / "ansible_collections" / "lcm" / "openstack" / "playbooks" / "site.yml"
        argv = [PLAYBOOK, "-i", str(self.inventory), str(playbook), "--forks", str(self.services), *extra]
        start = time.monotonic()
        proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
        wall = time.monotonic() - start
        log.write_text(proc.stdout)
        if proc.returncode != 0:  # the scratch directory is kept, with the whole log
            raise SystemExit(f"site.yml on {self.run} failed (rc {proc.returncode}), log in {log}:\n"
                             f"{proc.stdout[-6000:]}")
        return wall, proc.stdout

    def deploy(self, collections: Path) -> float:
        wall, output = self.playbook(collections, [], self.directory / "deploy.log")
        flows = {e["flow"] for e in plan_of(output)["services"].values()}
        if flows != {"greenfield"}:
            raise SystemExit(f"{self.run}: the deploy planned {sorted(flows)}, not a greenfield of every service")
        return wall

    def noop(self, collections: Path, variant: str, turn: int, tree: str = "") -> Dict[str, Any]:
        """One no-op run of `variant`; stops the bench if it was not one. `tree`
        names another revision's collection: its plan is taken as it is, whatever it reads."""
        log = self.directory / f"{variant}-{turn}{re.sub(r'[^A-Za-z0-9_.-]', '_', f'-{tree}' if tree else '')}.log"
        wall, output = self.playbook(collections, VARIANTS[variant], log)
        drift = variant == "drift" and not tree
        problems = noop_problems(output, sorted(self.hosts), drift=drift)
        sent = noted(log.with_suffix(".requests"))
        if drift and not reads_releases(sent):
            problems.append("the plan listed no Helm release record: it read no release")
        if problems:
            raise SystemExit(f"{self.run}, {variant}: not a no-op, log in {self.directory}:\n  " + "\n  ".join(problems))
        return {"variant": variant, "services": self.services, "wall": wall, "reported": reported(output),
                "requests": len(sent), "by_kind": by_kind(sent, float("-inf"), float("inf"))}


# -- the verdict --------------------------------------------------------------------------------

def judge(versions_only: Optional[float], drift: Optional[float]) -> Tuple[Optional[float], Optional[bool]]:
    """(drift / versions-only, whether the target is met); None where there is nothing to judge."""
    value = ratio(drift, versions_only)
    if value is None or drift is None:
        return None, None
    return value, bool(at_most(value, TARGET_RATIO)) and drift < TARGET_SECONDS


def median_walls(runs: Sequence[Mapping[str, Any]]) -> Dict[int, Dict[str, Optional[float]]]:
    """{size: {variant: the median wall time of its runs}}."""
    return {size: {v: median(r["wall"] for r in runs if r["services"] == size and r["variant"] == v) for v in VARIANTS}
            for size in sorted({r["services"] for r in runs})}


def table(medians: Mapping[int, Mapping[str, Optional[float]]]) -> str:
    """The markdown table: one row a size, from {size: {variant: median wall}}."""
    lines = ["| services | versions-only | drift | ratio | target | met |", "|---|---|---|---|---|---|"]
    for size, walls in sorted(medians.items()):
        base, drift = walls.get("versions-only"), walls.get("drift")
        value, met = judge(base, drift)
        cells = ["-" if v is None else f"{v:.1f} s" for v in (base, drift)]
        lines.append(f"| {size} | {cells[0]} | {cells[1]} | {'-' if value is None else f'{value:.2f}'} | {TARGET} "
                     f"| {'-' if met is None else 'met' if met else 'not met'} |")
    return "\n".join(lines)


def cases(sizes: Sequence[int]) -> List[Tuple[int, str]]:
    return [(size, variant) for size in sizes for variant in VARIANTS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="services of each site, comma-separated")
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--prefix", default="bench-noop", help="of the run's namespaces (<prefix>-<id>-<service>)")
    parser.add_argument("--json", default="", help="every run's numbers (default build/bench/site-noop-<date>.json)")
    parser.add_argument("--keep", action="store_true", help="keep the inventories and every run's output")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    kubeconfig = bench_kubeconfig()
    api = config.new_client_from_config(config_file=kubeconfig)
    install_crds(dynamic.DynamicClient(api))
    collections = ROOT / "build" / "collections"
    bed = Bed(api)
    started = datetime.now(timezone.utc)
    scratch = Path(tempfile.mkdtemp(prefix="site-noop-bench-"))
    runs: List[Dict[str, Any]] = []
    deploys: Dict[int, float] = {}
    try:
        sites = {size: Deployed(size, args.depth, args.seed, args.prefix, bed, scratch, kubeconfig) for size in sizes}
        for size, site in sites.items():
            deploys[size] = site.deploy(collections)
            print(f"deployed {size} services ({site.run}) in {deploys[size]:.0f} s", file=sys.stderr, flush=True)
        for turn in range(args.runs):
            for size, variant in rotated(cases(sizes), turn):
                runs.append(sites[size].noop(collections, variant, turn))
                r = runs[-1]
                print(f"round {turn + 1}/{args.runs}, {size} services, {variant}: {r['wall']:.1f} s, "
                      f"{r['requests']} requests"
                      + (f", drift reported on {', '.join(r['reported'])}" if r["reported"] else ""),
                      file=sys.stderr, flush=True)
    finally:
        bed.delete_all(wait=900)
    if args.keep:
        print(f"inventories and outputs kept in {scratch}", file=sys.stderr)
    else:
        shutil.rmtree(scratch)
    medians = median_walls(runs)
    out = Path(args.json) if args.json else ROOT / "build" / "bench" / f"site-noop-{started:%Y-%m-%d}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"started": started.isoformat(), "runs": runs, "deploys": deploys, "depth": args.depth,
                               "medians": {str(k): v for k, v in medians.items()}}, indent=2))
    print(f"### A site at rest, planned again ({args.runs} run(s) each, interleaved, medians, "
          f"{started:%Y-%m-%d})\n\n{table(medians)}")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
