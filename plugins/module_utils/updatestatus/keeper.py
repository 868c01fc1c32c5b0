# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Keep the UpdateStatus singleton: read the cluster, compute, write if changed.

What is read: every ServiceLifecycle and Phase, and in the namespaces with a
ServiceLifecycle the pods, Deployments, Jobs, Services, EndpointSlices and
the metadata of Helm's release records (Secrets labelled owner=helm, and
ConfigMaps so labelled, which Helm writes with HELM_DRIVER=configmap; listed
in the apiserver's metadata-only form: their data, each revision's manifest
and values, is never sent). One list a kind, 10 requests with the
UpdateStatus's own read, for any number of services (kube/across.py). A namespace whose objects
the credentials may not list keeps the entries it had: a runner bound in its
own namespaces only (docs/rbac.md) refreshes those, and leaves the others.
What is computed is in updatestatus/assessment.py and insights/; this file only talks to
the apiserver. The status is written with server-side apply under the
collection's field manager, and only when something but the time changed, so
`kubectl get updatestatus cluster -w` shows changes, not ticks.

Drift (insights/drift.py) is read on top by the reader given
(updatestatus/drift_read.py, which the update_status module gives), never by
the phase engine's refresh at each phase, which stays as cheap as it was.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.crds.update_status import UpdateStatus, UpdateStatusStatus, update_status_status
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.assessment import cluster_status
from ansible_collections.lcm.openstack.plugins.module_utils.kube.crd import lcm_resource
from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.kube.objects import applied, get_or_none, server_side_apply
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import CrdMissing, LcmError, LifecycleError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import Settings, Snapshot
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import (
    API_VERSION, LIFECYCLE_KIND, PHASE_KIND,
)
from ansible_collections.lcm.openstack.plugins.module_utils.kube.across import Keep, across
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.report import report

KIND = "UpdateStatus"
NAME = "cluster"
VOLATILE = ("observedAt",)
# Refreshes running at once (a site's services in parallel) each write on the
# version they read; one that lost reads again, a few times at most.
WRITE_ATTEMPTS = 5

# (api_version, kind, label selector) listed for the namespaces with a service.
NAMESPACED = (
    ("v1", "Pod", None),
    ("apps/v1", "Deployment", None),
    ("batch/v1", "Job", None),
    ("v1", "Service", None),
    ("discovery.k8s.io/v1", "EndpointSlice", None),
    ("v1", "Secret", "owner=helm"),
    ("v1", "ConfigMap", "owner=helm"),
)
# Helm's release records: their metadata only is listed and kept.
RECORD_KINDS = ("Secret", "ConfigMap")


# Reads the drift of a snapshot's releases at rest: (snapshot.drift, warnings).
DriftReader = Callable[[Any, Snapshot], Tuple[Optional[Dict[Tuple[str, str], List[Any]]], List[str]]]


class StatusKeeper:
    def __init__(self, dyn: Any, settings: Optional[Settings] = None, check_mode: bool = False,
                 drift: Optional[DriftReader] = None) -> None:
        self.dyn, self.check_mode, self.drift = dyn, check_mode, drift
        self.settings = settings or Settings()
        self.res = lcm_resource(dyn, KIND)
        self.warning = ""  # what the refresh left out, and why

    def run(self, details: str = "none", now: Optional[datetime] = None) -> Dict[str, Any]:
        now = now or datetime.now(timezone.utc)
        for _attempt in range(WRITE_ATTEMPTS):
            # Read before the cluster is, and written on that version only: a
            # refresh that read the cluster earlier and writes later must not
            # put back what it saw (a service created meanwhile would vanish).
            previous = self._current()
            snapshot = self.snapshot(now)
            status = cluster_status(snapshot, self.settings, update_status_status(previous))
            changed = _comparable(status) != _comparable(update_status_status(previous))
            if not changed or self.check_mode or self._written(status, previous):
                return {"changed": changed, "status": status, "report": report(status, details, now)}
        raise LifecycleError(f"the UpdateStatus was written by others under {WRITE_ATTEMPTS} refreshes in a row; "
                             "it stays as they wrote it, and the next refresh brings it up to date")

    # -- reading -------------------------------------------------------------
    def snapshot(self, now: datetime) -> Snapshot:
        lifecycles = self._cluster_wide(LIFECYCLE_KIND)
        objects = lifecycles + self._cluster_wide(PHASE_KIND)
        namespaces = {(s["metadata"].get("namespace") or "") for s in lifecycles}
        unread: Set[str] = set()
        found: List[Dict[str, Any]] = []
        for api_version, kind, selector in NAMESPACED:
            res = self.dyn.resources.get(api_version=api_version, kind=kind)
            found += across(res, namespaces, selector, _held(api_version, kind), unread,
                            metadata_only=kind in RECORD_KINDS)
        # An unread namespace's entries stay as last written: none of its objects count.
        objects += [o for o in found if (o.get("metadata") or {}).get("namespace") not in unread]
        snapshot = Snapshot.from_objects(objects, now)
        snapshot.unread = unread
        if self.drift is not None:
            snapshot.drift, warnings = self.drift(self.dyn, snapshot)
            for text in warnings:
                self._warn(text)
        return snapshot

    def _warn(self, text: str) -> None:
        if text not in self.warning:
            self.warning = f"{self.warning}; {text}" if self.warning else text

    def _cluster_wide(self, kind: str) -> List[Dict[str, Any]]:
        return across(lcm_resource(self.dyn, kind), None, None, _held(API_VERSION, kind), set())

    def _current(self) -> Optional[UpdateStatus]:
        return get_or_none(self.res, NAME)

    # -- writing -------------------------------------------------------------
    def _written(self, status: UpdateStatusStatus, previous: Optional[UpdateStatus]) -> bool:
        """Write `status` on the version of `previous`; False when that is no
        longer the current one (and after creating the singleton, whose
        status someone may have written since): read again."""
        body = {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": NAME,
                "labels": {"app.kubernetes.io/managed-by": "lcm.openstack"}}}
        if previous is None:
            applied(self.res, dict(body, spec={}), what="updatestatuses")
            return False
        meta = dict(body["metadata"], resourceVersion=previous["metadata"]["resourceVersion"])
        with api_call("patch", "updatestatuses/status", handled=lambda exc: exc.status == 409 or (
                transient.schema_refusal(exc) and _with_sites(status))) as refused:
            server_side_apply(self.res.status, dict(body, metadata=meta, status=status))
        if refused.status == 409:  # written since it was read: the precondition failed
            return False
        if refused:
            # The CRD installed predates the sites: write the rest, and say so.
            self.warning = ("the UpdateStatus CRD in the cluster predates its site fields, which were left "
                            "out: install this collection's CRDs again (the lcm.openstack.crds role)")
            return self._written(_without_sites(status), previous)
        return True


def refresh(dyn: Any) -> str:
    """Best effort, for the phase engine when a phase starts: '' when the
    singleton was refreshed (or its CRD is not installed), else a warning."""
    keeper = None
    try:
        keeper = StatusKeeper(dyn)  # no drift read: it stays cheap
        keeper.run()
    except CrdMissing:
        return ""
    except LcmError as exc:
        return f"the UpdateStatus was not refreshed: {exc}"
    return keeper.warning


def _with_sites(status: UpdateStatusStatus) -> bool:
    return bool(status.get("sites")) or any("site" in s for s in status.get("services") or [])


def _without_sites(status: UpdateStatusStatus) -> UpdateStatusStatus:
    """The status as a CRD without the site fields takes it."""
    out = {k: v for k, v in status.items() if k != "sites"}
    out["services"] = [{k: v for k, v in s.items() if k != "site"} for s in status.get("services") or []]
    return out


def _held(api_version: str, kind: str) -> Keep:
    """A listed item with its kind (list items carry none, and a metadata-only
    list's say PartialObjectMetadata)."""
    def held(item: Dict[str, Any]) -> Dict[str, Any]:
        if kind in RECORD_KINDS:
            item = {"metadata": item.get("metadata") or {}}
        item.setdefault("apiVersion", api_version)
        item.setdefault("kind", kind)
        return item
    return held


def _comparable(status: Optional[UpdateStatusStatus]) -> Dict[str, Any]:
    return {k: v for k, v in (status or {}).items() if k not in VOLATILE}
