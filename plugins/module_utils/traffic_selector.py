# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Blue/green by Service selector: the Service selects the pods of one track.

A rollout sets `spec.selector[<label>]` to the new track; a drain sets it to
the fallback track, or to a value no pod carries. The change is written with
server-side apply under the traffic field manager. `spec.selector` is an
atomic map, so the whole selector is applied with the one key changed, and
the manager then owns all of it.

The change is done when the EndpointSlices say so: a rollout waits until
every ready endpoint is a pod of the new track and there are `min_ready` of
them; a drain until none of the pods listed before is listed any more. A
rollout that does not get there puts the previous selector back, so a
Service is never left selecting nothing; a drain that does not get there
stays drained.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.endpoints import (
    Endpoint, Goal, Settled, SliceWatch, unmet,
)
from ansible_collections.lcm.openstack.plugins.module_utils.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.traffic_backends import Plan, apply, get, resource

# The selector value of a drain without a fallback: no pod carries it.
DRAINED = "lcm-drained"


class SelectorBackend:
    kind = "Service"

    def __init__(self, dyn: Any, req: Any) -> None:
        self.req = req
        self.name = req.selector_service
        self.services = resource(dyn, "v1", "Service")
        self.slices = SliceWatch(dyn, req.namespace, self.name, req.selector_label)

    @property
    def value(self) -> str:
        """The selector value this run sets."""
        if self.req.action == "rollout":
            return self.req.track
        return self.req.fallback_track or DRAINED

    def goal(self, endpoints: List[Endpoint]) -> Goal:
        req = self.req
        if req.action == "rollout":
            return Goal(req.selector_label, self.value, min_ready=req.min_ready, rollout=True)
        return Goal(req.selector_label, self.value, gone=frozenset(e.pod for e in endpoints if e.track != self.value))

    def plan(self) -> Plan:
        req, label = self.req, self.req.selector_label
        svc = get(self.services, self.name, req.namespace)
        if svc is None:
            raise PhaseError(f"Service {self.name} not found in namespace {req.namespace}")
        selector = dict((svc.get("spec") or {}).get("selector") or {})
        if not selector:
            raise PhaseError(f"Service {self.name} has no selector: its endpoints are managed outside "
                             "Kubernetes, so the service_selector backend cannot move its traffic")
        current = selector.get(label)
        endpoints = self.slices.snapshot()
        block = {"backend": "service_selector", "target": self.name, "selector_label": label,
                 "track": req.track, "from_track": current}
        if req.action == "rollout":
            block["min_ready"] = req.min_ready
        else:
            block.update(fallback_track=req.fallback_track, drain_grace_seconds=req.grace)
        plan = Plan(self.kind, self.name, {"selector": selector}, {"selector": dict(selector, **{label: self.value})},
                    block, changed=True, endpoints=endpoints)
        if req.action == "drain" and req.track and current not in (None, req.track, self.value):
            plan.changed, plan.after = False, plan.before
            plan.note = (f"Service {self.name} selects {label}={current}: pods with {label}={req.track} "
                         "get no traffic")
        elif current == self.value and not unmet(self.goal(endpoints), endpoints):
            plan.changed, plan.note = False, self.message(endpoints)
        return plan

    def apply(self, selector: Dict[str, str], dry_run: bool = False) -> None:
        body = {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": self.name, "namespace": self.req.namespace},
                "spec": {"selector": selector}}
        apply(self.services, body, self.req.namespace, dry_run=dry_run)

    def settle(self, plan: Plan, timeout: float, note: Callable[[str], None]) -> Settled:
        """Wait by watch until the EndpointSlices list what the new selector picks."""
        goal = self.goal(plan.endpoints)

        def progress(problems: List[str]) -> None:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            note(f"Service {self.name} selects {goal.label}={goal.value}; waiting for the "
                 f"EndpointSlices: {problems[0]}{more}")
        return self.slices.wait(goal, timeout, on_change=progress)

    def timeout_message(self, plan: Plan, settled: Settled, timeout: float) -> str:
        label = self.req.selector_label
        problems = list(settled.problems)
        if problems and not problems[-1].startswith("EndpointSlice"):
            problems[-1] += ": " + self.slices.pods_selected(plan.after["selector"])
        return (f"timed out after {timeout:.0f}s waiting for the EndpointSlices of Service {self.name} "
                f"(selects {label}={self.value}): " + "; ".join(problems))

    def message(self, endpoints: List[Endpoint]) -> str:
        label = self.req.selector_label
        if self.req.action == "drain" and not self.req.fallback_track:
            left = f"{len(endpoints)} endpoint(s) listed" if endpoints else "no endpoint left"
            return f"Service {self.name} selects {label}={DRAINED}: drained, {left}"
        ready = len({e.pod for e in endpoints if e.ready and e.track == self.value})
        return f"Service {self.name} selects {label}={self.value}: {ready} ready endpoint(s)"


def endpoints_out(endpoints: List[Endpoint]) -> List[Dict[str, Optional[Any]]]:
    return [e.as_dict() for e in endpoints]
