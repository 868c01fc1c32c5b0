# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the traffic backends share: the plan of one drain or rollout, and the
server-side apply they write with.

The backends write under a field manager of their own, not the engine's
`lcm.openstack`, so the managed fields say which writes shifted traffic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import ResourceNotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import ObjectNotFound, PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import (
    FIELD_MANAGER, TRAFFIC_BACKENDS, TRAFFIC_GATE_LABEL)
from ansible_collections.lcm.openstack.plugins.module_utils.kube.objects import applied, get_or_none

TRAFFIC_MANAGER = f"{FIELD_MANAGER}-traffic"
BACKENDS = TRAFFIC_BACKENDS
ACTIONS = ("drain", "rollout")
# How the service_selector backend moves traffic: gate (the release's own
# selector, closed by a key no pod carries) or track (blue/green on a label).
SELECTOR_MODES = ("gate", "track")
# The key a gate-mode drain adds to a Service's selector, and its value; no
# pod carries it, so the Service selects nothing until a rollout removes it.
GATE_LABEL = TRAFFIC_GATE_LABEL
GATED = "drained"
# The value a track-mode drain without a fallback sets: no pod carries it.
DRAINED = "lcm-drained"


@dataclass
class Plan:
    """What a run finds and would change, before anything is written."""

    kind: str  # of the object written: Service, Ingress or Route
    name: str
    before: Dict[str, Any]  # the selector, or the weight, as the module returns it
    after: Dict[str, Any]
    block: Dict[str, Any]  # the Phase's spec.traffic, as option names (see spec.TYPE_BLOCKS)
    changed: bool
    steps: List[int] = field(default_factory=list)  # weights still to set (weight backends)
    endpoints: List[Any] = field(default_factory=list)  # as listed now (service_selector)
    note: str = ""  # why nothing has to change

    def __post_init__(self) -> None:
        self.block = {k: v for k, v in self.block.items() if v is not None}

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.name}"


def own_selector(selector: Dict[str, str]) -> Dict[str, str]:
    """The release's selector: the Service's without what a drain added (the
    gate key, or a track-mode drain's `lcm-drained` value), so each mode can
    roll out after a drain in the other."""
    return {k: v for k, v in selector.items() if k != GATE_LABEL and v != DRAINED}


def live_selector(services: Any, name: str, namespace: str) -> Dict[str, str]:
    """The selector of a Service, which must exist and select pods."""
    svc = get_or_none(services, name, namespace)
    if svc is None:
        raise ObjectNotFound(f"Service {name} not found in namespace {namespace}", namespace)
    selector = dict((svc.get("spec") or {}).get("selector") or {})
    if not selector:
        raise PhaseError(f"Service {name} has no selector: its endpoints are managed outside "
                         "Kubernetes, so the service_selector backend cannot move its traffic")
    return selector


def resource(dyn: Any, api_version: str, kind: str, hint: str = "") -> Any:
    try:
        return dyn.resources.get(api_version=api_version, kind=kind)
    except ResourceNotFoundError as exc:
        raise PhaseError(f"the cluster does not serve {kind} in {api_version}"
                         + (f"; {hint}" if hint else "")) from exc


def apply(res: Any, body: Dict[str, Any], namespace: str, dry_run: bool = False) -> Dict[str, Any]:
    """Server-side apply under the traffic field manager, taking over what it sets."""
    return applied(res, body, namespace, TRAFFIC_MANAGER, dry_run)
