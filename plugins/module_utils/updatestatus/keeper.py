# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Keep the UpdateStatus singleton: read the cluster, compute, write if changed.

What is read: every ServiceLifecycle and Phase, and in each namespace that has
a ServiceLifecycle its pods, Deployments, Jobs, Services, EndpointSlices and
the metadata of Helm's release records (the Secrets labelled owner=helm; their
data, which holds the release's values, is dropped as soon as it is read).
A namespace whose objects the credentials may not list keeps the entries it
had: a runner bound in its own namespaces only (docs/rbac.md) refreshes
those, and leaves the others to whoever may read them.
What is computed is in updatestatus/assessment.py and insights/; this file only talks to
the apiserver. The status is written with server-side apply under the
collection's field manager, and only when something but the time changed, so
`kubectl get updatestatus cluster -w` shows changes, not ticks.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Dict, List, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.assessment import cluster_status
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import DynamicApiError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.crd import lcm_resource
from ansible_collections.lcm.openstack.plugins.module_utils.kube.objects import applied, get_or_none
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import CrdMissing, PhaseError, api_error, is_authorization_denial
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import Settings, Snapshot
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import (
    API_VERSION, LIFECYCLE_KIND, PHASE_KIND,
)
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.report import report

KIND = "UpdateStatus"
NAME = "cluster"
VOLATILE = ("observedAt",)

# (api_version, kind, label selector) listed in each namespace with a service;
# Snapshot.from_objects keeps only the metadata of Helm's release Secrets.
NAMESPACED = (
    ("v1", "Pod", None),
    ("apps/v1", "Deployment", None),
    ("batch/v1", "Job", None),
    ("v1", "Service", None),
    ("discovery.k8s.io/v1", "EndpointSlice", None),
    ("v1", "Secret", "owner=helm"),
)


class _Unreadable(Exception):
    """The credentials may not list a namespace's objects."""


class StatusKeeper:
    def __init__(self, dyn: Any, settings: Optional[Settings] = None, check_mode: bool = False) -> None:
        self.dyn, self.check_mode = dyn, check_mode
        self.settings = settings or Settings()
        self.res = lcm_resource(dyn, KIND)

    def run(self, details: str = "none", now: Optional[datetime] = None) -> Dict[str, Any]:
        now = now or datetime.now(timezone.utc)
        previous = self._current()
        snapshot = self.snapshot(now)
        status = cluster_status(snapshot, self.settings, (previous or {}).get("status"))
        changed = _comparable(status) != _comparable((previous or {}).get("status"))
        if changed and not self.check_mode:
            self._write(status, previous is None)
        return {"changed": changed, "status": status, "report": report(status, details, now)}

    # -- reading -------------------------------------------------------------
    def snapshot(self, now: datetime) -> Snapshot:
        lifecycles = self._list(API_VERSION, LIFECYCLE_KIND)
        objects = lifecycles + self._list(API_VERSION, PHASE_KIND)
        unread = set()
        for namespace in sorted({(s["metadata"].get("namespace") or "") for s in lifecycles}):
            try:
                found = [o for api_version, kind, selector in NAMESPACED
                         for o in self._list(api_version, kind, namespace, selector)]
            except _Unreadable:
                # An account bound in its own namespaces (docs/rbac.md) keeps
                # their entries; another namespace's stay as last written.
                unread.add(namespace)
                continue
            objects += found
        snapshot = Snapshot.from_objects(objects, now)
        snapshot.unread = unread
        return snapshot

    def _list(self, api_version: str, kind: str, namespace: Optional[str] = None,
              selector: Optional[str] = None) -> List[Dict[str, Any]]:
        res = (lcm_resource(self.dyn, kind) if api_version == API_VERSION
               else self.dyn.resources.get(api_version=api_version, kind=kind))
        try:
            items = res.get(namespace=namespace, label_selector=selector).to_dict().get("items") or []
        except DynamicApiError as exc:
            if namespace and is_authorization_denial(exc):
                raise _Unreadable(namespace) from exc
            raise api_error(exc, "list", res.name, namespace) from exc
        for item in items:  # list items carry no kind
            item.setdefault("apiVersion", api_version)
            item.setdefault("kind", kind)
        return items

    def _current(self) -> Optional[Dict[str, Any]]:
        return get_or_none(self.res, NAME)

    # -- writing -------------------------------------------------------------
    def _write(self, status: Dict[str, Any], create: bool) -> None:
        body = {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": NAME,
                "labels": {"app.kubernetes.io/managed-by": "lcm.openstack"}}}
        if create:
            applied(self.res, dict(body, spec={}), what="updatestatuses")
        applied(self.res.status, dict(body, status=status), what="updatestatuses/status")


def refresh(dyn: Any) -> str:
    """Best effort, for the phase engine when a phase starts: '' when the
    singleton was refreshed (or its CRD is not installed), else a warning."""
    try:
        StatusKeeper(dyn).run()
    except CrdMissing:
        return ""
    except PhaseError as exc:
        return f"the UpdateStatus was not refreshed: {exc}"
    return ""


def _comparable(status: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    return {k: v for k, v in (status or {}).items() if k not in VOLATILE}
