# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the two Service-selector backends (the gate and blue/green by track)
share: the Service they change, how a selector is written, and the wait on
the Service's EndpointSlices. They differ only in which selector they write
and how they describe it, which each says through ``state``."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.traffic.endpoints import Goal, Settled, SliceWatch
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.backends import Plan, apply, resource


class ServiceSelector:
    kind = "Service"

    def __init__(self, dyn: Any, req: Any, slice_label: Optional[str]) -> None:
        self.req = req
        self.name = req.selector_service
        self.services = resource(dyn, "v1", "Service")
        self.slices = SliceWatch(dyn, req.namespace, self.name, slice_label)

    def goal(self, endpoints: List[Any]) -> Goal:
        raise NotImplementedError

    def state(self, goal: Goal) -> str:
        """What the Service selects now, for the progress lines."""
        raise NotImplementedError

    def apply(self, selector: Dict[str, str], dry_run: bool = False) -> None:
        """Write the whole selector: spec.selector is one atomic field for
        server-side apply."""
        body = {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": self.name, "namespace": self.req.namespace},
                "spec": {"selector": selector}}
        apply(self.services, body, self.req.namespace, dry_run=dry_run)

    def settle(self, plan: Plan, timeout: float, note: Callable[[str], None]) -> Settled:
        """Wait by watch until the EndpointSlices list what the goal wants."""
        goal = self.goal(plan.endpoints)

        def progress(problems: List[str]) -> None:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            note(f"Service {self.name} {self.state(goal)}; waiting for the EndpointSlices: {problems[0]}{more}")
        return self.slices.wait(goal, timeout, on_change=progress)
