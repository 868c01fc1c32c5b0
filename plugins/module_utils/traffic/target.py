# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The object a service's traffic moves, read from what its release renders.

A flow given no traffic_target does not guess a name (`<service>-api` is
keystone's, not neutron's `neutron-server`): the Service is the one the
deployed release renders for the service's own endpoint, from the release's
manifest and its values with the chart's defaults.

- Candidates: the rendered Services that select pods (a selector, and not
  ExternalName) whose selector picks the pod template of a Deployment,
  StatefulSet, DaemonSet or ReplicaSet of the release; when none picks one
  (pods made some other way), every Service that selects pods
  (kube/release_services.py).
- No Service that selects pods: nothing to route (node agents such as
  openvswitch and libvirt); the caller skips the traffic step, and says why.
- One candidate: it.
- Several: openstack-helm names each Service after a host of an endpoint
  type (`endpoints.<type>.hosts`), and clients reach a service at its
  internal host (`hosts.internal`, else `hosts.default`). Endpoint types are
  tried in tiers, and the first tier whose internal hosts name candidates
  decides: the types the chart registers in keystone (named by its
  ks-service and ks-endpoints Jobs' OS_SERVICE_TYPE when the release renders
  them; the flows install releases with their jobs off, so otherwise the
  types with an `api` port, the port helm-toolkit's ks-endpoints registers),
  then the types whose `name` is the service's or the release's, then every
  type. Two candidates in the deciding tier, or none in any, is an error that
  lists them and names the input that settles it.
- ingress_canary and openshift_route move an Ingress or a Route: the one the
  release renders in front of that Service; of several, the one named after
  the endpoint's public host.

Pure: the objects and values come in, a Target or a PhaseError goes out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.release_services import (
    candidates, name_of, of_kind, pod_labels,
)

# The keystone registration Jobs of helm-toolkit, and the env that names each type.
KEYSTONE_JOBS = re.compile(r"-ks-(service|endpoints)$")
SERVICE_TYPE_ENV = "OS_SERVICE_TYPE"
_IP = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$")
# What the flows call the choice, and what the module calls it for each backend.
FLOW_INPUT = "traffic_target"
OPTION = {"service_selector": "selector_service", "ingress_canary": "ingress", "openshift_route": "route"}
KIND = {"service_selector": "Service", "ingress_canary": "Ingress", "openshift_route": "Route"}
PLURAL = {"Service": "Services", "Ingress": "Ingresses", "Route": "Routes"}


@dataclass(frozen=True)
class Target:
    """The object to move (`name` empty: nothing to route) and why."""

    kind: str
    name: str
    why: str

    @property
    def nothing(self) -> bool:
        return not self.name


def choose(backend: str, service: str, release: str, objects: Sequence[Mapping[str, Any]],
           values: Mapping[str, Any]) -> Target:
    """The object `backend` moves for `service`, from its release's render."""
    services = of_kind(objects, "Service")
    found = candidates(services, pod_labels(objects))
    if not found:
        what = "no Service" if not services else "no Service that selects pods"
        return Target(KIND[backend], "", f"release {release} renders {what}: nothing to route")
    endpoints = values.get("endpoints") if isinstance(values.get("endpoints"), Mapping) else {}
    names = [name_of(s) for s in found]
    if len(names) == 1:
        chosen, why = names[0], f"the only Service of release {release} that selects its pods"
    else:
        chosen, why = _by_endpoints(backend, service, release, names, endpoints, objects)
    if backend == "service_selector":
        return Target("Service", chosen, why)
    return _in_front(backend, release, chosen, endpoints, objects)


def _by_endpoints(backend: str, service: str, release: str, names: List[str], endpoints: Mapping[str, Any],
                  objects: Sequence[Mapping[str, Any]]) -> Tuple[str, str]:
    for tier, types in _tiers(service, release, endpoints, objects):
        hosts = {internal_host(endpoints[t]): t for t in sorted(types)}
        picked = [n for n in names if n in hosts]
        if len(picked) == 1:
            return picked[0], f"the internal host of endpoint {hosts[picked[0]]} ({tier})"
        if picked:
            raise _ambiguous(backend, service, release, "Services", picked, f"internal hosts of {tier}")
    raise _ambiguous(backend, service, release, "Services", names, "none an internal host of its endpoints")


def _tiers(service: str, release: str, endpoints: Mapping[str, Any],
           objects: Sequence[Mapping[str, Any]]) -> List[Tuple[str, List[str]]]:
    """The endpoint types to try, most specific first, each with its name."""
    typed = {k: v for k, v in endpoints.items() if isinstance(v, Mapping) and internal_host(v)}
    registered = [t for t in registered_types(objects) if t in typed]
    if registered:
        keystone = ("the types its ks-service and ks-endpoints Jobs register in keystone", registered)
    else:
        keystone = ("the types with an api port, registered in keystone",
                    [k for k, v in typed.items() if "api" in (v.get("port") or {})])
    own = [k for k, v in typed.items() if v.get("name") in (service, release)]
    return [keystone, (f"the types named {service}", own), ("every endpoint type", list(typed))]


def registered_types(objects: Iterable[Mapping[str, Any]]) -> List[str]:
    """The endpoint types that the release's keystone Jobs register (their
    OS_SERVICE_TYPE, '-' read as '_' as helm-toolkit looks them up)."""
    found: List[str] = []
    for job in of_kind(objects, "Job"):
        if not KEYSTONE_JOBS.search(name_of(job)):
            continue
        pod = ((job.get("spec") or {}).get("template") or {}).get("spec") or {}
        for container in pod.get("containers") or []:
            for env in container.get("env") or []:
                value = str(env.get("value") or "").replace("-", "_")
                if env.get("name") == SERVICE_TYPE_ENV and value and value not in found:
                    found.append(value)
    return found


def internal_host(endpoint: Mapping[str, Any], which: str = "internal") -> Optional[str]:
    """The short host name of an endpoint type, as helm-toolkit's
    hostname_short_endpoint_lookup reads it: `hosts.<which>`, else
    `hosts.default`, a mapping's `host`; an IP address names no Service."""
    hosts = endpoint.get("hosts")
    if not isinstance(hosts, Mapping):
        return None
    host = hosts.get(which) or hosts.get("default")
    if isinstance(host, Mapping):
        host = host.get("host")
    if not isinstance(host, str) or not host or _IP.match(host):
        return None
    return host


def _in_front(backend: str, release: str, service_name: str, endpoints: Mapping[str, Any],
              objects: Sequence[Mapping[str, Any]]) -> Target:
    """The Ingress or Route the release renders whose backend is the Service."""
    kind = KIND[backend]
    fronts = sorted({name_of(o) for o in of_kind(objects, kind)
                     if service_name in backends_of(o)})
    why = f"the {kind} of release {release} in front of Service {service_name}"
    if len(fronts) == 1:
        return Target(kind, fronts[0], why)
    if not fronts:
        raise PhaseError(f"release {release} renders no {kind} in front of Service {service_name}, the one that "
                         f"takes its traffic; name the {kind} with the flow input {FLOW_INPUT} (the traffic "
                         f"module's {OPTION[backend]}), or use traffic_backend service_selector")
    public = {internal_host(e, "public") for e in endpoints.values()
              if isinstance(e, Mapping) and internal_host(e) == service_name}
    named = [f for f in fronts if f in public]
    if len(named) == 1:
        return Target(kind, named[0], why + ", named after its public host")
    raise _ambiguous(backend, "", release, PLURAL[kind], fronts, f"in front of Service {service_name}")


def backends_of(obj: Mapping[str, Any]) -> List[str]:
    """The Services an Ingress's rules (and default backend) or a Route's `to` name."""
    spec = obj.get("spec") or {}
    if obj.get("kind") == "Route":
        to = [spec.get("to") or {}]
        return [str(t.get("name")) for t in to + list(spec.get("alternateBackends") or []) if t.get("name")]
    found = []
    paths = [p for r in spec.get("rules") or [] for p in ((r.get("http") or {}).get("paths") or [])]
    for backend in [spec.get("defaultBackend") or {}] + [p.get("backend") or {} for p in paths]:
        name = (backend.get("service") or {}).get("name") or backend.get("serviceName")
        if name:
            found.append(str(name))
    return found


def _ambiguous(backend: str, service: str, release: str, what: str, names: Sequence[str], how: str) -> PhaseError:
    whose = f" that could take {service}'s traffic" if service else ""
    return PhaseError(f"release {release} renders {len(names)} {what}{whose} ({how}): {', '.join(names)}; "
                      f"name the one to move with the flow input {FLOW_INPUT} (the traffic module's "
                      f"{OPTION[backend]})")


def summary(target: Target) -> Dict[str, str]:
    """The target as the traffic module returns it."""
    return {"kind": target.kind, "name": target.name, "why": target.why}
