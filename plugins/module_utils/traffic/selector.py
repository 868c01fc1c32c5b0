# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Blue/green by Service selector (selector_mode track): the Service selects
the pods of one track.

A rollout sets `spec.selector[<label>]` to the new track; a drain sets it to
the fallback track, or to a value no pod carries. The change is written with
server-side apply under the traffic field manager. `spec.selector` is an
atomic map, so the whole selector is applied with the one key changed, and
the manager then owns all of it.

The mode needs pods that carry the label: when the pods the Service's other
keys select carry none, it fails at once and names the gate mode, instead
of waiting its timeout for pods that will never come.

The change is done when the EndpointSlices say so: a rollout waits until
every ready endpoint is a pod of the new track and there are `min_ready` of
them; a drain until none of the pods listed before is listed any more. A
rollout that does not get there puts the previous selector back when that
one had ready endpoints, and otherwise keeps the new one: a Service is never
sent back to selecting nothing; a drain that does not get there stays
drained.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.traffic.endpoints import (
    Endpoint, Goal, Settled, selector_text, unmet,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.backends import (
    DRAINED, Plan, live_selector, own_selector,
)
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.service import ServiceSelector

__all__ = ["DRAINED", "SelectorBackend", "endpoints_out"]


class SelectorBackend(ServiceSelector):
    with_track = True

    def __init__(self, dyn: Any, req: Any) -> None:
        super().__init__(dyn, req, req.selector_label)

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
        selector = live_selector(self.services, self.name, req.namespace)
        current = selector.get(label)
        self._check_labelled(selector)
        endpoints = self.slices.snapshot()
        block = {"backend": "service_selector", "target": self.name, "selector_label": label,
                 "track": req.track, "from_track": current}
        if req.action == "rollout":
            block["min_ready"] = req.min_ready
        else:
            block.update(fallback_track=req.fallback_track, drain_grace_seconds=req.grace)
        after = dict(own_selector(selector), **{label: self.value})
        plan = Plan(self.kind, self.name, {"selector": selector}, {"selector": after},
                    block, changed=True, endpoints=endpoints)
        if req.action == "drain" and req.track and current not in (None, req.track, self.value):
            plan.changed, plan.after = False, plan.before
            plan.note = (f"Service {self.name} selects {label}={current}: pods with {label}={req.track} "
                         "get no traffic")
        elif selector == after and not unmet(self.goal(endpoints), endpoints):
            plan.changed, plan.note = False, self.message(endpoints)
        return plan

    def _check_labelled(self, selector: Dict[str, str]) -> None:
        """Fail now when no pod the Service could select carries the label:
        the chart does not render it, and no track will ever get traffic."""
        label = self.req.selector_label
        base = {k: v for k, v in own_selector(selector).items() if k != label}
        pods = self.slices.list_pods(base)
        if pods and not any(label in ((p.get("metadata") or {}).get("labels") or {}) for p in pods):
            raise PhaseError(
                f"selector_mode track cannot work on Service {self.name}: none of the {len(pods)} pod(s) it "
                f"selects ({selector_text(base) or 'every pod'}) carries the label {label} (the chart does not "
                "render it); use selector_mode gate, which needs only the labels the release already has")

    def state(self, goal: Goal) -> str:
        return f"selects {goal.label}={goal.value}"

    def setting(self, plan: Plan) -> str:
        return f"Service {plan.name}: setting the selector {self.req.selector_label}={self.value}"

    def timeout_message(self, plan: Plan, settled: Settled, timeout: float) -> str:
        label = self.req.selector_label
        problems = list(settled.problems)
        if problems and not problems[-1].startswith("EndpointSlice"):
            problems[-1] += ": " + self.slices.pods_selected(plan.after["selector"])
        return (f"timed out after {timeout:.0f}s waiting for the EndpointSlices of Service {self.name} "
                f"(selects {label}={self.value}): " + "; ".join(problems))

    def describe(self, selector: Dict[str, str]) -> str:
        label = self.req.selector_label
        value = selector.get(label)
        return f"{label}={value}" if value else f"no {label}"

    def after_failed_rollout(self, plan: Plan) -> Tuple[Optional[Dict[str, str]], str]:
        """What a rollout that timed out leaves: the previous selector when it
        had ready endpoints (it was serving), else the new one, so a Service is
        never sent back to selecting nothing. The selector to write, and why."""
        before, after = plan.before["selector"], plan.after["selector"]
        if any(e.ready for e in plan.endpoints) and before != after:
            return before, f"; the selector is back to {self.describe(before)}"
        return None, (f"; the selector stays on {self.describe(after)}: the Service had no ready endpoint "
                      "before either, and these pods get traffic once they are Ready")

    def message(self, endpoints: List[Endpoint]) -> str:
        label = self.req.selector_label
        if self.req.action == "drain" and not self.req.fallback_track:
            left = f"{len(endpoints)} endpoint(s) listed" if endpoints else "no endpoint left"
            return f"Service {self.name} selects {label}={DRAINED}: drained, {left}"
        ready = len({e.pod for e in endpoints if e.ready and e.track == self.value})
        return f"Service {self.name} selects {label}={self.value}: {ready} ready endpoint(s)"


def endpoints_out(endpoints: List[Endpoint], with_track: bool = True) -> List[Dict[str, Optional[Any]]]:
    return [e.as_dict(with_track) for e in endpoints]
