# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drain a service's traffic, or roll it out, and record the run as a Phase.

Each run that changes something is a Phase of type trafficdrain or
trafficrollout, with `spec.traffic` saying what moved, from where (the live
track or weight when it started) and to where; it shows in the Phase history
and the ServiceLifecycle record like any other phase. A run that finds the
traffic where it should be creates no Phase and returns changed=false.

Three backends, none of which needs a traffic controller: the Service
selector, an nginx canary Ingress and an OpenShift Route (weights,
traffic/weights.py). The Service selector has two modes: a gate on the
release's own selector (traffic/gate.py, the default: it works with the
labels any chart renders) and blue/green by a `track` label
(traffic/selector.py, for charts that render one). Between the weight steps a run
pauses and checks (an HTTP GET, or a test Phase); a failed check sends the
weight back to 0.
"""

from __future__ import annotations

import dataclasses
import time
import urllib.parse
from typing import Any, Callable, Dict, List, Optional, Sequence

from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import Phase
from ansible_collections.lcm.openstack.plugins.module_utils.kube.deletion import delete_and_wait
from ansible_collections.lcm.openstack.plugins.module_utils.kube.crd import lcm_resource
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError, ObjectNotFound, PhaseError, PhaseFailed
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.record import Lifecycle
from ansible_collections.lcm.openstack.plugins.module_utils.kube import namespaces
from ansible_collections.lcm.openstack.plugins.module_utils.phase import record as phase_record
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import (
    LABEL_SPEC_HASH, PHASE_KIND,
)
from ansible_collections.lcm.openstack.plugins.module_utils.phase.status import StatusWriter
from ansible_collections.lcm.openstack.plugins.module_utils.common.phase_view import describe_phase
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor
from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import (
    PhaseRequest, Source, build_spec, digest, phase_body, spec_hash,
)
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.check import URL_CHECK_TIMEOUT, http_check
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.backends import Plan
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.gate import GateBackend
from ansible_collections.lcm.openstack.plugins.module_utils.traffic import release_target
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.request import TrafficRequest
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.target import KIND, Target
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.target import summary as summary_of
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.selector import (
    SelectorBackend, endpoints_out,
)
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.weights import IngressCanary, RouteWeights

TEST_PHASE_TIMEOUT = 600


class TrafficFailed(PhaseError):
    """The shift ran and did not get where it should; `reason` goes to the Phase."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def backend_for(dyn: Any, req: TrafficRequest) -> Any:
    if req.backend == "service_selector":
        return GateBackend(dyn, req) if req.selector_mode == "gate" else SelectorBackend(dyn, req)
    return {"ingress_canary": IngressCanary, "openshift_route": RouteWeights}[req.backend](dyn, req)


def step_label(weight: int, steps: Sequence[int]) -> str:
    index = list(steps).index(weight) + 1 if weight in steps else len(steps)
    return f"weight {weight}% (step {index}/{len(steps)})"


def check_phase_name(release: str, parent: str, step: int) -> str:
    """One test Phase per traffic Phase and step, so every step's check runs."""
    return f"{release[:38].rstrip('-')}-test-{digest([parent, step])[:8]}"


class TrafficRunner:
    def __init__(self, dyn: Any, req: TrafficRequest, check_mode: bool = False,
                 pause: Callable[[float], None] = time.sleep, flow_ends_after: bool = False) -> None:
        self.dyn, self.req, self.check_mode, self.pause = dyn, req, check_mode, pause
        # The caller ends the flow after a successful run, in this process
        # (lifecycle/flow_end.py), and refreshes the UpdateStatus then: once for both.
        self.flow_ends_after = flow_ends_after
        self.redactor = Redactor()
        if req.check and req.check.url:
            password = urllib.parse.urlsplit(req.check.url).password
            if password:
                self.redactor.add(password)
        if req.check and req.check.test:
            self.redactor.add_values(req.check.test.source.values or {})
        self.phases = lcm_resource(dyn, PHASE_KIND)
        self.backend: Any = None
        self.writer: Optional[StatusWriter] = None

    def run(self) -> Dict[str, Any]:
        """Drain or roll out; every error message leaves with credentials masked."""
        try:
            return self._run()
        except ObjectNotFound as exc:
            # Not found, or its whole namespace is missing: asked only now, once.
            gone = namespaces.missing(self.dyn, exc.namespace)
            if gone is None:
                raise
            raise gone from exc
        except LcmError as exc:
            self.redactor.scrub(exc)
            raise

    def _run(self) -> Dict[str, Any]:
        req = self.req
        req.validate()
        # No object named: the one the release renders for the service (traffic/target.py).
        chosen = release_target.resolve(self.dyn, req) if not req.target else \
            Target(KIND[req.backend], req.target or "", "given")
        if chosen.nothing:
            return release_target.skipped(self.dyn, req, chosen, self.check_mode)
        self.backend = backend_for(self.dyn, req)
        plan = self.backend.plan()
        result: Dict[str, Any] = {"changed": False, "phase": None, "backend": req.backend,
                                  "before": plan.before, "after": plan.after, "steps_done": [],
                                  "message": plan.note, "target": summary_of(chosen),
                                  "diff": {"before_header": f"{plan.key} (live)", "before": plan.before,
                                           "after_header": f"{plan.key} ({req.action})", "after": plan.after}}
        if req.backend == "service_selector":
            result["endpoints"] = endpoints_out(plan.endpoints, self.backend.with_track)
        if not plan.changed:
            return result
        body = self._body(plan)
        name = body["metadata"]["name"]
        phase_record.refuse_concurrent(self.phases, req.namespace, req.service, (name,), "moving its traffic")
        if self.check_mode:
            return self._dry_run(body, plan, result)
        # A Phase of this name ran the same transition before (the traffic
        # has moved since) or was interrupted: this is a new run.
        delete_and_wait(self.dyn, self.phases, name, req.namespace, "Foreground", 120)
        return self._record(phase_record.create(self.phases, body, req.service), plan, result)

    # -- the Phase -----------------------------------------------------------------
    def _body(self, plan: Plan) -> Phase:
        req = self.req
        preq = PhaseRequest(type=req.phase_type, service=req.service, release=req.release,
                            namespace=req.namespace, source=Source(manifests=[]),
                            target_version=req.target_version or "", blocks={"traffic": plan.block},
                            timeout=req.timeout,
                            # once per flow: the same move in a later flow is a new Phase
                            flow_id=Lifecycle(self.dyn, req.namespace, req.service, req.release).running_flow())
        spec = build_spec(preq, [])
        return phase_body(preq, spec, spec_hash(spec))

    def _record(self, phase: Phase, plan: Plan, result: Dict[str, Any]) -> Dict[str, Any]:
        req = self.req
        writer = self.writer = StatusWriter(self.phases, phase, [], self.redactor)
        from ansible_collections.lcm.openstack.plugins.module_utils.progress.lines import for_run  # pylint: disable=import-outside-toplevel
        writer.lines = for_run(f"{req.service} {req.phase_type}", self.redactor.redact, time.monotonic() + req.timeout)
        lifecycle = Lifecycle(self.dyn, req.namespace, req.service, req.release)
        warnings: List[str] = []
        try:
            with phase_record.recorded(self.dyn, writer, lifecycle, lambda: self._failed(result, writer), warnings,
                                       refresh_if_succeeded=not self.flow_ends_after):
                result["changed"] = True
                try:
                    if req.backend == "service_selector":
                        message = self._select(plan, writer, result)
                    else:
                        message = self._weigh(plan, writer, lifecycle, result)
                except TrafficFailed as exc:
                    writer.failed(exc.reason, str(exc), plan.key)
                    raise PhaseFailed(writer.phase["status"]["message"], **self._failed(result, writer)) from exc
                writer.succeeded(message)
                result.update(phase=describe_phase(writer.phase), message=message)
                return result
        finally:
            if warnings:  # the refreshes at the start and the end
                result.setdefault("warnings", []).extend(warnings)

    @staticmethod
    def _failed(result: Dict[str, Any], writer: StatusWriter) -> Dict[str, Any]:
        details = {k: v for k, v in result.items() if k not in ("message", "diff")}
        return dict(details, phase=describe_phase(writer.phase))

    # -- the backends --------------------------------------------------------------
    def _select(self, plan: Plan, writer: StatusWriter, result: Dict[str, Any]) -> str:
        req, backend = self.req, self.backend
        writer.note(backend.setting(plan))
        if plan.after["selector"] != plan.before["selector"]:  # else only the endpoints lag behind
            backend.apply(plan.after["selector"])
        settled = backend.settle(plan, req.timeout, writer.note)
        result["endpoints"] = endpoints_out(settled.endpoints, backend.with_track)
        if not settled.met:
            message = backend.timeout_message(plan, settled, req.timeout)
            if req.action == "rollout":
                back, why = backend.after_failed_rollout(plan)
                if back is not None:
                    backend.apply(back)
                    result["after"] = {"selector": back}
                message += why
            raise TrafficFailed(message, "Timeout")
        message = backend.message(settled.endpoints)
        if req.action == "drain" and req.grace:
            writer.note(f"{message}; waiting {req.grace}s for open connections to finish")
            self.pause(req.grace)
        return message

    def _weigh(self, plan: Plan, writer: StatusWriter, lifecycle: Lifecycle, result: Dict[str, Any]) -> str:
        req, backend = self.req, self.backend
        done: List[int] = result["steps_done"]
        if req.action == "drain":
            backend.set_weight(0)
            done.append(0)
            if req.grace:
                writer.note(f"{backend.describe(0)}; waiting {req.grace}s for open connections to finish")
                self.pause(req.grace)
            return backend.describe(0)
        for weight in plan.steps:
            at = step_label(weight, req.steps)
            writer.note(f"setting {at}")
            backend.set_weight(weight)
            done.append(weight)
            result["after"] = dict(result["after"], weight=weight)
            last = weight == plan.steps[-1]
            if req.pause_seconds and (req.check or not last):
                writer.note(f"{at}, pausing {req.pause_seconds}s" + (" before the check" if req.check else ""))
                self.pause(req.pause_seconds)
            if req.check:
                writer.note(f"{at}, checking: {req.check.summary}")
                reason = self._check(writer.phase["metadata"]["name"], len(done), lifecycle)
                if reason:
                    raise TrafficFailed(self._back_to_zero(f"check failed at {at}: {reason}", result),
                                        "CheckFailed")
        return f"{backend.describe(plan.steps[-1])} after {len(done)} step(s)"

    def _back_to_zero(self, message: str, result: Dict[str, Any]) -> str:
        try:
            self.backend.set_weight(0)
        except LcmError as exc:
            return f"{message}; setting the weight back to 0% failed too: {exc}"
        result["after"] = dict(result["after"], weight=0)
        return f"{message}; weight set back to 0%"

    def _check(self, parent: str, step: int, lifecycle: Lifecycle) -> Optional[str]:
        """None when the check passes, else why it did not."""
        check = self.req.check
        if check is None:
            return None
        if check.test is None:
            return http_check(check.url or "", check.expect_status, check.timeout or URL_CHECK_TIMEOUT, check.opener)
        test = dataclasses.replace(check.test, name=check_phase_name(self.req.release, parent, step),
                                   timeout=check.timeout or check.test.timeout or TEST_PHASE_TIMEOUT)
        # Imported here: only a check run as a test phase needs the phase engine
        # (its apply, waves, Helm rendering), and a module loads what its call uses.
        from ansible_collections.lcm.openstack.plugins.module_utils.phase.runner import PhaseRunner  # pylint: disable=import-outside-toplevel
        runner = None
        try:
            runner = PhaseRunner(self.dyn, test, parent=parent)
            runner.absent()  # an earlier run of this traffic Phase left it
            runner.present()
            return None
        except LcmError as exc:
            return str(exc)
        finally:
            if runner is not None:
                for secret in runner.redactor.secrets:
                    self.redactor.add(secret)
            if self.writer is not None:
                lifecycle.phase_started(self.writer.phase)  # the traffic Phase is the current one again

    # -- check mode, and Phase objects ------------------------------------------------
    def _dry_run(self, body: Phase, plan: Plan, result: Dict[str, Any]) -> Dict[str, Any]:
        with api_call("create", "phases", self.req.namespace, handled=(409,)):
            self.phases.create(body=body, namespace=self.req.namespace, dry_run="All")
        if self.req.backend == "service_selector":
            if plan.after["selector"] != plan.before["selector"]:
                self.backend.apply(plan.after["selector"], dry_run=True)
        else:
            self.backend.set_weight(plan.steps[-1], dry_run=True)
        result.update(changed=True, steps_done=[],
                      phase={"name": body["metadata"]["name"], "namespace": self.req.namespace,
                             "type": self.req.phase_type, "state": "Pending",
                             "spec_hash": body["metadata"]["labels"][LABEL_SPEC_HASH]})
        return result
