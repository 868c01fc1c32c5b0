# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One Helm release brought to a state: present, absent, rolledback, tested.

Idempotence needs no helm-diff plugin: the chart (name and version), the
user-supplied values and the rendered manifest (`helm template`, hooks and
tests left out on both sides) are compared with the last revision; only a
difference, or a release that is not `deployed`, makes an upgrade. The
revision is read by `helm history` and `helm status`, run at once with that
`helm template` (helm/records.py), a chart on disk from its files
(helm/chart_files.py). The cluster client is made only when the release
changes: a no-op never loads it.

Unless `helm_wait` (or `atomic`, whose rollback Helm ties to its own wait)
is set, the objects of the release manifest are waited on by the phase
engine's watcher, so a timeout names what is not ready and why.

With `disable_jobs`, every `manifests.job_*` switch of the chart's default
values is turned off for the release (helm/chart_jobs.py): the phases run the jobs.
A first install adopts the kept objects of an earlier install of the release,
and an uninstall that hangs in its hooks is retried without them
(helm/keep.py, helm/removal.py).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

# The modules of the steps that change a release or test it are imported where used: they
# load the watcher's and the Lease's code (about 20 ms), which a no-op never runs.
from ansible_collections.lcm.openstack.plugins.module_utils.helm import chart_jobs, commands, drift, hooks, ownership, records
from ansible_collections.lcm.openstack.plugins.module_utils.helm import history as release_history
from ansible_collections.lcm.openstack.plugins.module_utils.helm.chart_files import ChartSource
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError, merge_values
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import parse_manifest


# (client, namespace, manifest, ignore rules) -> (the objects that drifted, each with as_dict()
# and text(); why some were not read, '' when all were).
ReadDrift = Callable[[Any, str, str, List[str]], Tuple[List[Any], str]]


@dataclass
class ReleaseRequest:
    name: str
    namespace: str
    chart: Optional[str] = None
    chart_version: Optional[str] = None
    values: Dict[str, Any] = field(default_factory=dict)
    values_files: Sequence[str] = ()
    set_values: Sequence[Mapping[str, Any]] = ()
    create_namespace: bool = False
    atomic: bool = False
    wait: bool = True
    helm_wait: bool = False
    timeout: int = 300
    force: bool = False
    reset_values: bool = False
    reuse_values: bool = False
    history_max: Optional[int] = None
    description: Optional[str] = None
    revision: Optional[int] = None
    keep_history: bool = False
    # Helm 4 only: apply on the server (True) or merge on the client (False).
    server_side: Optional[bool] = None
    # Switch every manifests.job_* of the chart off for the release.
    disable_jobs: bool = False
    # On uninstall, delete the objects Helm keeps (helm.sh/resource-policy: keep).
    purge_kept: bool = False
    # A release found as asked: read its objects against its manifest (report),
    # and upgrade it when they drifted (correct); ignore reads nothing (drift/model.py).
    drift: str = "ignore"
    drift_ignore: Sequence[str] = ()
    # Set when a drift is corrected on a release Helm 4 applies on the server: fields
    # edited by hand belong to another field manager, and the upgrade takes them back.
    force_conflicts: bool = False


class ReleaseManager:
    def __init__(self, helm: Helm, req: ReleaseRequest, dyn: Any = None,
                 check_mode: bool = False, connect: Optional[Callable[[], Any]] = None,
                 read_drift: Optional[ReadDrift] = None) -> None:
        """`dyn` the cluster's dynamic client, or `connect` to make it when
        first needed: a release found as asked needs none. `read_drift`
        (client, namespace, manifest, ignore rules) -> (the objects that
        drifted, why some were not read) reads a drift when one is asked for."""
        self.helm, self.req, self.check_mode = helm, req, check_mode
        self.read_drift = read_drift
        self._dyn, self._connect = dyn, connect
        self.helm.redactor.add_values(req.values)
        self.commands: List[str] = []
        self.notes: List[str] = []  # said as warnings: what was recovered from
        self.extra: Dict[str, Any] = {}
        self._with_hooks: List[Dict[str, Any]] = []  # the chart rendered with its hooks, once read
        self._guard: Any = None

    @property
    def dyn(self) -> Any:
        if self._dyn is None and self._connect is not None:
            self._dyn, self._connect = self._connect(), None
        return self._dyn

    @property
    def guard(self) -> Any:
        """The Lease that refuses another run on the release (helm/lease.py); None without a client."""
        if self._guard is None and self.dyn is not None:
            from ansible_collections.lcm.openstack.plugins.module_utils.helm import lease as release_lease  # pylint: disable=import-outside-toplevel
            self._guard = release_lease.ReleaseGuard(self.dyn, self.req.namespace, self.req.name)
        return self._guard

    # -- states ------------------------------------------------------------
    def present(self) -> Dict[str, Any]:
        req = self.req
        self.helm.check_version()
        if not req.chart:
            raise HelmError("chart is required for state=present")
        chart = ChartSource(self.helm, req.chart, req.chart_version)
        drift.check_local_chart_version(req, chart)
        if req.disable_jobs:
            switches = chart_jobs.job_switches(chart_jobs.chart_defaults(chart))
            req.values = merge_values(req.values, chart_jobs.jobs_off(switches))
            self.extra["disabled_jobs"] = switches
        with self.helm.values_args(req.values, req.values_files, req.set_values) as value_args:
            deployed = records.Revisions(self.helm, req.name, req.namespace)
            (render,) = deployed.read(alongside=[drift.render_args(req, value_args)])
            history = deployed.history
            self._refuse_pending(history)
            desired = drift.rendered(self.helm, req, render)
            self.helm.redactor.add_objects(o.obj for o in parse_manifest(desired))
            current = drift.current_manifest(history, deployed.manifest)
            operation = drift.needed(req, history, desired, current, chart.metadata, deployed.values)
            diff = drift.diff(req.name, current, desired)
            if operation is None and req.drift != "ignore":
                operation = self._live_drift(current)
            if operation is None:
                return self._result(False, "none", history, diff)
            no_hooks = self._without_hooks(value_args, operation)
            if self.check_mode:
                return self._result(True, operation, history, diff)
            with self._exclusive(operation, history), ownership.explained(
                    req.name, req.namespace, ownership.from_chart(desired, chart)):
                self._upgrade(value_args, history, operation, no_hooks)
        history = self._settled()
        return self._result(True, operation, history, diff)

    def absent(self) -> Dict[str, Any]:
        req = self.req
        self.helm.check_version()
        history = self.helm.history(req.name, req.namespace)
        if not history or history[-1].get("status") == "uninstalled":
            return self._result(False, "none", history)
        if not self.check_mode:
            from ansible_collections.lcm.openstack.plugins.module_utils.helm import removal as release_removal  # pylint: disable=import-outside-toplevel
            with self._exclusive("uninstall", history):
                done = release_removal.uninstall(self.helm, req.name, req.namespace, req.timeout, req.keep_history,
                                                 req.wait, req.purge_kept, self.dyn, str(history[-1].get("status")))
            self.commands += done.pop("commands")
            self.extra.update({k: v for k, v in done.items() if k != "msg"})
            if done["msg"]:
                self.extra["msg"] = done["msg"]
        return self._result(True, "uninstall", history if self.check_mode else
                            self.helm.history(req.name, req.namespace))

    def rolledback(self) -> Dict[str, Any]:
        req = self.req
        self.helm.check_version()
        history = self.helm.history(req.name, req.namespace)
        if not history:
            raise HelmError(f"release {req.name} does not exist in namespace {req.namespace}; "
                            "there is nothing to roll back")
        self._refuse_pending(history)
        current = history[-1]
        if not req.revision and current.get("status") == "deployed" and release_history.rollback_source(current):
            # Rolled back already: a default rollback does not go further back
            # on a re-run; an explicit revision does.
            result = self._result(False, "none", history)
            result["msg"] = (f"revision {current['revision']} is already a rollback to revision "
                             f"{release_history.rollback_source(current)}; give revision to roll back further")
            result["rolled_back_to"] = release_history.rollback_source(current)
            return result
        target = req.revision or self._previous_deployed(history)
        revisions = [h["revision"] for h in history]
        if target not in revisions:
            raise HelmError(f"revision {target} of release {req.name} does not exist; "
                            f"its history holds revisions {', '.join(map(str, revisions))}")
        if current.get("status") == "deployed" and (
                current["revision"] == target or current.get("description") == f"Rollback to {target}"):
            return dict(self._result(False, "none", history), rolled_back_to=target)
        if not self.check_mode:
            with self._exclusive("rollback", history), ownership.explained(req.name, req.namespace):
                self._run(commands.rollback_args(self.helm, req, target))
            history = self._settled()
        result = self._result(True, "rollback", history)
        result["rolled_back_to"] = target
        return result

    def tested(self) -> Dict[str, Any]:
        """Run the chart's tests. The release does not change: changed is false."""
        req = self.req
        self.helm.check_version()
        history = self.helm.history(req.name, req.namespace)
        if not history:
            raise HelmError(f"release {req.name} does not exist in namespace {req.namespace}")
        if self.check_mode:
            return dict(self._result(False, "test", history), tests=[], msg="check mode: tests not run")
        run = self.helm.run(["test", req.name, "--namespace", req.namespace,
                             "--timeout", f"{req.timeout}s"], check=False)
        self.commands.append(" ".join(run.command))
        from ansible_collections.lcm.openstack.plugins.module_utils.helm import chart_tests  # pylint: disable=import-outside-toplevel
        tests = chart_tests.results(self.dyn, self.helm, req.name, req.namespace)
        result = dict(self._result(False, "test", history), tests=tests)
        failed = [t for t in tests if t["phase"] != "Succeeded"]
        if run.rc != 0 or failed:
            names = ", ".join(f"{t['name']} ({t['phase'] or 'not run'})" for t in failed) or "see stderr"
            failure = self.helm.error(run)
            raise HelmError(f"helm test {req.name} failed: {names}", stdout=failure.details["stdout"],
                            stderr=failure.details["stderr"], **result)
        return result

    # -- steps -------------------------------------------------------------
    def _live_drift(self, manifest: str) -> Optional[str]:
        """The release is as asked: its objects are read against its manifest
        (`read_drift`, the adapter's drift/live.py); `upgrade` when they drifted
        and drift is correct, which applies the manifest again (Helm's three-way
        merge puts back the fields it sets), else None. What drifted is returned
        as `drift`."""
        if self.read_drift is None:
            raise HelmError("drift was asked for, but nothing reads it: a caller of the release manager gives read_drift")
        found, skipped = self.read_drift(self.dyn, self.req.namespace, manifest, list(self.req.drift_ignore))
        self.extra["drift"] = [o.as_dict() for o in found]
        if skipped:
            self.notes.append(f"drift not read: {skipped}")
        if found and self.req.drift == "correct":
            self.notes.append("the release's objects drifted from its manifest (" + "; ".join(
                o.text() for o in found) + "): applied again")
            self.req.force_conflicts = self._applied_on_server()
            return "upgrade"
        return None

    def _applied_on_server(self) -> bool:
        """Whether the upgrade applies on the server: asked so, or Helm 4 left to the
        release's own method (its record's apply_method; a driver only Helm reads: no)."""
        if self.req.server_side is not None or self.helm.major < 4:
            return bool(self.req.server_side)
        import os  # pylint: disable=import-outside-toplevel
        from ansible_collections.lcm.openstack.plugins.module_utils.helm import storage  # pylint: disable=import-outside-toplevel
        of = storage.kind(os.environ)
        deployed = storage.deployed(self.dyn, self.req.namespace, self.req.name, of) if of else None
        return deployed is not None and deployed.apply_method == "ssa"

    def _without_hooks(self, value_args: List[str], operation: str) -> bool:
        """To adopt kept objects (a first install), or as the phases run a hook Job left (helm/hooks.py)."""
        if operation == "install" and self._adopt_kept(value_args):
            return True
        if not self.req.disable_jobs:
            return False
        left = hooks.left_to_phases(self._with_hooks or hooks.rendered(self.helm, self.req, value_args), operation)
        self.extra.update({"hooks_left_to_phases": left} if left else {})
        return bool(left)

    def _adopt_kept(self, value_args: List[str]) -> bool:
        """Whether a first install must run without hooks to adopt kept objects
        (helm/keep.py). The chart is rendered with its hooks while the client
        that looks for them is made."""
        if self._dyn is None and self._connect is None:
            return False
        self._with_hooks = hooks.rendered(self.helm, self.req, value_args, meanwhile=lambda: self.dyn)
        if self.dyn is None:
            return False
        rendered = self._with_hooks
        from ansible_collections.lcm.openstack.plugins.module_utils.helm import keep as release_keep  # pylint: disable=import-outside-toplevel
        candidates = [release_keep.ref(o) for o in rendered if release_keep.is_kept(o)]
        no_hooks, adopted = release_keep.plan_install(
            rendered, release_keep.existing(self.dyn, self.req.namespace, candidates))
        if adopted:
            self.extra["adopted"] = [str(r) for r in adopted]
        return no_hooks

    def _upgrade(self, value_args: List[str], history: List[Dict[str, Any]], operation: str,
                 no_hooks: bool = False) -> None:
        req = self.req
        try:
            self._run(commands.upgrade_args(self.helm, req, value_args, no_hooks), what=f"helm {operation} of {req.name}")
        except HelmError as exc:
            if hooks.TIMED_OUT in str(exc) and not no_hooks and self.dyn is not None:
                hooks.explain_timeout(exc, self.dyn, req.namespace, self._with_hooks
                                      or hooks.rendered(self.helm, req, value_args), operation)
            after = self.helm.history(req.name, req.namespace)
            exc.details.update(status=release_history.summary(req.name, req.namespace, after),
                               history=release_history.history_entries(after))
            if req.atomic and after and after[-1].get("status") == "deployed" and history:
                exc.args = (f"upgrade of {req.name} failed and Helm rolled it back "
                            f"(now revision {after[-1]['revision']}, {after[-1].get('chart')}): {exc}",)
            raise

    def _settled(self) -> List[Dict[str, Any]]:
        """The history after a change, once the release's objects are ready (helm/settle.py)."""
        from ansible_collections.lcm.openstack.plugins.module_utils.helm import settle  # pylint: disable=import-outside-toplevel
        history = self.helm.history(self.req.name, self.req.namespace)
        settle.wait_for_release(self.dyn, self.helm, self.req, history)
        return history

    def _previous_deployed(self, history: List[Dict[str, Any]]) -> int:
        previous = release_history.previous_deployed(history)
        if previous is None:
            raise HelmError(f"release {self.req.name} has no earlier deployed revision to roll back to; "
                            "give revision")
        return previous

    @property
    def warnings(self) -> List[str]:
        return (self._guard.warnings if self._guard is not None else []) + self.notes

    def _exclusive(self, operation: str, history: List[Dict[str, Any]]) -> Any:
        """Hold the release's Lease around the Helm command that changes it."""
        if self.guard is None:
            return contextlib.nullcontext()
        return self.guard.held(f"helm {operation}", self.req.timeout, history,
                               lambda: self.helm.history(self.req.name, self.req.namespace))

    def _refuse_pending(self, history: List[Dict[str, Any]]) -> None:
        stuck = release_history.stuck(self.req.name, self.req.namespace, history)
        if stuck:
            held = self.guard.held_by_another(history) if self.guard is not None else None
            # Held by another live run: running, not stuck.
            raise HelmError(held or stuck, status=release_history.summary(self.req.name, self.req.namespace, history))

    def _run(self, args: List[str], what: str = "") -> None:
        """Run a changing Helm command; one whose connection broke runs again (helm/interrupted.py)."""
        from ansible_collections.lcm.openstack.plugins.module_utils.helm import interrupted, settle  # pylint: disable=import-outside-toplevel
        lines = settle.command_lines(self.helm, self.req, args)
        for attempt in range(1, interrupted.ATTEMPTS + 1):
            result = self.helm.run(args, check=False)
            self.commands.append(" ".join(result.command))
            if result.rc == 0:
                lines.say(f"helm {args[0]} done in {lines.took()}")
                return
            why = None if attempt == interrupted.ATTEMPTS else interrupted.again(
                result, lambda: self.helm.history(self.req.name, self.req.namespace), self.dyn, self.req.name,
                self.req.namespace, self.helm.redactor.redact, records.kind_of(self.helm))
            if why is None:
                break
            self.notes.append(f"{what or 'helm ' + args[0]} lost its connection to the apiserver "
                              f"({interrupted.last_line(self.helm.redactor.redact(result.stderr))}); {why}; "
                              "ran it again")
        raise self.helm.error(result, what)

    def _result(self, changed: bool, operation: str, history: List[Dict[str, Any]],
                diff: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
        out = {"changed": changed, "operation": operation,
               "status": release_history.summary(self.req.name, self.req.namespace, history),
               "history": release_history.history_entries(history), "command": self.commands[-1] if self.commands else "",
               **self.extra}
        if diff is not None:
            out["_diff"] = diff
        return out
