# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an openstack-helm pod says it waits for: kubernetes-entrypoint's variables.

helm-toolkit renders an init container running kubernetes-entrypoint into
every pod, with what the chart's ``dependencies.static`` (and ``dynamic``)
name in its environment:

- ``DEPENDENCY_JOBS``: Job names, comma separated, complete;
- ``DEPENDENCY_JOBS_JSON``: ``[{"name": ...}]`` or ``[{"labels": {...}}]``;
- ``DEPENDENCY_SERVICE``: ``namespace:name``, comma separated, with ready
  endpoints;
- ``DEPENDENCY_DAEMONSET``: DaemonSet names, ready;
- ``DEPENDENCY_POD_JSON``: ``[{"labels": {...}, "requireSameNode": ...}]``;
- ``DEPENDENCY_CUSTOM_RESOURCE``: custom resources with field values.

Read here once for everything that orders by them: a phase's waves
(phase/waves.py), a site's order across releases
(site/chart_graph.py), and what a hook Job that Helm waited for was waiting
for (helm/hooks.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError

# The kinds whose pods carry the declarations: what orders by them reads these.
POD_KINDS = ("Job", "Pod", "Deployment", "StatefulSet", "DaemonSet")


@dataclass(frozen=True)
class Dependency:
    """One thing a pod's init container waits for."""

    kind: str  # Job, Service, DaemonSet, Pod or CustomResource
    namespace: str = ""  # "" when the pod's own
    name: str = ""
    labels: Tuple[Tuple[str, str], ...] = ()  # instead of a name
    env: str = ""  # the variable that declared it

    def describe(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        what = self.name or "labelled " + ",".join(f"{k}={v}" for k, v in self.labels)
        return f"{self.kind} {where}{what}"


def declared(obj: Mapping[str, Any]) -> List[Dependency]:
    """What a pod-bearing object's containers declare they wait for."""
    out: List[Dependency] = []
    for name, value in _entrypoint_env(obj):
        if name == "DEPENDENCY_JOBS":
            out += [Dependency("Job", name=j, env=name) for j in _comma(value)]
        elif name == "DEPENDENCY_JOBS_JSON":
            for item in _json_list(value, name):
                out.append(Dependency("Job", str(item.get("namespace") or ""), str(item.get("name") or ""),
                                      _labels(item.get("labels")), env=name))
        elif name == "DEPENDENCY_SERVICE":
            for item in _comma(value):
                ns, _sep, svc = item.rpartition(":")
                out.append(Dependency("Service", ns, svc, env=name))
        elif name == "DEPENDENCY_DAEMONSET":
            out += [Dependency("DaemonSet", name=d, env=name) for d in _comma(value)]
        elif name == "DEPENDENCY_POD_JSON":
            out += [Dependency("Pod", labels=_labels(i.get("labels")), env=name)
                    for i in _json_list(value, name)]
        elif name == "DEPENDENCY_CUSTOM_RESOURCE":
            out += [Dependency("CustomResource", str(i.get("namespace") or ""),
                               f"{i.get('kind', '')}/{i.get('name', '')}", env=name)
                    for i in _json_list(value, name)]
    return out


# -- reading the rendered objects --------------------------------------------------

def _pod_spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec") or {}
    if obj.get("kind") == "Pod":
        return spec
    if obj.get("kind") == "CronJob":  # its pods wait too (keystone-fernet-rotate on fernet-setup)
        spec = ((spec.get("jobTemplate") or {}).get("spec") or {})
    return (spec.get("template") or {}).get("spec") or {}


def _entrypoint_env(obj: Mapping[str, Any]) -> List[Tuple[str, str]]:
    spec = _pod_spec(obj)
    out = []
    for container in list(spec.get("initContainers") or []) + list(spec.get("containers") or []):
        for env in container.get("env") or []:
            name = str(env.get("name", ""))
            if name.startswith("DEPENDENCY_") and env.get("value"):
                out.append((name, str(env["value"])))
    return out


def _comma(value: str) -> List[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _json_list(value: str, name: str) -> List[Dict[str, Any]]:
    try:
        data = json.loads(value)
    except ValueError as exc:
        raise KubeError(f"{name} is not JSON: {value[:200]!r}") from exc
    if not isinstance(data, list) or not all(isinstance(i, dict) for i in data):
        raise KubeError(f"{name} must be a JSON list of objects, not {value[:200]!r}")
    return data


def _labels(value: Optional[Mapping[str, Any]]) -> Tuple[Tuple[str, str], ...]:
    return tuple(sorted((str(k), str(v)) for k, v in (value or {}).items()))


def meta_labels(r: Any) -> Dict[str, str]:
    """The labels of a rendered object (anything with `.obj`, as helm/render.py's Rendered)."""
    return (r.obj.get("metadata") or {}).get("labels") or {}


def pod_labels(r: Any) -> Dict[str, str]:
    """The labels of the pods a rendered object runs (a Pod's own)."""
    if r.obj.get("kind") == "Pod":
        return meta_labels(r)
    return (((r.obj.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}


def labels_match(labels: Mapping[str, str], wanted: Tuple[Tuple[str, str], ...]) -> bool:
    return bool(wanted) and all(labels.get(k) == v for k, v in wanted)
