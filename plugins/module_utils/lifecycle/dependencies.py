# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A service's dependencies: what a `depends_on` element names, and whether
the dependency's ServiceLifecycle meets it.

An element is `name`, `name>=min_version` or `namespace/name>=min_version`
(or `namespace/name`); without a namespace it is the dependent's. The record
keeps the strings as given (spec.dependsOn is a list of strings), so they are
read here, in one place, with an error that shows the three forms.

A dependency is met when its record is Operational at the minimum version or
newer (common/versions.py), and, when a minimum is asked, no flow runs on it:
a site waits for a dependency at the version the run brings it to, and an
update is Operational at the new version from its traffic rollout on, before
its test. It is lost when that update was rolled back in this run. It is lost, and waiting cannot help, when it is
Failed or Removed and no flow runs on it, unless that happened before `since`:
a site run passes its own start, because a service it removed earlier is one
it is about to deploy again, and the dependents must not give up on it before
the run gets to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import List, Optional, Sequence

from ansible_collections.lcm.openstack.plugins.module_utils.crds import Condition
from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import LifecycleStatus, ServiceLifecycle, lifecycle_spec, lifecycle_status
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError, LifecycleError
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import DEPENDENCIES_FAILED, DEPENDENCIES_READY
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.common.versions import satisfies

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LOST_STATES = ("Failed", "Removed")
FORMS = "name, name>=min_version or namespace/name>=min_version"


REMOVED = "Removed"


@dataclass(frozen=True)
class Dependency:
    name: str
    namespace: str
    minimum: str = ""
    label: str = ""  # how messages name it: its name, with its namespace when not the dependent's
    want: str = "Operational"  # or Removed: a dependent a removal waits for (removal goes in reverse)


@dataclass(frozen=True)
class Verdict:
    met: bool
    lost: bool  # Failed or Removed, with nothing running to bring it back
    why: str  # what it is instead: "Installing", "no ServiceLifecycle in openstack", ...


def parse(text: str, namespace: str) -> Dependency:
    """One `depends_on` element of a service in `namespace`."""
    spec, sep, minimum = str(text).partition(">=")
    where, _slash, name = spec.strip().rpartition("/")
    where, name, minimum = where.strip(), name.strip(), minimum.strip()
    problem = _problem(where, name, minimum, bool(sep))
    if problem:
        raise LifecycleError(f"depends_on: {text!r} is not {FORMS}: {problem}")
    home = where or namespace
    return Dependency(name, home, minimum, name if home == namespace else f"{home}/{name}")


def parse_all(texts: Sequence[str], namespace: str, service: str) -> List[Dependency]:
    """Every element; a service that names itself would wait for ever."""
    deps = [parse(t, namespace) for t in texts or ()]
    if any(d.name == service and d.namespace == namespace for d in deps):
        raise LifecycleError(f"depends_on: {service} cannot depend on itself")
    return deps


def _problem(where: str, name: str, minimum: str, has_minimum: bool) -> str:
    if re.search(r"[<>=!~^]", f"{where}{name}{minimum}"):
        return "the only comparison is >= (a minimum version)"
    if not _NAME.match(name):
        return f"{name!r} is not a service name (lower-case letters, digits and '-')"
    if where and not _NAME.match(where):
        return f"{where!r} is not a namespace name"
    if has_minimum and (not minimum or re.search(r"\s", minimum)):
        return "a version follows >=, without spaces"
    return ""


def judge(dep: Dependency, record: Optional[ServiceLifecycle], since: Optional[datetime] = None) -> Verdict:
    """Whether the record (None: there is none) meets the dependency, and if not, why."""
    if dep.want == REMOVED:
        return _judge_removed(record, since)
    if record is None:
        return Verdict(False, False, f"no ServiceLifecycle in {dep.namespace}")
    status = lifecycle_status(record)
    state, version = status.get("state") or "", status.get("currentVersion") or ""
    flow = status.get("flow") or {}
    if state == "Operational" and (not dep.minimum or satisfies(version, dep.minimum)):
        if dep.minimum and flow.get("state") == "Running":
            # Operational at the new version already (its traffic rolled out)
            # while its flow still tests it: the version is met when the flow ends.
            return Verdict(False, False, f"Operational, version {version}, its {flow.get('name')} flow running")
        return Verdict(True, False, f"Operational{', version ' + version if version else ''}")
    rolled_back = _rolled_back(status, dep, since)
    if rolled_back:
        return Verdict(False, True, rolled_back)
    gave_up = _gave_up(status, since)
    if gave_up:  # its flow did not start: neither will this one
        return Verdict(False, True, gave_up)
    why = state or "no state"
    if dep.minimum:
        why += f", version {version or 'unknown'}, needs >= {dep.minimum}"
    if state not in LOST_STATES:
        return Verdict(False, False, why)
    if flow.get("state") == "Running":
        return Verdict(False, False, f"{why}, its {flow.get('name')} flow running")
    ended = last_change(status)
    if since is not None and (ended is None or ended < since):
        return Verdict(False, False, f"{why} before this run, not yet deployed again")
    return Verdict(False, True, f"{why}: {flow.get('message')}" if flow.get("message") else why)


def _rolled_back(status: LifecycleStatus, dep: Dependency, since: Optional[datetime]) -> str:
    """Why waiting for the minimum cannot help: the dependency's update to it
    was rolled back in this run (since `since`), and it runs the version it
    had; '' otherwise. Without `since` nothing says the update will not be run
    again, and the wait goes on."""
    flow = status.get("flow") or {}
    if not dep.minimum or since is None or flow.get("name") != "update" or flow.get("state") != "RolledBack":
        return ""
    ended = parse_time(flow.get("completedAt"))
    if ended is None or ended < since:
        return ""
    version = status.get("currentVersion") or "an unknown version"
    target = flow.get("targetVersion") or dep.minimum
    reason = f": {flow['message']}" if flow.get("message") else ""
    return f"its update to {target} was rolled back in this run, it runs {version}{reason}"


def _judge_removed(record: Optional[ServiceLifecycle], since: Optional[datetime]) -> Verdict:
    """A dependent a removal waits for: met once Removed (or without a record);
    lost when its own removal failed, in this run, and no flow runs on it."""
    if record is None:
        return Verdict(True, False, "no ServiceLifecycle")
    status = lifecycle_status(record)
    state, flow = status.get("state") or "", status.get("flow") or {}
    if state == REMOVED:
        return Verdict(True, False, REMOVED)
    if flow.get("state") == "Running":
        return Verdict(False, False, f"{state or 'no state'}, its {flow.get('name')} flow running")
    ended = last_change(status)
    if state == "Failed" and (since is None or (ended is not None and ended >= since)):
        return Verdict(False, True, f"Failed: {flow.get('message')}" if flow.get("message") else "Failed")
    return Verdict(False, False, state or "no state")


def dependents_of(records: Sequence[ServiceLifecycle], service: str, namespace: str) -> List[ServiceLifecycle]:
    """The records whose dependsOn names the service (a malformed element
    names nothing here: the dependent's own start refuses it)."""
    out = []
    for record in records:
        home = (record.get("metadata") or {}).get("namespace") or namespace
        for text in lifecycle_spec(record).get("dependsOn") or []:
            try:
                dep = parse(text, home)
            except LcmError:
                continue
            if (dep.name, dep.namespace) == (service, namespace):
                out.append(record)
                break
    return out


def _gave_up(status: LifecycleStatus, since: Optional[datetime]) -> str:
    """Why the dependency's own flow gave up waiting for its dependencies, since
    `since`; '' when it did not. A site's failure then reaches every service
    above it at once, not each after its own timeout. Its message is quoted
    without its advice, which the dependent gives once, for the whole chain."""
    cond = gave_up_condition(status, since)
    if cond is None:
        return ""
    return f"its flow did not start: {without_advice(cond.get('message') or '') or cond.get('reason')}"


def gave_up_condition(status: LifecycleStatus, since: Optional[datetime]) -> Optional[Condition]:
    """The DependenciesReady condition of a flow that gave up waiting
    (False, DependencyLost or Timeout) since `since`, with no flow running
    since then; None when it did not."""
    cond = next((c for c in status.get("conditions") or [] if c.get("type") == DEPENDENCIES_READY), {})
    if cond.get("status") != "False" or cond.get("reason") not in DEPENDENCIES_FAILED:
        return None
    if (status.get("flow") or {}).get("state") == "Running":
        return None
    changed = parse_time(cond.get("lastTransitionTime"))
    if since is not None and (changed is None or changed < since):
        return None
    return cond


# The end of a start's failure: one advice sentence, with no ". " inside it.
ADVICE_END = "or set require_dependencies=false"
# What starts' failures said before a chain was named once (older records).
_OLD_LOST = re.compile(r": Failed or Removed, with no flow running to bring (?:it|them) back, "
                       r"so waiting would not help$")


def without_advice(message: str) -> str:
    """A start's failure message less its closing advice (`Run ... first, ...
    or set require_dependencies=false`): what a dependent quotes of it."""
    text = message.strip()
    if text.endswith(ADVICE_END) and ". " in text:
        text = text.rsplit(". ", 1)[0]
    return _OLD_LOST.sub("", text)


def last_change(status: LifecycleStatus) -> Optional[datetime]:
    """When the service last ended a flow or a phase: the latest completedAt
    of its flow and of its Phase history (a phase run outside any flow, an
    uninstall, changes the state without a flow). None when nothing says."""
    times = [parse_time((status.get("flow") or {}).get("completedAt"))]
    times += [parse_time(e.get("completedAt")) for e in status.get("history") or []]
    known = [t for t in times if t is not None]
    return max(known) if known else None
