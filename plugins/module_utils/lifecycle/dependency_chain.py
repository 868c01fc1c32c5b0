# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A lost dependency followed to its root, and the start's failure said once.

A dependency is lost when it is Failed or Removed with no flow running, or
when its own start gave up (lifecycle/dependencies.py). In a site the second
is the common case: keystone's greenfield fails, neutron's start gives up on
keystone, nova's on neutron. Quoting the dependency's message nests: nova's
would quote neutron's, which quotes keystone's cause, each with its own
advice. So a dependency whose start gave up because of a lost dependency is
followed, through the records' `dependsOn`, to the root: the first service
of the chain whose flow really failed (or whose own wait timed out). The
failure names the chain once (`nova waits for neutron, which waits for
keystone, which is Removed (...)`), quotes the root's cause once, and ends
with one advice sentence.

The records below the dependency are read one GET each, only once a start
has failed: a wait that succeeds reads nothing more. One that cannot be read
(deleted since, or not readable) ends the chain there, quoting the
dependency's own message without its advice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import LifecycleStatus, ServiceLifecycle, lifecycle_spec, lifecycle_status
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.dependencies import (
    ADVICE_END, Dependency, gave_up_condition, judge, parse, without_advice,
)

Read = Callable[[str, str], Optional[ServiceLifecycle]]  # (namespace, name) -> the ServiceLifecycle, or None
_ENDED = {"Failed": "failed", "Succeeded": "succeeded", "RolledBack": "was rolled back"}


@dataclass(frozen=True)
class Root:
    path: Tuple[str, ...]  # the labels from the dependency down to the root, the root last
    said: str  # what the root is, after "which": "is Removed (its greenfield flow failed: ...)"


def follow(dep: Dependency, record: Optional[ServiceLifecycle], since: Optional[datetime], read: Read) -> List[Root]:
    """The roots a lost dependency leads to: itself, or the services its own
    failed start was waiting for, followed as far as the records go."""
    home = dep.namespace if "/" not in dep.label else ""  # the dependent's namespace, when the label says it
    return _follow(dep.label, dep.namespace, record, since, _once_each(read), home, ((dep.namespace, dep.name),))


def _follow(label: str, namespace: str, record: Optional[ServiceLifecycle], since: Optional[datetime],
            read: Read, home: str, path: Tuple[Tuple[str, str], ...]) -> List[Root]:
    status = lifecycle_status(record)
    cond = gave_up_condition(status, since)
    if cond is None:
        return [Root((label,), _ended(status))]
    found: List[Root] = []
    if cond.get("reason") == "DependencyLost":
        for sub in _dependencies(record or {}, namespace):
            if (sub.namespace, sub.name) in path:
                continue  # a cycle: the site's plan refuses it, a record may still hold one
            below = read(sub.namespace, sub.name)
            if judge(sub, below, since).lost:
                sub_label = sub.name if sub.namespace == home else f"{sub.namespace}/{sub.name}"
                found += [Root((label,) + r.path, r.said) for r in _follow(
                    sub_label, sub.namespace, below, since, read, home, path + ((sub.namespace, sub.name),))]
    quoted = without_advice(str(cond.get("message") or "")) or str(cond.get("reason"))
    return found or [Root((label,), f"did not start its flow ({quoted})")]


def _dependencies(record: ServiceLifecycle, namespace: str) -> List[Dependency]:
    """The record's dependsOn, read as its own start read it (a malformed element names nothing)."""
    out = []
    for text in lifecycle_spec(record).get("dependsOn") or []:
        try:
            out.append(parse(text, namespace))
        except LcmError:
            continue
    return out


def _ended(status: LifecycleStatus) -> str:
    """A Failed or Removed service, and how its last flow ended, with the flow's message."""
    flow = status.get("flow") or {}
    message = str(flow.get("message") or "")
    said = f"is {status.get('state') or 'no state'}"
    if flow.get("name"):
        ended = _ENDED.get(str(flow.get("state")), str(flow.get("state") or "ended").lower())
        return f"{said} (its {flow['name']} flow {ended}{': ' + message if message else ''})"
    return f"{said} ({message})" if message else said


def _once_each(read: Read) -> Read:
    """Each record read at most once; one that cannot be read ends the chain there."""
    seen: Dict[Tuple[str, str], Optional[ServiceLifecycle]] = {}

    def cached(namespace: str, name: str) -> Optional[ServiceLifecycle]:
        if (namespace, name) not in seen:
            try:
                seen[(namespace, name)] = read(namespace, name)
            except LcmError:
                seen[(namespace, name)] = None
        return seen[(namespace, name)]
    return cached


def lost_message(service: str, roots: Sequence[Root]) -> str:
    """`service` waits for each root once, through the chain that leads to it,
    then one advice sentence naming the flows to run."""
    groups: Dict[str, List[Root]] = {}
    for root in roots:
        groups.setdefault(root.path[-1], []).append(root)
    names = list(groups)
    if len(names) == 1 and all(len(r.path) == 1 for r in roots):
        them, whose = "it", "its flow"
    elif len(names) == 1:
        them, whose = names[0], f"{names[0]}'s flow"
    else:
        them, whose = "them", f"the flows of {_and(names)}"
    items = "; and for ".join(_item(paths) for paths in groups.values())
    return (f"{service} waits for {items}. No flow runs to bring {them} back, so waiting would not help: "
            f"run {whose} first, {ADVICE_END}")


def _item(paths: List[Root]) -> str:
    """One root: `neutron, which waits for keystone, which is Removed (...)`;
    reached several ways, `keystone (through neutron and placement), which ...`."""
    root = paths[0]
    if len(paths) == 1:
        return ", which waits for ".join(root.path) + f", which {root.said}"
    through = [" then ".join(p.path[:-1]) for p in paths if len(p.path) > 1]
    direct = "directly and " if any(len(p.path) == 1 for p in paths) else ""
    return f"{root.path[-1]} ({direct}through {_and(through)}), which {root.said}"


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
