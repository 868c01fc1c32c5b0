# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run one phase: render its objects, record the run as a Phase, apply the
objects wave by wave under the Phase, wait for them, and write the outcome.

Re-running the same phase finds the same Phase (its name comes from the spec
hash): Succeeded means nothing to do; Pending or Running means an earlier run
was interrupted, and this one attaches to it; Failed means resume it
(phase/resume.py).
Everything that can be refused is checked before anything is written: the
objects are validated with a server-side dry run before the Phase exists.
"""

from __future__ import annotations

import os
import time
from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import NotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.helm import storage as release_storage, render
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import service_hold
from ansible_collections.lcm.openstack.plugins.module_utils.phase import (
    backup_step, ownership, record as phase_record, resume, selection, steps, waves,
)
from ansible_collections.lcm.openstack.plugins.module_utils.phase.apply import Applied, Applier, actions
from ansible_collections.lcm.openstack.plugins.module_utils.phase.ownership import owner_reference, placeholder_owner
from ansible_collections.lcm.openstack.plugins.module_utils.kube.crd import lcm_resource
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError, PhaseError, PhaseFailed, PhaseGone
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, find_helm, merge_values
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.record import Lifecycle
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import (
    FAILED, LABEL_PHASE, OLD_PODS_GONE_FIRST, WORKLOAD_KINDS, LABEL_SERVICE, LABEL_SPEC_HASH, LABEL_TYPE, PENDING, PHASE_KIND, RUNNING, SUCCEEDED,
)
from ansible_collections.lcm.openstack.plugins.module_utils.phase.status import StatusWriter
from ansible_collections.lcm.openstack.plugins.module_utils.common.phase_view import describe_phase
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor
from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import Phase, phase_status
from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import (
    PhaseRequest, build_spec, phase_body, spec_hash,
)
from ansible_collections.lcm.openstack.plugins.module_utils.phase.stop import stop_jobs
from ansible_collections.lcm.openstack.plugins.module_utils.kube.deletion import delete_and_wait
from ansible_collections.lcm.openstack.plugins.module_utils.kube.failures import WARNING
from ansible_collections.lcm.openstack.plugins.module_utils.kube.tracker import Target
from ansible_collections.lcm.openstack.plugins.module_utils.kube.waiter import wait_for


class PhaseRunner:
    def __init__(self, dyn: Any, req: PhaseRequest, check_mode: bool = False,
                 env: Optional[Mapping[str, str]] = None, parent: Optional[str] = None) -> None:
        self.dyn, self.req, self.check_mode = dyn, req, check_mode
        # The Phase this one runs inside of (a traffic rollout's check): Running, and no rival.
        self.parent = parent
        self.env = os.environ if env is None else env
        self.redactor = Redactor()
        self.redactor.add_values(req.source.values or {})
        self.warnings: List[str] = []
        # The chart's whole render and what its long-running workloads use (set by _render).
        self.rendered: List[render.Rendered] = []
        self.users: Dict[Any, List[str]] = {}
        # The backup or restore Job made from the mariadb backup CronJob, if any (set by _render).
        self.cronjob_step: Optional[backup_step.Planned] = None
        self.phases = self._phase_resource()
        self.held = ""  # how this run took its service's Lease (lifecycle/service_hold.py), if it did
        self.beside: List[str] = []  # what its pods wait for that a flow of the site makes beside it

    # -- entry points ------------------------------------------------------
    def present(self) -> Dict[str, Any]:
        """Run the phase; every error message leaves with credentials masked."""
        try:
            return self._present()
        except LcmError as exc:
            self.redactor.scrub(exc)
            raise

    def _present(self) -> Dict[str, Any]:
        req = self.req
        req.validate()
        self.deployed = self._deployed()
        if req.release_revision is None and self.deployed is not None:
            req.release_revision = self.deployed.revision
        # One for the run: what it read of the record, the run's start and end start from.
        lifecycle = Lifecycle(self.dyn, req.namespace, req.service, req.release)
        if not req.flow_id:
            req.flow_id = lifecycle.running_flow()
        objects = self._render()
        skipped = steps.requested_steps(req.type, req.options, objects, req.source.templates)
        self.warnings += skipped
        if skipped and not objects:
            # the one step asked for has nothing to run (missing_job: warn): no Phase, no change
            return {"changed": False, "phase": {}, "objects_applied": [], "warnings": self.warnings}
        # In check mode before the release exists, its Services are still to come.
        self.beside = waves.check(objects, self.rendered, req.namespace,
                                  waves.cluster_lookup(self.dyn),
                                  release_creates=self.check_mode and self.deployed is None,
                                  provided=lifecycle.provided_by_site)
        spec = build_spec(req, [o.obj for o in objects])
        hash_ = spec_hash(spec)
        body = phase_body(req, spec, hash_)
        name = body["metadata"]["name"]
        existing = self._get(name)
        state = phase_status(existing).get("state", PENDING) if existing else None
        same = existing is not None and existing["metadata"].get("labels", {}).get(LABEL_SPEC_HASH) == hash_
        if same and state == SUCCEEDED:
            if not self.check_mode:
                lifecycle.phase_found_done(existing)
            return {"changed": False, "phase": describe_phase(existing), "objects_applied": []}
        if existing is not None and not same and state in (PENDING, RUNNING):
            raise PhaseError(f"Phase {name} is {state} with another spec; wait for it or delete it "
                             "(state: absent) before running a different one under that name")
        phase_record.refuse_concurrent(self.phases, req.namespace, req.service, (name, self.parent),
                                       "starting another")
        # The same inputs after a failure resume the Phase (phase/resume.py); other inputs start anew.
        earlier = resume.EarlierRun.of(existing) if existing is not None and same and state == FAILED else None
        if self.check_mode:
            return self._dry_run(body, objects, existing, same and state in (PENDING, RUNNING, FAILED), earlier)
        self._preflight(objects)
        if not self.parent:  # a rollout's check runs inside the rollout, which holds the service
            self.held = service_hold.hold(self.dyn, req.namespace, req.service, f"{req.type} phase")
        if existing is not None and not same:
            self._delete_and_wait(name)
            existing = None
        phase = existing or phase_record.create(self.phases, body, req.service)
        return self._run(phase, objects, lifecycle, earlier)

    def absent(self) -> Dict[str, Any]:
        names = [self.req.name] if self.req.name else self._names_of_service_type()
        found = [n for n in names if n and self._get(n) is not None]
        if not self.check_mode:
            for n in found:
                self._delete_and_wait(n)
        return {"changed": bool(found), "deleted": found}

    # -- steps -------------------------------------------------------------
    def _render(self) -> List[render.Rendered]:
        req, src = self.req, self.req.source
        if src.mode == "manifests" and not src.chart:
            rendered = render.load_manifests(src.manifests or [])
        else:
            # Every mode renders with the phase named, so a chart can gate
            # phase-only templates (a backup job) on it; stage takes everything.
            extra = render.dotted_value(src.stage_value, req.type)
            if req.backup_ref:
                extra.setdefault("lifecycle", {})["backupRef"] = req.backup_ref
            text = render.helm_template(
                find_helm(req.helm_binary, self.env), req.release, src.chart, req.namespace,
                values=self._values(), values_files=src.values_files, chart_version=src.chart_version,
                extra_values=extra, redactor=self.redactor)
            rendered = render.parse_manifest(text)
            if src.manifests:
                rendered += render.load_manifests(src.manifests)
        self.rendered = rendered
        self.users = ownership.workload_users(r.obj for r in rendered)
        req.options, nothing = steps.without_database(req.type, req.options, rendered)
        self.warnings += nothing
        rendered = steps.without_unasked(rendered, req.type, req.options)
        chosen = selection.select(rendered, req.type, src.mode, src.templates, req.namespace)
        if req.options.get("jobs"):
            # Imported here: only an upgrade's check, expand or contract makes its Jobs so.
            from ansible_collections.lcm.openstack.plugins.module_utils.phase import migration_jobs  # pylint: disable=import-outside-toplevel
            chosen = migration_jobs.chosen(chosen, rendered, req.type, req.options["jobs"])
            if req.type == "upgrade":  # its release is rolled while the traffic flows: say where it would not
                from ansible_collections.lcm.openstack.plugins.module_utils.phase.rolling_gaps import gaps  # pylint: disable=import-outside-toplevel
                self.warnings += gaps(r.obj for r in rendered)
        self.cronjob_step, warnings = backup_step.plan(
            req.type, req.options, req.namespace, req.backup_ref, self.rendered,
            Applier(self.dyn, req.namespace, dry_run=True).get)
        self.warnings += warnings
        if self.cronjob_step is not None:
            chosen = backup_step.joined(chosen, self.cronjob_step.rendered)
        if src.mode == "templates" and src.templates is None:
            from ansible_collections.lcm.openstack.plugins.module_utils.phase import release_workloads  # pylint: disable=import-outside-toplevel

            chosen = sorted(chosen + release_workloads.release_workloads(
                self.dyn, self.req.namespace, self.req.type, self.req.release, self.deployed, rendered),
                key=lambda r: r.wave)  # in the wave their type waits for them
        self.redactor.add_objects(o.obj for o in chosen)
        return chosen

    def _deployed(self) -> Optional[release_storage.Deployed]:
        """The release's deployed revision, from where Helm keeps it (helm/storage.py)."""
        req = self.req
        of = release_storage.kind(self.env)
        if of is None:
            helm = Helm(find_helm(req.helm_binary, self.env), env=dict(self.env), redactor=self.redactor)
            return release_storage.deployed_by_helm(helm, req.namespace, req.release)
        return release_storage.deployed(self.dyn, req.namespace, req.release, of)

    def _values(self) -> Optional[Mapping[str, Any]]:
        """The values to render with: the deployed release's first, when asked."""
        src = self.req.source
        if not src.values_from_release:
            return src.values
        if self.deployed is None:  # nothing deployed (a failed install): the values given
            return src.values
        self.redactor.add_values(self.deployed.values)
        return merge_values(self.deployed.values, src.values or {})

    def _preflight(self, objects: List[render.Rendered]) -> None:
        """Validate every object with a server-side dry run before writing anything."""
        dry = Applier(self.dyn, self.req.namespace, dry_run=True, users=self.users)
        labels = {LABEL_SERVICE: self.req.service}
        dry.read_ahead(o.obj for o in objects)
        for o in objects:
            dry.apply(o.obj, placeholder_owner("dry-run"), labels)

    def _run(self, phase: Phase, objects: List[render.Rendered], lifecycle: Lifecycle,
             earlier: Optional[resume.EarlierRun] = None) -> Dict[str, Any]:
        req = self.req
        name = phase["metadata"]["name"]
        writer = StatusWriter(self.phases, phase, objects, self.redactor)
        labels = {LABEL_PHASE: name, LABEL_SERVICE: req.service, LABEL_TYPE: req.type}
        applied: List[Applied] = []
        deadline = time.monotonic() + req.timeout
        # Imported here, as the status entries are: a check-mode run says nothing while it waits.
        from ansible_collections.lcm.openstack.plugins.module_utils.progress.lines import for_run  # pylint: disable=import-outside-toplevel
        lines = for_run(f"{req.service} {req.type}", self.redactor.redact, deadline)
        writer.lines = lines
        lines.begin(f"Phase {name}: {len(objects)} object(s) in {writer.waves} wave(s), timeout {req.timeout} s")
        for line in self.beside:  # what its pods wait for that a flow beside it makes
            lines.say(f"its pods wait for {line}")

        def changed(states: Dict[Any, Any]) -> None:
            writer.progress(states)
            lines.changed(states)

        def details() -> Dict[str, Any]:
            return {"changed": True, "phase": describe_phase(writer.phase), "objects_applied": actions(applied)}
        # Imported here: only a run that waits asks it (phase/gone.py).
        from ansible_collections.lcm.openstack.plugins.module_utils.phase.gone import asker  # pylint: disable=import-outside-toplevel
        gone_reason = asker(self.dyn, self.phases, req.namespace, name)
        with phase_record.recorded(self.dyn, writer, lifecycle, details, self.warnings):
            applier = Applier(self.dyn, req.namespace, users=self.users, earlier=earlier)
            owner = owner_reference(writer.phase)
            for index, wave in enumerate(selection.waves(objects)):
                writer.wave = index
                applier.read_ahead(o.obj for o in wave)  # as the earlier waves left them
                done = [applier.apply(o.obj, owner, labels) for o in wave]
                writer.decided(done)
                lines.wave(index, writer.waves, [(o.kind, o.name) for o in wave])
                applied += done
                if not req.wait and any(o.kind not in selection.CONFIG_KINDS for o in wave):
                    return {"changed": True, "phase": describe_phase(writer.phase),
                            "objects_applied": actions(applied), "diffs": applied}
                targets = [Target(a.api_version, a.kind, a.name, labelled=a.action != "shared")
                           for a in applied[-len(wave):]]
                result = wait_for(self.dyn, req.namespace, targets, f"{LABEL_PHASE}={name}",
                                  max(1.0, deadline - time.monotonic()), on_change=changed if lines.on else writer.progress,
                                  policy=req.failure_policy, pending=writer, on_gone=gone_reason)
                writer.record(result)
                lines.ended(result.states, result.timed_out)
                # A check that passed with a warning (failures.WARNING): shown, and kept in the Phase status.
                self.warnings += [f"{kind} {obj_name}: {r.message}" for (kind, obj_name), r in result.states.items()
                                  if r.reason == WARNING]
                if not (result.failed or result.timed_out) and req.type in OLD_PODS_GONE_FIRST:
                    self._old_pods_gone(wave, deadline, lines)
                if not (result.failed or result.timed_out) and backup_step.takes_backup(req.type, req.backup_ref, wave):
                    writer.backup_taken(req.backup_ref, backup_step.source_of(self.cronjob_step, wave, result))
                if result.failed:
                    # A namespace being deleted takes the pods first: their Job fails before it goes.
                    gone = gone_reason(result.failed[0])
                    if gone:
                        raise PhaseGone(gone)
                if result.failed or result.timed_out:
                    # Read why before stopping: a suspended Job's pods are deleted.
                    failure = writer.diagnose(self.dyn, result, req.timeout)
                    writer.fail(failure, stop_jobs(self.dyn, writer.phase))
                    raise PhaseFailed(writer.phase["status"]["message"], **details())
            writer.succeed()
            return {"changed": True, "phase": describe_phase(writer.phase),
                    "objects_applied": actions(applied), "diffs": applied}

    def _old_pods_gone(self, wave: List[render.Rendered], deadline: float, lines: Any) -> None:
        """A contract's release workloads are Current: wait, by watch, until no
        pod of the old release is left among them, terminating ones included
        (kube/old_pods.py), before its Jobs change the schema they use."""
        workloads = [(o.kind, o.name) for o in wave if o.kind in WORKLOAD_KINDS]
        if not workloads:
            return
        # Imported here: only a contract waits for the old release to go.
        from ansible_collections.lcm.openstack.plugins.module_utils.kube.old_pods import wait_gone  # pylint: disable=import-outside-toplevel
        left = wait_gone(self.dyn, self.req.namespace, workloads, max(1.0, deadline - time.monotonic()),
                         progress=lines.say if lines.on else None)
        if left and lines.on:
            lines.say("no pod of the old release is left")

    def _dry_run(self, body: Phase, objects: List[render.Rendered],
                 existing: Optional[Phase], attach: bool,
                 earlier: Optional[resume.EarlierRun] = None) -> Dict[str, Any]:
        if not attach:
            with api_call("create", "phases", self.req.namespace, handled=(409,)):
                self.phases.create(body=body, namespace=self.req.namespace, dry_run="All")
        owner = owner_reference(existing) if attach else placeholder_owner(body["metadata"]["name"])
        labels = {LABEL_PHASE: body["metadata"]["name"], LABEL_SERVICE: self.req.service,
                  LABEL_TYPE: self.req.type}
        dry = Applier(self.dyn, self.req.namespace, dry_run=True, users=self.users, earlier=earlier)
        dry.read_ahead(o.obj for o in objects)
        applied = [dry.apply(o.obj, owner, labels) for o in objects]
        return {"changed": True, "phase": {"name": body["metadata"]["name"],
                                           "namespace": self.req.namespace,
                                           "state": "Running" if attach else "Pending",
                                           "spec_hash": body["metadata"]["labels"][LABEL_SPEC_HASH]},
                "objects_applied": actions(applied), "diffs": applied}

    # -- Phase objects -----------------------------------------------------
    def _phase_resource(self) -> Any:
        return lcm_resource(self.dyn, PHASE_KIND)

    def _get(self, name: str) -> Optional[Phase]:
        with api_call("get", "phases", self.req.namespace, handled=(NotFoundError,)):
            return self.phases.get(name=name, namespace=self.req.namespace).to_dict()
        return None

    def _names_of_service_type(self) -> List[str]:
        selector = f"{LABEL_SERVICE}={self.req.service},{LABEL_TYPE}={self.req.type}"
        with api_call("list", "phases", self.req.namespace):
            items = self.phases.get(namespace=self.req.namespace, label_selector=selector).to_dict()
        return [p["metadata"]["name"] for p in items.get("items") or []]

    def _delete_and_wait(self, name: str, timeout: float = 120) -> None:
        """Delete in the foreground: the Phase goes once its objects are gone."""
        delete_and_wait(self.dyn, self.phases, name, self.req.namespace, "Foreground", timeout,
                        hint="its objects may carry finalizers (kubectl get all -l "
                             f"{LABEL_PHASE}={name} -n {self.req.namespace})")
