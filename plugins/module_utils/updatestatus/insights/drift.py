# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Objects of a release at rest that are no longer what its deployed revision
set: a field its manifest sets changed in the cluster (a Deployment scaled by
hand), or the object is gone.

Read by updatestatus/drift_read.py (the update_status module's refresh) with
drift/records.py and drift/live.py, for the services at rest only
(Operational, no flow Running), into `snapshot.drift`; one insight per drifted object, naming its fields,
never their values. The uid is made of the release, the object and its
sorted fields: the same drift keeps the time it was first seen, a field more
is a new insight. Every drift is reported: the ServiceLifecycle records no
drift policy (a site's `drift: correct` is what corrects it, by the plan).

A refresh that reads no drift (the phase engine's, at each phase) keeps the
drift insights the status had for a service still at rest (`carried`,
`kept`: updatestatus/assessment.py carries them over).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, List, Mapping, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import CORRECT, POLICY_INPUT, REPORT, ObjectDrift, shown
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.base import (
    DOCS, UNKNOWN, WARNING, Insight, Settings, Snapshot, insight_uid, resource,
)
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.scope import Scope, Service

NAME = "drift"
OPERATIONAL = "Operational"
# What drift/live.py appends to the fields when the apiserver's dry run was refused.
UNCONFIRMED = "(unconfirmed"


def at_rest(svc: Service) -> bool:
    """Operational, and no flow running on it: what it runs is what its release deployed."""
    return svc.status.get("state") == OPERATIONAL and svc.flow.get("state") != "Running"


def produce(snapshot: Snapshot, settings: Settings) -> List[Insight]:
    del settings  # no threshold: drift is drift from the first refresh that sees it
    if snapshot.drift is None:
        return []
    out = []
    for svc in Scope(snapshot).services:
        if not at_rest(svc):
            continue
        for obj in snapshot.drift.get((svc.namespace, svc.release)) or []:
            out.append(_insight(svc, obj, snapshot.now))
    return out


def carried(snapshot: Snapshot) -> Set[Tuple[str, str]]:
    """(namespace, name) of the services whose drift insights the status
    before holds stay as they were: at rest, their release not compared by
    this refresh."""
    compared = snapshot.drift or {}
    return {svc.key for svc in Scope(snapshot).services
            if at_rest(svc) and (svc.namespace, svc.release) not in compared}


def kept(entry: Mapping[str, Any], services: Set[Tuple[str, str]]) -> bool:
    """Whether `entry`, an insight of the status before, is a drift insight of one of `services` (`carried`)."""
    scope = entry.get("scope") or {}
    return str(entry.get("uid") or "").startswith(f"{NAME}-") and (scope.get("namespace"), scope.get("service")) in services


def _insight(svc: Service, obj: ObjectDrift, now: datetime) -> Insight:
    paths = sorted(f for f in obj.fields if not f.startswith(UNCONFIRMED))
    notes = [f.strip("()") for f in obj.fields if f.startswith(UNCONFIRMED)]
    problem = f"{svc.release}/" + ("(missing)" if obj.missing else ",".join(paths))
    if obj.missing:
        summary = f"{obj.ref} of release {svc.release} is missing from the cluster"
        what = "The release's deployed revision has it; it was deleted outside Helm."
    else:
        summary = f"{obj.ref} of release {svc.release} drifted: {shown(paths)}"
        what = (f"The release's deployed revision sets {', '.join(paths)}; the object in the cluster differs there "
                "(changed outside Helm).")
    if notes:
        what += f" Compared locally only ({'; '.join(notes)})."
    return Insight(
        uid=insight_uid(NAME, svc.namespace, obj.kind, obj.name, problem), started_at=now,
        service=svc.name, namespace=svc.namespace, resources=[resource(obj.kind, obj.name, obj.namespace)],
        level=WARNING, type=UNKNOWN, summary=summary,
        description=(f"{what} Reported only (drift policy `{REPORT}`, the default): the next update of the service "
                     f"applies the release again; to correct it now, set `{POLICY_INPUT}: {CORRECT}` on the service "
                     "and run `playbooks/site.yml`, whose plan reconciles it."),
        reference=f"{DOCS}#drift")
