# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the traffic backends share: the plan of one drain or rollout, and the
server-side apply they write with.

The backends write under a field manager of their own, not the engine's
`lcm.openstack`, so the managed fields say which writes shifted traffic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.apply import _reason
from ansible_collections.lcm.openstack.plugins.module_utils.compat import (
    DynamicApiError, NotFoundError, ResourceNotFoundError,
)
from ansible_collections.lcm.openstack.plugins.module_utils.errors import PhaseError, api_error
from ansible_collections.lcm.openstack.plugins.module_utils.model import FIELD_MANAGER

TRAFFIC_MANAGER = f"{FIELD_MANAGER}-traffic"
BACKENDS = ("service_selector", "ingress_canary", "openshift_route")
ACTIONS = ("drain", "rollout")


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


def resource(dyn: Any, api_version: str, kind: str, hint: str = "") -> Any:
    try:
        return dyn.resources.get(api_version=api_version, kind=kind)
    except ResourceNotFoundError as exc:
        raise PhaseError(f"the cluster does not serve {kind} in {api_version}"
                         + (f"; {hint}" if hint else "")) from exc


def get(res: Any, name: str, namespace: str) -> Optional[Dict[str, Any]]:
    try:
        return res.get(name=name, namespace=namespace).to_dict()
    except NotFoundError:
        return None
    except DynamicApiError as exc:
        raise api_error(exc, "get", res.name, namespace) from exc


def apply(res: Any, body: Dict[str, Any], namespace: str, dry_run: bool = False) -> Dict[str, Any]:
    """Server-side apply under the traffic field manager, taking over what it sets."""
    kwargs = {"dry_run": "All"} if dry_run else {}
    try:
        return res.server_side_apply(body=body, name=body["metadata"]["name"], namespace=namespace,
                                     field_manager=TRAFFIC_MANAGER, force_conflicts=True, **kwargs).to_dict()
    except DynamicApiError as exc:
        if exc.status in (400, 422):
            raise PhaseError(f"the apiserver refused {body['kind']} {body['metadata']['name']}: "
                             f"{_reason(exc)}") from exc
        raise api_error(exc, "patch", res.name, namespace) from exc
