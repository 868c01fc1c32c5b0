# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Canary weights: the share of traffic, in percent, that goes to the canary
Service, on an nginx canary Ingress or on an OpenShift Route.

- ingress_canary keeps a second Ingress, `<ingress>-canary`, with the primary's
  rules pointed at the canary Service and nginx's `canary` and `canary-weight`
  annotations. It is owned by nothing, so it outlives the Phases that set it.
- openshift_route sets the weights of the Route's `spec.to` (the primary
  Service, 100 - N) and of the canary in `spec.alternateBackends` (N). The
  Route API is reached through the dynamic client only.

Each write applies the whole object as the traffic field manager wants it,
so a later apply with a smaller body never drops what an earlier one set.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional, Union

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import ObjectNotFound, PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import LABEL_SERVICE
from ansible_collections.lcm.openstack.plugins.module_utils.kube.objects import get_or_none
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.backends import Plan, apply, resource

CANARY = "nginx.ingress.kubernetes.io/canary"
CANARY_WEIGHT = "nginx.ingress.kubernetes.io/canary-weight"
INGRESS_CLASS = "kubernetes.io/ingress.class"
ROUTE_API = "route.openshift.io/v1"
NO_ROUTE_API = ("the openshift_route backend needs OpenShift's Route API (route.openshift.io/v1). Run it "
                "against OpenShift, or install the Route CRD; on other clusters use backend "
                "ingress_canary or service_selector")


def remaining(steps: List[int], current: int) -> List[int]:
    """The steps a rollout still has to take from the live weight."""
    return [s for s in steps if s > current]


def port_ref(port: Union[int, str, None]) -> Optional[Dict[str, Any]]:
    if port is None:
        return None
    if isinstance(port, int) or str(port).isdigit():
        return {"number": int(port)}
    return {"name": str(port)}


class WeightBackend:
    """Steps a canary weight; the subclasses know where the weight lives."""

    kind = ""

    def __init__(self, dyn: Any, req: Any) -> None:
        self.dyn, self.req = dyn, req
        self.live: Optional[Dict[str, Any]] = None

    # -- what subclasses provide -----------------------------------------------
    def load(self) -> None:
        raise NotImplementedError

    @property
    def name(self) -> str:
        raise NotImplementedError

    def weight(self) -> int:
        raise NotImplementedError

    def body(self, weight: int) -> Dict[str, Any]:
        raise NotImplementedError

    def matches(self, weight: int) -> bool:
        raise NotImplementedError

    def describe(self, weight: int) -> str:
        raise NotImplementedError

    # -- shared ------------------------------------------------------------------
    def plan(self) -> Plan:
        req = self.req
        self.load()
        current = self.weight()
        block = {"backend": req.backend, "target": req.target, "canary_service": self.canary,
                 "canary_port": req.canary_port, "from_weight": current}
        if req.action == "rollout":
            final = req.steps[-1]
            steps = remaining(list(req.steps), current) or ([] if self.matches(final) else [final])
            block.update(steps=list(req.steps), pause_seconds=req.pause_seconds, check=req.check_summary)
        else:
            final = 0
            steps = [0] if self.live is not None and current else []
            block.update(drain_grace_seconds=req.grace)
        plan = Plan(self.kind, self.name, {"weight": current, "canary_service": self.canary},
                    {"weight": final if steps else current, "canary_service": self.canary},
                    block, changed=bool(steps), steps=steps)
        if not steps:
            plan.note = self.describe(current) if self.live is not None else f"{self.kind} {self.name} does not exist"
        return plan

    @property
    def canary(self) -> Optional[str]:
        return self.req.canary_service

    def set_weight(self, weight: int, dry_run: bool = False) -> None:
        applied = apply(self.res, self.body(weight), self.req.namespace, dry_run=dry_run)
        if not dry_run:
            self.live = applied


class IngressCanary(WeightBackend):
    kind = "Ingress"

    def __init__(self, dyn: Any, req: Any) -> None:
        super().__init__(dyn, req)
        self.res = resource(dyn, "networking.k8s.io/v1", "Ingress")
        self.primary: Dict[str, Any] = {}

    @property
    def name(self) -> str:
        return f"{self.req.ingress}-canary"

    @property
    def canary(self) -> Optional[str]:
        """The canary Service; a drain without one keeps the live canary's."""
        if self.req.canary_service or self.live is None:
            return self.req.canary_service
        return canary_backend(self.live)

    def load(self) -> None:
        primary = get_or_none(self.res, self.req.ingress, self.req.namespace)
        if primary is None:
            raise ObjectNotFound(f"Ingress {self.req.ingress} not found in namespace {self.req.namespace}",
                                 self.req.namespace)
        self.primary = primary
        self.live = get_or_none(self.res, self.name, self.req.namespace)

    def weight(self) -> int:
        return ingress_weight(self.live)

    def body(self, weight: int) -> Dict[str, Any]:
        if not self.canary:
            raise PhaseError(f"canary_service is required: Ingress {self.name} does not exist yet")
        return canary_ingress(self.primary, self.name, self.canary, self.req.canary_port, weight,
                              {LABEL_SERVICE: self.req.service, "app.kubernetes.io/managed-by": "lcm.openstack"})

    def matches(self, weight: int) -> bool:
        if self.live is None:
            return False
        want, live = self.body(weight), self.live
        return ((live.get("spec") or {}).get("rules") == want["spec"]["rules"]
                and (live.get("spec") or {}).get("ingressClassName") == want["spec"].get("ingressClassName")
                and all((live["metadata"].get(k) or {}).get(a) == v
                        for k in ("annotations", "labels") for a, v in want["metadata"][k].items()))

    def describe(self, weight: int) -> str:
        return f"Ingress {self.name} sends {weight}% to Service {self.canary}"


def ingress_weight(canary: Optional[Dict[str, Any]]) -> int:
    """The live canary weight: 0 without a canary Ingress or its canary annotation."""
    annotations = ((canary or {}).get("metadata") or {}).get("annotations") or {}
    if annotations.get(CANARY) != "true":
        return 0
    try:
        return int(annotations.get(CANARY_WEIGHT) or 0)
    except ValueError:
        return 0


def canary_backend(canary: Dict[str, Any]) -> Optional[str]:
    for rule in (canary.get("spec") or {}).get("rules") or []:
        for path in (rule.get("http") or {}).get("paths") or []:
            name = ((path.get("backend") or {}).get("service") or {}).get("name")
            if name:
                return name
    return None


def canary_ingress(primary: Dict[str, Any], name: str, canary_service: str, canary_port: Union[int, str, None],
                   weight: int, labels: Dict[str, str]) -> Dict[str, Any]:
    """The canary Ingress: the primary's rules, every backend the canary Service."""
    spec = primary.get("spec") or {}
    rules = copy.deepcopy(spec.get("rules") or [])
    if not any((r.get("http") or {}).get("paths") for r in rules):
        raise PhaseError(f"Ingress {primary['metadata']['name']} has no http paths for a canary to copy")
    for rule in rules:
        for path in (rule.get("http") or {}).get("paths") or []:
            port = port_ref(canary_port) or ((path.get("backend") or {}).get("service") or {}).get("port")
            if not port:
                raise PhaseError(f"Ingress {primary['metadata']['name']} path {path.get('path', '/')} has no "
                                 "Service port to reuse; give canary_port")
            path["backend"] = {"service": {"name": canary_service, "port": port}}
    annotations = {CANARY: "true", CANARY_WEIGHT: str(weight)}
    primary_annotations = (primary.get("metadata") or {}).get("annotations") or {}
    if INGRESS_CLASS in primary_annotations:
        annotations[INGRESS_CLASS] = primary_annotations[INGRESS_CLASS]
    body: Dict[str, Any] = {
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": name, "namespace": primary["metadata"].get("namespace"),
                     "labels": dict(labels), "annotations": annotations},
        "spec": {"rules": rules},
    }
    if spec.get("ingressClassName"):
        body["spec"]["ingressClassName"] = spec["ingressClassName"]
    return body


class RouteWeights(WeightBackend):
    kind = "Route"

    def __init__(self, dyn: Any, req: Any) -> None:
        super().__init__(dyn, req)
        self.res = resource(dyn, ROUTE_API, "Route", hint=NO_ROUTE_API)

    @property
    def name(self) -> str:
        return self.req.route

    def load(self) -> None:
        self.live = get_or_none(self.res, self.name, self.req.namespace)
        if self.live is None:
            # Discovery is cached (in a file shared by processes): a Route CRD
            # removed since answers 404 too. Ask again before blaming the name.
            self.dyn.resources.invalidate_cache()
            self.res = resource(self.dyn, ROUTE_API, "Route", hint=NO_ROUTE_API)
            raise ObjectNotFound(f"Route {self.name} not found in namespace {self.req.namespace}",
                                 self.req.namespace)

    def weight(self) -> int:
        return route_weight(self.live or {}, self.canary)

    def body(self, weight: int) -> Dict[str, Any]:
        return route_body(self.live or {}, self.canary, weight)

    def matches(self, weight: int) -> bool:
        spec, want = (self.live or {}).get("spec") or {}, self.body(weight)["spec"]
        return (_backend(spec.get("to") or {}) == _backend(want["to"])
                and [_backend(b) for b in spec.get("alternateBackends") or []]
                == [_backend(b) for b in want["alternateBackends"]])

    def describe(self, weight: int) -> str:
        primary = (((self.live or {}).get("spec") or {}).get("to") or {}).get("name")
        canary = self.canary or "its alternate backends"
        return f"Route {self.name} sends {weight}% to Service {canary}, {100 - weight}% to Service {primary}"


def _backend(b: Dict[str, Any]) -> Any:
    return (b.get("kind") or "Service", b.get("name"), b.get("weight", 100))


def route_weight(route: Dict[str, Any], canary: Optional[str]) -> int:
    """The canary's share in percent of the Route's weights (all alternates without a canary name)."""
    spec = route.get("spec") or {}
    to = (spec.get("to") or {}).get("weight", 100)
    every = spec.get("alternateBackends") or []
    alternates = [b.get("weight", 100) for b in every if canary is None or b.get("name") == canary]
    total = to + sum(b.get("weight", 100) for b in every)
    return round(100 * sum(alternates) / total) if alternates and total else 0


def route_body(route: Dict[str, Any], canary: Optional[str], weight: int) -> Dict[str, Any]:
    """The Route's backends with the canary at `weight` and the primary at 100 - weight."""
    spec = route.get("spec") or {}
    to = spec.get("to") or {}
    alternates = []
    for b in spec.get("alternateBackends") or []:
        if canary is None:
            alternates.append({"kind": b.get("kind") or "Service", "name": b["name"], "weight": 0})
        elif b.get("name") != canary:
            alternates.append({"kind": b.get("kind") or "Service", "name": b["name"], "weight": b.get("weight", 100)})
    if canary is not None:
        alternates.append({"kind": "Service", "name": canary, "weight": weight})
    return {"apiVersion": ROUTE_API, "kind": "Route",
            "metadata": {"name": route["metadata"]["name"], "namespace": route["metadata"].get("namespace")},
            "spec": {"to": {"kind": to.get("kind") or "Service", "name": to.get("name"), "weight": 100 - weight},
                     "alternateBackends": alternates}}
