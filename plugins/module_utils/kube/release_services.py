# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Services of a release that can take its traffic: those with a
selector (not ExternalName) that select pods of the release's workloads.

The first step of traffic/target.py's choice, apart from it so that the
UpdateStatus's endpoints insight, which every module keeping the
UpdateStatus ships, judges the same Services without shipping the choice
among them; in kube/, which both read, since a traffic run refreshes the
UpdateStatus and updatestatus may not import traffic back. Keys of the
collection's own label group in a selector (the traffic gate's
`lifecycle.openstack.org/traffic`) are never a chart's, and are read past:
a drained Service still selects its release's pods.
"""

from __future__ import annotations

from typing import Any, Iterable, List, Mapping, Sequence

from ansible_collections.lcm.openstack.plugins.module_utils.common.model import GROUP

WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet")
OWN_KEYS = f"{GROUP}/"


def of_kind(objects: Iterable[Any], *kinds: str) -> List[Mapping[str, Any]]:
    return [o for o in objects if isinstance(o, Mapping) and o.get("kind") in kinds]


def name_of(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def selecting(services: Iterable[Mapping[str, Any]]) -> List[Mapping[str, Any]]:
    """The Services that select pods: a selector, and not ExternalName."""
    return [s for s in services if (s.get("spec") or {}).get("selector")
            and (s.get("spec") or {}).get("type") != "ExternalName"]


def pod_labels(objects: Iterable[Any]) -> List[Mapping[str, str]]:
    """The pod template labels of every workload among `objects`."""
    out = []
    for w in of_kind(objects, *WORKLOADS):
        labels = (((w.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels")
        if labels:
            out.append(labels)
    return out


def selects(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """A Service selector picks pods with these labels (the collection's own keys aside)."""
    return all(labels.get(k) == v for k, v in selector.items() if not str(k).startswith(OWN_KEYS))


def candidates(services: Iterable[Mapping[str, Any]], pods: Sequence[Mapping[str, Any]]) -> List[Mapping[str, Any]]:
    """The Services that select pods of the workloads (`pods`, their labels),
    by name; every Service that selects pods when none of them picks one
    (pods made some other way)."""
    usable = selecting(services)
    picked = [s for s in usable if any(selects(s["spec"]["selector"], p) for p in pods)]
    return sorted(picked or usable, key=name_of)
