"""What each module ships and loads when it starts. Ansible sends a module
with every module_utils file its imports reach, following each import
statement wherever it stands (a function-level import too), as its
dependency finder does; this follows them the same way. A module then ships
its own adapter and the engine it calls, not every other module's. Once
started, it loads no more Python modules than kubernetes.core.k8s does: the
start-up CPU is mostly import work (bench/ shows the times)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Set

import pytest
from support.paths import ROOT

MODULES = ROOT / "plugins" / "modules"
UTILS = ROOT / "plugins" / "module_utils"
PREFIX = "ansible_collections.lcm.openstack.plugins.module_utils"


def _source(dotted: str) -> Optional[Path]:
    rel = dotted[len(PREFIX):].lstrip(".").replace(".", "/")
    for candidate in (UTILS / f"{rel}.py", UTILS / rel / "__init__.py"):
        if rel and candidate.exists():
            return candidate
    return None


def _imports(path: Path) -> Set[Path]:
    found: Set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX):
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.startswith(PREFIX)]
        found.update(p for p in map(_source, names) if p is not None)
    return found


def payload(module: str) -> Set[Path]:
    seen: Set[Path] = set()
    todo = list(_imports(MODULES / f"{module}.py"))
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo.extend(_imports(path))
    return seen


def _lines(paths: Set[Path]) -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in paths)


def _names(paths: Set[Path]) -> Set[str]:
    return {str(p.relative_to(UTILS)) for p in paths}


def test_phase_info_ships_a_small_part_of_the_collection() -> None:
    everything = set(UTILS.rglob("*.py"))
    shipped = payload("phase_info")
    assert _lines(shipped) * 4 < _lines(everything), sorted(_names(shipped))
    engines = {"phase/runner.py", "phase/apply.py", "helm/release.py", "traffic/runner.py", "kube/waiter.py"}
    assert engines <= _names(everything)
    assert not _names(shipped) & engines


@pytest.mark.parametrize("module, not_shipped", [
    ("helm_release_info", {"phase/runner.py", "traffic/runner.py", "helm/release.py", "updatestatus/keeper.py"}),
    ("helm_release", {"phase/runner.py", "traffic/runner.py", "updatestatus/keeper.py", "lifecycle/info.py"}),
    # service_lifecycle refreshes the UpdateStatus when it changes the record: it ships the keeper
    ("service_lifecycle", {"phase/runner.py", "traffic/runner.py", "helm/release.py", "phase/apply.py"}),
    ("update_status", {"phase/runner.py", "traffic/runner.py", "helm/release.py"}),
    ("phase", {"helm/release.py", "adapter/traffic.py", "adapter/helm_release.py"}),
    # site_plan reads ServiceLifecycles and writes nothing: no record writer, no phase
    ("site_plan", {"phase/runner.py", "traffic/runner.py", "helm/release.py", "updatestatus/keeper.py",
                   "lifecycle/record.py", "common/phase_view.py"}),
])
def test_a_module_does_not_ship_the_other_modules_engines(module: str, not_shipped: Set[str]) -> None:
    assert not_shipped <= _names(set(UTILS.rglob("*.py")))  # each name is a file that exists
    assert not _names(payload(module)) & not_shipped


# Bytes of module_utils each module ships (this collection's; kubernetes.core's
# own module_utils come on top, as for kubernetes.core.k8s). A budget: raise it
# only with a reason in the commit. The four that keep the UpdateStatus (phase,
# service_lifecycle, traffic, update_status) rose by 12 to 17 kB for its sites:
# updatestatus/site.py and the site/graph.py critical path it reuses (16.3 kB).
# helm_release and update_status rose by 2 kB for common/transient.py's schema
# refusal (a 500 that is no blip) and the keeper's write without the sites.
# service_lifecycle rose by 36 kB more for the dependency wait it runs (both ways: a removal waits for its dependents) and the site it records
# (lifecycle/dependencies, dependency_wait, runner, site_member, common/versions, kube/watch).
# phase and traffic rose by 2 kB for phase/entries.py writing status.objects in parts of a few KiB,
# and with service_lifecycle by 0.6 kB for kube/watch.py's backoff after watch requests that end at
# once; service_lifecycle by 1.7 kB more for kube/namespace_ensure.py (the greenfield flow's
# namespace made at its start: one module run fewer).
# The four that wait (helm_release, phase, service_lifecycle, traffic) rose by 7.5 kB for their
# live progress lines (progress/emitter.py and lines.py), imported only when a run waits.
# phase and traffic rose by 4.4 kB for phase/gone.py and the waiter asking it when a target is
# deleted (a namespace deleted under a phase ends it at once), helm_release by 1.2 kB (the waiter).
# The four that run Helm by 2.4 kB for helm/versions.py: Helm's version remembered across runs
# (one helm process fewer a call).
# phase and traffic by 3 kB for phase/diagnosis.py and phase/release_workloads.py, split out of
# status.py and runner.py (each back under 300 lines), their docstrings and imports.
# service_lifecycle rose by 2.5 kB for lifecycle/flow_end.py, a flow's end in a file of its own
# for the other modules that end a flow. traffic by 1 kB for a Phase's end refresh left to the flow's
# end that follows in the same process (phase/record.py, traffic/runner.py); by 43 kB for its end_flow
# option, a flow's last rollout ending the flow in its own process (one module run fewer per greenfield):
# lifecycle/flow_end.py, runner.py and flow.py, and the dependency wait runner.py ships with it. The
# adapter imports them only when the option is given, so a start loads no more than before.
# The four that keep the UpdateStatus by 1.3 kB for kube/paging.py's metadata-only list (Helm's
# release Secrets read without their data).
# Every module by 0.8-1.6 kB for common/compat.py loading the kubernetes names when first asked for
# (a helm_release that changes nothing never loads the client); the four that ship helm/cli.py
# (helm_release, helm_release_info, phase, traffic) by 3 kB more for its reads run together
# (Helm.run_together and Started).
# phase, service_lifecycle and traffic by 0.9 kB for lifecycle/record.py keeping the record as it last
# read or wrote it (a phase run reads its ServiceLifecycle once before its first Job, not three times)
# and kube/lease.py taking the Lease from the read that decided to take it (helm_release by 0.5 kB
# for it too, with the kubernetes names it now asks compat for where used). phase and traffic by 1.5 kB
# for phase/status.py writing a run's end in one write (its last object changes with the outcome).
# Every module by 1.5 kB for common/process_end.py: its process ends with the heap frozen (0.1 s less).
# The four that ship helm/cli.py by 0.5 kB for helm/process.py, split out of it (under 300 lines).
# Every module by up to 0.5 kB for common/transient.py looking up urllib3's, http.client's and ssl's
# exception classes only when it sorts a failure (a no-op helm_release loads none of them: 30 ms);
# helm_release by 2.3 kB more for helm/commands.py, its upgrade and rollback command lines split out
# of helm/release.py, which imports its steps' modules only when a step runs.
# The four that ship helm/process.py by 0.7 kB for its wait on Helm's end (Popen.wait with a timeout
# polls: each Helm was seen ended up to 50 ms late).
# The four that keep the UpdateStatus by 0.5 kB for Helm's release records kept in ConfigMaps
# (HELM_DRIVER=configmap), listed beside its Secrets.
# Every module but helm_release_info by up to 1 kB for common/timefmt.py writing a Phase's start and
# end as MicroTimes and sorting Phases by time (two Phases of a service can start within one second);
# helm_release by 3.3 kB for kube/lease.py reading and writing its MicroTimes through timefmt.py
# rather than a copy of its own (shipped, and loaded only when the release changes).
# service_lifecycle and traffic (which ships the dependency wait) by 9 kB for lifecycle/dependency_chain.py:
# a start that fails on a lost dependency follows the chain to the service whose own flow failed.
# site_plan by 70 kB for rendering every chart of the site (helm/cli.py, helm/render.py) and reading
# the order their pods declare (phase/waves.py, site/chart_graph.py, site/order.py): it runs
# once per site run. phase by 1 kB for the dependencies a flow of the same site creates beside it.
# phase by 8 kB for every database of a service backed up and restored: phase/service_database.py
# reads db-init's secret kind and helm-toolkit's db Secrets, db_backup.py loops over the databases.
# helm_release by 9.5 kB for helm/ownership.py: Helm's refusal to take an object another release owns,
# said as its owner and the chart value that switches its template off (chart_files.py reads the template).
# traffic by 22.5 kB for choosing the object a flow names none of from the deployed release
# (traffic/target.py, kube/release_services.py, traffic/release_target.py; helm/storage.py reading its manifest and the
# chart's values) and for a step with nothing to route recorded on the flow (lifecycle/flow.py);
# the modules that keep the UpdateStatus by 3.5 to 6 kB for its endpoints insight judging the
# Services that select the release's pods (kube/release_services.py) and for flow.py's skipped steps;
# the modules that ship helm/storage.py by 1.5 to 2 kB for it; phase_info by 3 kB for flow.py.
# phase by 0.5 kB for phase/spec.py's options setter (a database step turned off for a chart with none).
# helm_release, phase, service_lifecycle and traffic by 1 kB for kube/lease.py giving a Lease back after
# a renewal of its own holder's (the flow's renewer) raced the write.
# helm_release by 14 kB, phase by 11 kB and traffic (which ships the phase engine) by 20 kB for the
# compute kit: helm/hooks.py (hook Jobs left to the phases, a hook timeout explained), helm/closed.py
# (what a release's wait leaves to the test after a drain), kube/entrypoint.py (kubernetes-entrypoint's
# declarations, read once for phases, sites and hooks), the cluster-scoped objects of a phase, the
# database step of a chart with no database; site_plan by 7 kB for kube/pod_config.py (what a pod
# cannot start without) and site/order.py; service_lifecycle by 2 kB for the group a flow starts with.
# service_lifecycle by 2.3 kB for a flow's start in lifecycle/flow_run.py beside its end, out of the
# adapter, with the one call the adapter makes for a start or an end.
# site_plan by 0.5 kB for deciding what a removal waits for (removed_with, once a playbook's Jinja);
# site_plan by 7 kB for common/openstack_release.py (OpenStack's supported upgrade paths, checked by the
# plan) and the wait for a dependency at the version the run brings it to; service_lifecycle and traffic
# by 1.5 kB for lifecycle/dependencies.py judging a dependency whose update the run rolled back.
# The modules that read a Phase, a ServiceLifecycle or the UpdateStatus by 4.5 to 14 kB for their typed
# records (crds/: the TypedDicts and the accessors of a body's spec, status and flow) and the imports of them.
# Every module by 3 to 5 kB for one error hierarchy (common/errors.py: LcmError and a class per
# domain) beside the API-error translation, now a file of its own (kube/api_errors.py) that every
# API call's failure goes through (api_call, answered).
# Release upgrades the OpenStack way: phase and traffic (which ships the phase engine) by 38 kB for
# kube/old_pods.py (a contract waits, by watch, until no pod of the old release is left),
# phase/migration_jobs.py (check, expand and contract Jobs made from the chart's db-sync Job),
# phase/rolling_gaps.py and kube/failures.py reading a Job's exit codes (a warning, a run again); the
# other modules by 1 to 4 kB for the last two and the two phase types; site_plan by 12 kB for
# common/openstack_upgrade.py (the table of how each project upgrades, and an update's strategy).
# Drift: site_plan by 57 kB for reading each release at rest (drift/: Helm's deployed records, the chart
# and values asked against them, the objects against the manifest with a dry run, the masked diff);
# helm_release by 29 kB for drift/live.py and what it lists with (kube/across.py, kube/paging.py),
# loaded only when drift is read (drift=report or correct) on a release found as asked.
# Drift as an UpdateStatus insight: the four that keep the UpdateStatus by 10.5 kB for the producer
# (updatestatus/insights/drift.py) and drift/model.py; update_status by 55 kB more for reading the
# drift of the releases at rest (updatestatus/drift_read.py, drift/records.py, live.py and fields.py,
# and what they read a manifest and a record with), imported only when the status is refreshed.
# The modules that ship kube/lease.py by 0.3 kB for a take-over kept when its holder takes the Lease again.
# The four that ship helm/cli.py by 0.8 kB for merged_values: the values asked for, merged once for the
# release manager and the site plan's drift (it names a values file that cannot be read).
# phase and update_status by 0.5 kB for the reasons given beside two pylint disables that
# ansible-test 2.21's pylint asks for (helm/process.py's Popen, crds/update_status.py's SiteWaiting).
PAYLOAD_BUDGET = {
    "helm_release": 310_000, "helm_release_info": 108_500, "phase": 581_000, "phase_info": 109_000,
    "service_lifecycle": 337_500, "site_plan": 280_000, "traffic": 725_500, "update_status": 280_000,
}


def test_every_module_has_a_payload_budget_and_keeps_it() -> None:
    # A module an action plugin runs on the controller (flow_inputs: its file has no main()) is
    # never shipped; the modules that wait have an action plugin too, and are shipped.
    controller_only = {p.stem for p in (ROOT / "plugins" / "action").glob("*.py")
                       if "def main(" not in (MODULES / p.name).read_text()}
    modules = sorted(p.stem for p in MODULES.glob("*.py") if p.stem != "__init__" and p.stem not in controller_only)
    assert sorted(PAYLOAD_BUDGET) == modules
    sizes = {m: sum(p.stat().st_size for p in payload(m)) for m in modules}
    assert {m: n for m, n in sizes.items() if n > PAYLOAD_BUDGET[m]} == {}, sizes


_LOADED = """
import importlib, json, sys
before = set(sys.modules)
importlib.import_module(sys.argv[1])
new = set(sys.modules) - before
print(json.dumps({"all": len(new), "kubernetes": len([m for m in new if m.split(".")[0] == "kubernetes"])}))
"""


def _loaded(dotted: str) -> Dict[str, int]:
    """The Python modules importing `dotted` loads, in a fresh interpreter."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))  # where pytest finds the collections
    out = subprocess.run([sys.executable, "-c", _LOADED, dotted], capture_output=True, text=True, check=True,
                         cwd=str(ROOT), env=env)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def anchor() -> Dict[str, int]:
    return _loaded("ansible_collections.kubernetes.core.plugins.modules.k8s")


@pytest.mark.parametrize("module", sorted(PAYLOAD_BUDGET))
def test_a_module_loads_no_more_than_kubernetes_core_k8s(module: str, anchor: Dict[str, int]) -> None:
    """kubernetes.client's API classes and models (252 modules behind
    CoreV1Api) are loaded only when a failure's log is read."""
    loaded = _loaded(f"ansible_collections.lcm.openstack.plugins.modules.{module}")
    assert loaded["kubernetes"] <= anchor["kubernetes"], (loaded, anchor)
    assert loaded["all"] <= anchor["all"], (loaded, anchor)


def test_only_the_adapters_import_ansible() -> None:
    """The engine is tested without Ansible: only adapter/ imports it or kubernetes.core."""
    offenders = []
    for path in UTILS.rglob("*.py"):
        if path.parent.name == "adapter":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(n == "ansible" or n.startswith(("ansible.", "ansible_collections.kubernetes")) for n in names):
                offenders.append(str(path.relative_to(UTILS)))
    assert offenders == []
