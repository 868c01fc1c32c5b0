# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Apply a phase's objects: server-side apply under the collection's field
manager, with the Phase as controller owner of what it may own.

What the Phase may own is ownership.decide(): its Jobs and Pods, and config
objects it creates that nothing else uses. Besides:

- A Job (or bare Pod) left by an earlier phase is deleted and re-created: its
  pod template is immutable, and a new phase means a new run.
- An object of this very Phase is left alone, so a resumed phase does not
  restart work that is already running. A Job a workload waits for carries no
  owner reference (phase/ownership.py): the phase-uid label says it is this run's.
- A shared object (a Helm release's, a keep-policy hook, anything that
  existed outside a phase) is waited on but neither changed nor owned.
- A config object created without an owner (a keep-policy hook Secret the
  cluster lacks) outlives the Phase.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Set

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.phase import resume
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import NotFoundError, ResourceNotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError, PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import (
    answered, api_call, api_error, api_reason, is_authorization_denial,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import (
    FIELD_MANAGER, IMMUTABLE_KINDS, LABEL_SERVICE, PHASE_KIND,
)
from ansible_collections.lcm.openstack.plugins.module_utils.phase.ownership import (
    LABEL_PHASE_UID, RELEASE, SHARE, WORK_KINDS, Key, decide, of_phase,
)
from ansible_collections.lcm.openstack.plugins.module_utils.kube.deletion import delete_and_wait
from ansible_collections.lcm.openstack.plugins.module_utils.kube.objects import comparable, server_side_apply
from ansible_collections.lcm.openstack.plugins.module_utils.kube.plain import plain

CREATED, UPDATED, UNCHANGED, REPLACED, SHARED = "created", "updated", "unchanged", "replaced", "shared"


@dataclass
class Applied:
    key: str
    api_version: str
    kind: str
    name: str
    action: str
    before: Optional[Dict[str, Any]] = None
    after: Optional[Dict[str, Any]] = None
    note: str = ""
    obj: Dict[str, Any] = field(default_factory=dict)
    owned: bool = False  # the Phase is its controller owner
    reason: str = ""  # why it is owned or not (ownership.decide)
    released: bool = False  # an earlier Phase's owner reference was removed

    @property
    def changed(self) -> bool:
        return self.action in (CREATED, UPDATED, REPLACED) or self.released


class Applier:
    def __init__(self, dyn: Any, namespace: str, dry_run: bool = False,
                 users: Optional[Mapping[Key, List[str]]] = None,
                 earlier: Optional[resume.EarlierRun] = None) -> None:
        self.dyn = dyn
        self.namespace = namespace
        self.dry_run = dry_run
        # Config objects the chart's long-running workloads use (ownership.workload_users).
        self.users = users or {}
        # A dry run's objects that would be created, by (kind, name); notes on how one was validated.
        self.planned: Set[Key] = set()
        self.notes: Dict[str, str] = {}
        # A failed run of this very Phase that is resumed (phase/resume.py): its good work is kept.
        self.earlier = earlier
        self.ahead: Any = None  # phase/read_ahead.ReadAhead, once read_ahead() is called

    def read_ahead(self, objects: Iterable[Mapping[str, Any]]) -> None:
        """Read the objects about to be applied with one list per kind there are many of."""
        # Imported here: a module that applies nothing (state absent) starts without it.
        from ansible_collections.lcm.openstack.plugins.module_utils.phase.read_ahead import ReadAhead

        if self.ahead is None:
            self.ahead = ReadAhead(self.dyn, self.namespace)
        self.ahead.read(objects)

    def resource(self, api_version: str, kind: str) -> Any:
        try:
            return self.dyn.resources.get(api_version=api_version, kind=kind)
        except ResourceNotFoundError as exc:
            raise PhaseError(f"the cluster does not serve {kind} in {api_version}; "
                             "install its CRD or fix the template's apiVersion") from exc

    def get(self, api_version: str, kind: str, name: str) -> Optional[Dict[str, Any]]:
        ahead, obj = self.ahead.take(api_version, kind, name) if self.ahead is not None else (False, None)
        if ahead:
            return obj
        res = self.resource(api_version, kind)
        with api_call("get", res.name, self.namespace, handled=(NotFoundError,)):
            return transient.retry(lambda: res.get(name=name, namespace=self.namespace, serializer=plain).to_dict())
        return None

    def apply(self, desired: Dict[str, Any], owner: Optional[Dict[str, Any]],
              labels: Dict[str, str]) -> Applied:
        obj = copy.deepcopy(desired)
        api_version, kind = obj["apiVersion"], obj["kind"]
        meta = obj.setdefault("metadata", {})
        name = meta.get("name") or ""
        res = self.resource(api_version, kind)
        if not res.namespaced:
            # A Job's cluster-wide RBAC (nova's bootstrap ClusterRole): created, never owned (a
            # namespaced owner cannot own it), labelled with the service for its removal.
            owner = None
        elif meta.get("namespace") not in (None, self.namespace):
            raise PhaseError(f"{kind} {name} is rendered for namespace {meta['namespace']}, "
                             f"but the phase runs in {self.namespace}")
        if res.namespaced:
            meta["namespace"] = self.namespace
        meta.setdefault("labels", {}).update(labels)
        result = Applied(key=f"{kind}/{name}", api_version=api_version, kind=kind, name=name,
                         action=UNCHANGED, obj=obj)

        existing = self.get(api_version, kind, name)
        result.before = comparable(existing)
        decision = decide(desired, existing, self.users, labels.get(LABEL_SERVICE, ""))
        result.reason = decision.reason
        if decision.action in (SHARE, RELEASE):
            result.action, result.note, result.after = SHARED, decision.reason, result.before
            if decision.action == RELEASE and existing is not None:
                self._release(res, existing)
                result.released = True
            return result
        result.owned = decision.owned and owner is not None
        if result.owned:
            meta["ownerReferences"] = [owner]
        else:
            meta.pop("ownerReferences", None)
            result.note = decision.reason
            if owner is not None and kind in WORK_KINDS:
                meta["labels"][LABEL_PHASE_UID] = owner["uid"]
        if existing is not None:
            ours = owner is not None and of_phase(existing, owner["uid"])
            if (api_version, kind) in IMMUTABLE_KINDS:
                verdict, why = resume.verdict(existing, self.earlier) if ours and self.earlier else (
                    resume.KEEP, "")
                if ours and verdict == resume.RESUME:
                    return self._unsuspend(res, result, why)
                if ours and verdict == resume.KEEP:
                    result.after, result.note = result.before, why or result.note
                    return result  # an attached or resumed phase: the run is under way already
                # A failed Job goes with its pods (Foreground) before its successor
                # starts: their exits must not be read as the new Job's.
                self._delete(res, name, existing, "Foreground" if verdict == resume.RECREATE else "Background")
                result.action = REPLACED
                result.note = why or result.note
        if result.action == REPLACED and self.dry_run:
            # The live object's immutable fields would refuse a dry-run apply;
            # validate the replacement as a new object under a generated name.
            self._validate_as_new(res, obj)
            self._planned(result)
            result.after = comparable(obj)
            return result
        applied = self._server_side_apply(res, obj, name)
        if result.action != REPLACED:
            if existing is None:
                result.action = CREATED
            elif applied["metadata"].get("resourceVersion") != existing["metadata"].get("resourceVersion"):
                result.action = UPDATED
        self._planned(result)
        result.after = comparable(applied)
        return result

    def _unsuspend(self, res: Any, result: Applied, why: str) -> Applied:
        """Let a Job the failed run suspended (phase/stop.py) run again."""
        result.action, result.note = UPDATED, why
        if self.dry_run:
            result.after = result.before
            return result
        with api_call("patch", res.name, self.namespace):
            job = transient.retry(lambda: res.patch(
                body={"spec": {"suspend": False}}, name=result.name, namespace=self.namespace,
                content_type="application/merge-patch+json", field_manager=FIELD_MANAGER, serializer=plain).to_dict())
        result.after = comparable(job)
        return result

    def _planned(self, result: Applied) -> None:
        """A dry run remembers what it would create, so a later wave may use it."""
        if self.dry_run and result.action in (CREATED, REPLACED):
            self.planned.add((result.kind, result.name))
        note = self.notes.pop(result.key, "")
        if note:
            result.note = f"{result.note}; {note}" if result.note else note

    def _server_side_apply(self, res: Any, obj: Dict[str, Any], name: str) -> Dict[str, Any]:
        def call(body: Dict[str, Any]) -> Dict[str, Any]:
            return server_side_apply(res, body, self.namespace, dry_run=self.dry_run)
        return self._validated(call, res, obj, "patch", name)

    def _validate_as_new(self, res: Any, obj: Dict[str, Any]) -> None:
        probe = copy.deepcopy(obj)
        probe["metadata"].pop("name", None)
        probe["metadata"]["generateName"] = obj["metadata"]["name"][:50] + "-"

        def call(body: Dict[str, Any]) -> Dict[str, Any]:
            return res.create(body=body, namespace=self.namespace, dry_run="All",
                              field_manager=FIELD_MANAGER, serializer=plain).to_dict()
        self._validated(call, res, probe, "create", obj["metadata"]["name"])

    def _validated(self, call: Callable[[Dict[str, Any]], Dict[str, Any]], res: Any, obj: Dict[str, Any],
                   verb: str, name: str = "") -> Dict[str, Any]:
        """Send a write; a refusal becomes an error that keeps the
        apiserver's reason. In a dry run, a Pod whose ServiceAccount this phase
        creates in an earlier wave cannot pass ServiceAccount admission (a dry
        run persists nothing): it is validated once more with the namespace's
        default account in its place, and the note says so."""
        name = name or obj["metadata"].get("name", "")
        with answered() as refused:
            return call(obj)
        exc = refused.error
        # Imported on a refusal only: a phase starts with no more modules than it needs.
        from ansible_collections.lcm.openstack.plugins.module_utils.phase.dry_run import (  # pylint: disable=import-outside-toplevel
            planned_account, planned_role,
        )
        role = planned_role(self.planned, obj, exc) if self.dry_run else ""
        if role:
            self.notes[f"{obj['kind']}/{name}"] = (
                f"not checked by the apiserver's dry run: it binds the Role {role}, which this phase "
                "creates in an earlier wave, and a binding is checked against the Role's rules")
            return copy.deepcopy(obj)
        account = planned_account(self.planned, obj, exc) if self.dry_run else None
        if account is None:
            raise self._refused(exc, obj["kind"], name, verb, res) from exc
        probe = copy.deepcopy(obj)
        probe["spec"].pop("serviceAccount", None)
        probe["spec"]["serviceAccountName"] = "default"
        with answered() as refused:
            out = call(probe)
        if refused:
            raise self._refused(refused.error, obj["kind"], name, verb, res) from refused.error
        out.setdefault("spec", {})["serviceAccountName"] = account
        self.notes[f"{obj['kind']}/{name}"] = (
            f"validated with the default ServiceAccount in place of {account}, which this phase "
            "creates in an earlier wave")
        return out

    def _refused(self, exc: Any, kind: str, name: str, verb: str, res: Any) -> LcmError:
        """The object itself was refused (invalid, or denied by admission):
        the apiserver's reason. Only an authorization denial names the
        credentials (api_errors.api_error)."""
        if exc.status in (400, 422) or (exc.status == 403 and not is_authorization_denial(exc)):
            return PhaseError(f"the apiserver refused {kind} {name}: {api_reason(exc)}")
        return api_error(exc, verb, res.name, self.namespace)

    def _release(self, res: Any, existing: Dict[str, Any]) -> None:
        """Remove the Phase owner references of an object a Phase may not own,
        leaving its content alone (a keep-policy Secret holds live keys). The
        resourceVersion makes it a compare-and-swap: a concurrent writer wins."""
        meta = existing["metadata"]
        kept = [r for r in meta.get("ownerReferences") or [] if r.get("kind") != PHASE_KIND]
        patch = {"metadata": {"ownerReferences": kept or None,
                              "resourceVersion": meta.get("resourceVersion")}}
        kwargs = {"dry_run": "All"} if self.dry_run else {}
        with api_call("patch", res.name, self.namespace):
            res.patch(body=patch, name=meta["name"], namespace=self.namespace,
                      content_type="application/merge-patch+json", field_manager=FIELD_MANAGER, **kwargs)

    def _delete(self, res: Any, name: str, existing: Dict[str, Any], propagation: str = "Background") -> None:
        """Delete and, unless in check mode, wait until the object is gone. A
        pod that has finished has nothing to stop: it goes without a grace
        period. (A kubelet's late confirmation of the old pod's deletion
        carries that pod's UID, so it never meets the new pod of the same name.)"""
        if self.dry_run:
            return
        finished = existing.get("kind") == "Pod" and (existing.get("status") or {}).get("phase") in (
            "Succeeded", "Failed")
        delete_and_wait(self.dyn, res, name, self.namespace, propagation, 60,
                        grace_seconds=0 if finished else None)


def actions(applied: List[Applied]) -> List[Dict[str, str]]:
    """What the module returns as objects_applied: one entry an object."""
    return [{"kind": a.kind, "name": a.name, "action": a.action, "owned": a.owned, "reason": a.reason,
             **({"note": a.note} if a.note else {})}
            for a in applied]
