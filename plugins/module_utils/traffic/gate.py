# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A gate on the Service's own selector (selector_mode gate): drain and
rollout with only the labels a release already renders.

openstack-helm selects an API's pods by release_group, application and
component (helm-toolkit's labels snippet) and renders no `track` label, so
there are no two tracks to switch between. The gate closes instead: a drain
adds `lifecycle.openstack.org/traffic: drained` to the Service's selector,
a key no pod carries, and the Service selects nothing; a rollout removes the
key, so the Service selects exactly what the release renders again.

Nothing else remembers the release's selector: the gated selector holds it.
A Helm upgrade of the Service between drain and rollout (a client-side
three-way merge, Helm 3's and the roles' Helm 4 way) changes the chart's
keys and leaves the gate key, which neither manifest has, alone; the rollout
then restores the upgraded selector.

A rollout first checks that the release's selector picks at least one pod,
and fails at once when it picks none (the Service is left as it was). When
the pods do not get Ready in time, the selector stays open: the Service
selects the release's pods, and is never gated again by a failed rollout.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.traffic.endpoints import (
    Endpoint, Goal, Settled, selector_text, unmet,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.backends import (
    GATE_LABEL, GATED, Plan, live_selector, own_selector,
)
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.service import ServiceSelector


class GateBackend(ServiceSelector):
    with_track = False

    def __init__(self, dyn: Any, req: Any) -> None:
        super().__init__(dyn, req, None)
        self.own: Dict[str, str] = {}

    def goal(self, endpoints: List[Endpoint]) -> Goal:
        if self.req.action == "rollout":
            return Goal(GATE_LABEL, None, min_ready=self.req.min_ready, rollout=True, selector=self.own)
        return Goal(GATE_LABEL, GATED, gone=frozenset(e.pod for e in endpoints), selector=self.own)

    def plan(self) -> Plan:
        req = self.req
        selector = live_selector(self.services, self.name, req.namespace)
        self.own = own_selector(selector)
        if not self.own:
            raise PhaseError(f"Service {self.name} selects only by {selector_text(selector)}, keys a drain sets: "
                             "there is no release selector to restore; fix the Service's selector")
        current = selector.get(GATE_LABEL)
        if req.action == "rollout":
            after = dict(self.own)
            self._check_selects(selector)
        else:
            after = dict(self.own, **{GATE_LABEL: GATED})
        endpoints = self.slices.snapshot()
        block = {"backend": "service_selector", "target": self.name, "selector_label": GATE_LABEL,
                 "track": GATED if req.action == "drain" else None, "from_track": current}
        if req.action == "rollout":
            block["min_ready"] = req.min_ready
        else:
            block["drain_grace_seconds"] = req.grace
        plan = Plan(self.kind, self.name, {"selector": selector}, {"selector": after}, block,
                    changed=True, endpoints=endpoints)
        if selector == after and not unmet(self.goal(endpoints), endpoints):
            plan.changed, plan.note = False, self.message(endpoints)
        return plan

    def _check_selects(self, selector: Dict[str, str]) -> None:
        """A rollout to a selector that picks no pod would wait its whole
        timeout for nothing; say so now, before anything changes."""
        if not self.slices.list_pods(self.own):
            state = "stays drained" if selector != self.own else "is left as it is"
            raise PhaseError(f"Service {self.name}'s own selector ({selector_text(self.own)}) selects no pod: "
                             f"there is nothing to roll out to, and the Service {state}. Is the release "
                             "deployed, with at least one replica?")

    def state(self, goal: Goal) -> str:
        return self._state()

    def _state(self) -> str:
        if self.req.action == "drain":
            return f"is gated ({GATE_LABEL}={GATED})"
        return f"selects the release's pods ({selector_text(self.own)})"

    def setting(self, plan: Plan) -> str:
        if self.req.action == "drain":
            return f"Service {plan.name}: closing the gate, adding {GATE_LABEL}={GATED} to its selector"
        return f"Service {plan.name}: opening the gate, restoring the selector {selector_text(self.own)}"

    def describe(self, selector: Dict[str, str]) -> str:
        return "gated" if GATE_LABEL in selector else selector_text(selector)

    def timeout_message(self, plan: Plan, settled: Settled, timeout: float) -> str:
        problems = list(settled.problems)
        if problems and not problems[-1].startswith("EndpointSlice"):
            problems[-1] += ": " + self.slices.pods_selected(self.own)
        return (f"timed out after {timeout:.0f}s waiting for the EndpointSlices of Service {self.name} "
                f"({self._state()}): " + "; ".join(problems))

    @staticmethod
    def after_failed_rollout(_plan: Plan) -> Tuple[Optional[Dict[str, str]], str]:
        """A rollout that timed out keeps the gate open: closing it again would
        leave the Service selecting nothing."""
        return None, "; the gate stays open: the Service selects the release's pods, which get traffic once Ready"

    def message(self, endpoints: List[Endpoint]) -> str:
        if self.req.action == "drain":
            left = f"{len(endpoints)} endpoint(s) listed" if endpoints else "no endpoint left"
            return f"Service {self.name} is gated ({GATE_LABEL}={GATED}): drained, {left}"
        ready = len({e.pod for e in endpoints if e.ready and self.goal(endpoints).wants(e)})
        return f"Service {self.name} selects the release's pods: {ready} ready endpoint(s)"
