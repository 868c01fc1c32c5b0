"""plugins/module_utils/updatestatus/keeper.py: what the keeper reads, and what it
does with a namespace the credentials may not list."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional

import pytest
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import DynamicApiError

from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus import keeper as update_status
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=timezone.utc)


def _denied(resource: str, namespace: str) -> DynamicApiError:
    exc = ApiException(status=403, reason="Forbidden")
    exc.body = json.dumps({"kind": "Status", "code": 403, "reason": "Forbidden", "message": (
        f'{resource} is forbidden: User "system:serviceaccount:mine:lcm-runner" cannot list resource '
        f'"{resource}" in API group "" in the namespace "{namespace}"')}).encode()
    return DynamicApiError(exc)


class _List:
    def __init__(self, items: List[Dict[str, Any]]) -> None:
        self.items = items

    def to_dict(self) -> Dict[str, Any]:
        return {"items": self.items}


class _Res:
    def __init__(self, kind: str, cluster: "_Cluster") -> None:
        self.kind, self.name, self.cluster = kind, kind.lower() + "s", cluster

    def get(self, namespace: Optional[str] = None, label_selector: Optional[str] = None, **_: Any) -> _List:
        if namespace in self.cluster.forbidden:
            raise _denied(self.name, namespace)
        if namespace in self.cluster.broken:
            exc = ApiException(status=500, reason="Internal Server Error")
            exc.body = b'{"kind": "Status", "code": 500, "message": "etcdserver: request timed out"}'
            raise DynamicApiError(exc)
        return _List([o for o in self.cluster.objects if o["kind"] == self.kind
                      and namespace in (None, o["metadata"].get("namespace"))])


class _Cluster:
    """Two namespaces with a service; the account may list in `mine` only."""

    def __init__(self, forbidden: tuple = (), broken: tuple = ()) -> None:
        self.forbidden, self.broken = set(forbidden), set(broken)
        self.objects = [
            {"kind": "ServiceLifecycle", "metadata": {"name": "keystone", "namespace": ns},
             "spec": {"service": "keystone"}, "status": {"state": "Operational"}}
            for ns in ("mine", "theirs")
        ] + [{"kind": "Pod", "metadata": {"name": f"keystone-api-{ns}", "namespace": ns}} for ns in ("mine", "theirs")]
        self.resources = self

    def get(self, api_version: str, kind: str) -> _Res:
        return _Res(kind, self)


def test_a_namespace_the_credentials_may_not_list_is_marked_unread() -> None:
    keeper = update_status.StatusKeeper(_Cluster(forbidden=("theirs",)))
    snap = keeper.snapshot(NOW)
    assert snap.unread == {"theirs"}
    assert [p["metadata"]["name"] for p in snap.pods] == ["keystone-api-mine"]
    assert len(snap.lifecycles) == 2  # the records themselves are read cluster-wide


def test_every_namespace_read_is_none_unread() -> None:
    snap = update_status.StatusKeeper(_Cluster()).snapshot(NOW)
    assert snap.unread == set() and len(snap.pods) == 2


def test_any_other_failure_to_list_is_an_error() -> None:
    with pytest.raises(PhaseError, match="could not list pods in namespace theirs: HTTP 500"):
        update_status.StatusKeeper(_Cluster(broken=("theirs",))).snapshot(NOW)


def test_refresh_is_quiet_only_when_the_crd_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The phase engine refreshes on a best-effort basis: a cluster without the
    UpdateStatus CRD is fine (known by the error's type, not its words); any
    other failure becomes a warning naming it."""
    from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import CrdMissing

    def missing(dyn: Any, *args: Any, **kwargs: Any) -> None:
        raise CrdMissing("the UpdateStatus CRD is gone", "UpdateStatus")

    monkeypatch.setattr(update_status.StatusKeeper, "__init__", missing)
    assert update_status.refresh(object()) == ""

    def denied(dyn: Any, *args: Any, **kwargs: Any) -> None:
        raise PhaseError("the status could not be written: is not installed in the words only")

    monkeypatch.setattr(update_status.StatusKeeper, "__init__", denied)
    assert update_status.refresh(object()) == (
        "the UpdateStatus was not refreshed: the status could not be written: is not installed in the words only")
