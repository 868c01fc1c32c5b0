# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which of a phase's objects the Phase may own, and why.

Deleting a Phase garbage-collects whatever it controls, so the Phase is the
controller owner only of what it created for its own run and that nothing
else uses:

- its Jobs and Pods: the phase's own work, Helm hooks in the chart or not,
  but for a Job that any object of the chart waits for;
- config objects (Secret, ConfigMap, ServiceAccount, Role, RoleBinding) it
  creates itself, that are not Helm hooks, have no
  ``helm.sh/resource-policy: keep``, are not managed by a Helm release and
  are not used by a long-running workload (Deployment, StatefulSet,
  DaemonSet, CronJob) of the chart.

A Job that any object of the chart names in its kubernetes-entrypoint
dependencies (keystone-api's ``DEPENDENCY_JOBS`` names keystone-db-sync,
keystone-db-sync's names keystone-db-init) is created without an owner
reference: the waiter's init container looks for that Job, complete, every
time a pod of it starts, long after the phase ended. For a long-running
workload that is a restart, a rescheduling, a scale-up; for a Job it is the
next phase that runs it again (an upgrade's db-sync), whose dependency check
refuses to start a Job whose wait cannot end. It is the phase's by
its labels instead (``lifecycle.openstack.org/phase`` and, for the one run,
``lifecycle.openstack.org/phase-uid``), which is how a resumed run, a later
phase that replaces it, and the stop of a failed phase recognise it.

Everything else that exists already is shared: waited on, never changed.
A config object the phase must create but may not own (a keep-policy hook
Secret that the cluster lacks) is created without an owner reference. A
config object that an earlier Phase took although it may not (an older
release of this collection did) is released: its owner reference is
removed, its content left alone.

Every decision carries its reason, so the Phase status can say why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.phase.waves import Graph, declared
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import API_VERSION, GROUP, LABEL_SERVICE, PHASE_KIND
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import Rendered
from ansible_collections.lcm.openstack.plugins.module_utils.phase.selection import pod_references

OWN = "own"            # apply it, with the Phase as controller owner
UNOWNED = "unowned"    # create it without an owner reference
SHARE = "share"        # it exists: use it as it is
RELEASE = "release"    # it exists under a Phase it must not belong to: remove that owner reference

WORK_KINDS = ("Job", "Pod")
CONFIG_KINDS = ("Secret", "ConfigMap", "ServiceAccount", "Role", "RoleBinding")
LONG_RUNNING_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "CronJob")
HOOK = "helm.sh/hook"
RESOURCE_POLICY = "helm.sh/resource-policy"
# The uid of the Phase run that created a Job it may not own (Phase names
# repeat: a Failed Phase run again is deleted and created under its name).
LABEL_PHASE_UID = f"{GROUP}/phase-uid"

Key = Tuple[str, str]  # (kind, name)


@dataclass(frozen=True)
class Decision:
    """What the phase does with one object, and the reason it gives."""

    action: str
    reason: str

    @property
    def owned(self) -> bool:
        return self.action == OWN


def controller_of(obj: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def of_phase(obj: Mapping[str, Any], uid: str) -> bool:
    """Whether this very Phase run (by uid) made the object: its controller
    owner, or, for a Job created without an owner, the phase-uid label."""
    controller = controller_of(obj)
    if controller is not None:
        return controller.get("kind") == PHASE_KIND and controller.get("uid") == uid
    return bool(uid) and _labels(obj).get(LABEL_PHASE_UID) == uid


def helm_release_of(obj: Mapping[str, Any]) -> Optional[str]:
    """The Helm release that manages an object, unless the object is a hook."""
    meta = obj.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    if HOOK in annotations:
        return None
    if (meta.get("labels") or {}).get("app.kubernetes.io/managed-by") == "Helm":
        return annotations.get("meta.helm.sh/release-name") or "unknown"
    return None


def workload_users(objects: Iterable[Mapping[str, Any]]) -> Dict[Key, List[str]]:
    """For each config object a long-running workload of the chart uses, those
    workloads ("Deployment/keystone-api"). The RoleBindings of a workload's
    ServiceAccount, and their Roles, count as used too; so do the Jobs any
    object of the chart waits for (waited_jobs)."""
    objects = list(objects)
    users: Dict[Key, Set[str]] = {}
    accounts: Dict[str, Set[str]] = {}
    for obj in objects:
        if obj.get("kind") not in LONG_RUNNING_KINDS:
            continue
        who = f"{obj['kind']}/{(obj.get('metadata') or {}).get('name', '')}"
        for ref in pod_references(dict(obj)):
            users.setdefault(ref, set()).add(who)
            if ref[0] == "ServiceAccount":
                accounts.setdefault(ref[1], set()).add(who)
    for obj in objects:
        if obj.get("kind") != "RoleBinding":
            continue
        whos: Set[str] = set()
        for subject in obj.get("subjects") or []:
            if subject.get("kind") == "ServiceAccount":
                whos |= accounts.get(subject.get("name", ""), set())
        if whos:
            name = (obj.get("metadata") or {}).get("name", "")
            users.setdefault(("RoleBinding", name), set()).update(whos)
            role = obj.get("roleRef") or {}
            if role.get("kind") == "Role":
                users.setdefault(("Role", role.get("name", "")), set()).update(whos)
    out = {k: sorted(v) for k, v in users.items()}
    out.update(waited_jobs(objects))
    return out


def waited_jobs(objects: Iterable[Mapping[str, Any]]) -> Dict[Key, List[str]]:
    """For each Job of the chart that the entrypoint dependencies of any
    object of the chart name, by name or by labels, those objects with the
    variable that names it ("Deployment/keystone-api (DEPENDENCY_JOBS)",
    "Job/keystone-db-sync (DEPENDENCY_JOBS)"). A Job that only other Jobs
    wait for counts too: the next run of the waiting Job needs it."""
    rendered = [Rendered(dict(o)) for o in objects]
    graph = Graph(rendered)
    waiters: Dict[Key, Set[str]] = {}
    for r in rendered:
        for dep in declared(r.obj):
            if dep.kind != "Job":
                continue
            for key in graph.resolve(dep):
                if key != (r.kind, r.name):
                    waiters.setdefault(key, set()).add(f"{r.kind}/{r.name} ({dep.env})")
    return {k: sorted(v) for k, v in waiters.items()}


def decide(desired: Mapping[str, Any], live: Optional[Mapping[str, Any]],
           users: Optional[Mapping[Key, List[str]]] = None, service: str = "") -> Decision:
    """The one rule for what a Phase owns. `desired` is the rendered object,
    `live` the cluster's (None when absent), `users` what workload_users()
    found in the whole chart, `service` the phase's service. Raises
    PhaseError for an object another controller than a Phase holds: a phase
    cannot take it over."""
    kind = str(desired.get("kind", ""))
    name = str((desired.get("metadata") or {}).get("name", ""))
    controller = controller_of(live) if live is not None else None
    if live is not None:
        release = helm_release_of(live)
        if release:
            return Decision(SHARE, f"shared: managed by Helm release {release}")
        if controller and controller.get("kind") != PHASE_KIND:
            raise PhaseError(f"{kind} {name} is controlled by {controller.get('kind')} "
                             f"{controller.get('name')}; a phase cannot take it over. Rename it in the chart")
    if kind in WORK_KINDS:
        waiting = (users or {}).get((kind, name)) if kind == "Job" else None
        if waiting:
            return Decision(UNOWNED, f"created without an owner: {', '.join(waiting)} "
                                     f"wait{'s' if len(waiting) == 1 else ''} for it, so deleting the "
                                     "Phase must leave it")
        hook = _annotation(desired, live, HOOK)
        return Decision(OWN, f"owned: the phase's own {kind}"
                        + (f" (a Helm {hook} hook in the chart)" if hook else ""))
    if kind not in CONFIG_KINDS:
        if live is not None and service and _labels(live).get(LABEL_SERVICE) == service:
            # A Deployment or Service a phase of the same service created
            # (stage or annotation selection): kept up to date, never owned.
            return Decision(UNOWNED, f"updated without an owner: a phase of {service} created it, "
                                     f"and a phase owns no {kind}")
        if live is not None:
            return Decision(SHARE, f"shared: exists, and a phase owns no {kind}")
        return Decision(UNOWNED, f"created without an owner: a phase owns no {kind}, "
                                 "so deleting the Phase leaves it")
    why = _must_not_own(kind, name, desired, live, users or {})
    by_phase = controller is not None
    if live is None:
        if why:
            return Decision(UNOWNED, f"created without an owner: {why}")
        return Decision(OWN, "owned: created for this run and used by nothing else")
    if not by_phase:
        return Decision(SHARE, "shared: exists already, created outside any phase"
                        + (f"; {why}" if why else ""))
    if why:
        return Decision(RELEASE, f"released from Phase {controller.get('name')}: {why}")
    return Decision(OWN, f"owned: created by Phase {controller.get('name')} for a phase run "
                         "and used by nothing else")


def _must_not_own(kind: str, name: str, desired: Mapping[str, Any], live: Optional[Mapping[str, Any]],
                  users: Mapping[Key, List[str]]) -> str:
    """Why a config object may not be owned, or "" when it may."""
    hook = _annotation(desired, live, HOOK)
    keep = _annotation(desired, live, RESOURCE_POLICY) == "keep"
    if hook and keep:
        return f"a Helm {hook} hook with {RESOURCE_POLICY} keep"
    if keep:
        return f"{RESOURCE_POLICY} keep"
    if hook:
        return f"a Helm {hook} hook"
    release = helm_release_of(desired)
    if release:
        return f"labelled as managed by Helm release {release}"
    used = users.get((kind, name))
    if used:
        return f"used by {', '.join(used)}"
    return ""


def _labels(obj: Mapping[str, Any]) -> Dict[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def _annotation(desired: Mapping[str, Any], live: Optional[Mapping[str, Any]], key: str) -> str:
    for obj in (desired, live or {}):
        value = ((obj.get("metadata") or {}).get("annotations") or {}).get(key)
        if value:
            return str(value).strip()
    return ""


def owner_reference(phase: Dict[str, Any]) -> Dict[str, Any]:
    """The reference that makes `phase` an object's controller owner (garbage collected with it)."""
    return {
        "apiVersion": API_VERSION,
        "kind": PHASE_KIND,
        "name": phase["metadata"]["name"],
        "uid": phase["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


# The uid of a Phase that does not exist yet, for the owner references of a dry run.
DRY_RUN_UID = "00000000-0000-0000-0000-000000000000"


def placeholder_owner(name: str) -> Dict[str, Any]:
    """The owner reference of a Phase that does not exist yet (dry runs only)."""
    return owner_reference({"metadata": {"name": name, "uid": DRY_RUN_UID}})
