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
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError, LifecycleError, PhaseError

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=timezone.utc)


CRDS = ("ServiceLifecycle", "Phase")  # listed cluster-wide by the update-status ClusterRole


def _denied(resource: str, namespace: Optional[str]) -> DynamicApiError:
    where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    exc = ApiException(status=403, reason="Forbidden")
    exc.body = json.dumps({"kind": "Status", "code": 403, "reason": "Forbidden", "message": (
        f'{resource} is forbidden: User "system:serviceaccount:mine:lcm-runner" cannot list resource '
        f'"{resource}" in API group "" {where}')}).encode()
    return DynamicApiError(exc)


class _List:
    def __init__(self, items: List[Dict[str, Any]], token: Optional[str] = None) -> None:
        self.items, self.token = items, token

    def to_dict(self) -> Dict[str, Any]:
        return {"metadata": {"continue": self.token} if self.token else {}, "items": self.items}


class _Res:
    """Lists as the apiserver does: `limit` items a page, the next page's offset as the continue token."""

    def __init__(self, kind: str, cluster: "_Cluster") -> None:
        self.kind, self.name, self.cluster = kind, kind.lower() + "s", cluster

    def get(self, namespace: Optional[str] = None, label_selector: Optional[str] = None,
            limit: Optional[int] = None, _continue: Optional[str] = None, **kwargs: Any) -> _List:
        self.cluster.requests.append((self.kind, namespace))
        self.cluster.accepts[self.kind] = (kwargs.get("header_params") or {}).get("Accept", "")
        if self._names(self.cluster.forbidden, namespace):
            raise _denied(self.name, namespace)
        if self._names(self.cluster.broken, namespace):
            exc = ApiException(status=500, reason="Internal Server Error")
            exc.body = b'{"kind": "Status", "code": 500, "message": "etcdserver: request timed out"}'
            raise DynamicApiError(exc)
        found = [o for o in self.cluster.objects if o["kind"] == self.kind
                 and namespace in (None, o["metadata"].get("namespace"))]
        start = int(_continue or 0)
        end = start + limit if limit else len(found)
        return _List(found[start:end], str(end) if end < len(found) else None)

    def _names(self, entries: set, namespace: Optional[str]) -> bool:
        """Whether `entries` (namespaces, or (kind, namespace) pairs) hold this list."""
        return self.kind not in CRDS and (namespace in entries or (self.kind, namespace) in entries)


class _Cluster:
    """Two namespaces with a service by default. `forbidden` and `broken`
    hold the namespaces (None: the cluster scope), or (kind, namespace)
    pairs, where listing the pods, Jobs, ... is denied or answers 500."""

    def __init__(self, forbidden: tuple = (), broken: tuple = (), namespaces: tuple = ("mine", "theirs")) -> None:
        self.forbidden, self.broken = set(forbidden), set(broken)
        self.requests: List[tuple] = []
        self.accepts: Dict[str, str] = {}  # the Accept header each kind was listed with
        self.objects = [
            {"kind": "ServiceLifecycle", "metadata": {"name": "keystone", "namespace": ns},
             "spec": {"service": "keystone"}, "status": {"state": "Operational"}}
            for ns in namespaces
        ] + [{"kind": "Pod", "metadata": {"name": f"keystone-api-{ns}", "namespace": ns}} for ns in namespaces] + [
            {"kind": "Deployment", "metadata": {"name": "keystone-api", "namespace": ns}} for ns in namespaces]
        self.resources = self

    def get(self, api_version: str, kind: str) -> _Res:
        return _Res(kind, self)


def test_an_account_bound_in_its_own_namespaces_marks_the_others_unread() -> None:
    """docs/rbac.md: no cluster-wide list of pods etc., a RoleBinding in `mine` only."""
    keeper = update_status.StatusKeeper(_Cluster(forbidden=(None, "theirs")))
    snap = keeper.snapshot(NOW)
    assert snap.unread == {"theirs"}
    assert [p["metadata"]["name"] for p in snap.pods] == ["keystone-api-mine"]
    assert len(snap.lifecycles) == 2  # the records themselves are read cluster-wide


def test_every_namespace_read_is_none_unread() -> None:
    snap = update_status.StatusKeeper(_Cluster()).snapshot(NOW)
    assert snap.unread == set() and len(snap.pods) == 2


def _requests(namespaces: int) -> List[tuple]:
    cluster = _Cluster(namespaces=tuple(f"ns{i}" for i in range(namespaces)))
    snap = update_status.StatusKeeper(cluster).snapshot(NOW)
    assert len(snap.pods) == len(snap.lifecycles) == namespaces
    return cluster.requests


def test_the_requests_do_not_grow_with_the_number_of_services() -> None:
    """Per-namespace lists made 3 + 6 requests for one service, 183 for 30."""
    assert len(_requests(30)) == len(_requests(1)) == 2 + len(update_status.NAMESPACED)
    assert all(namespace is None for _kind, namespace in _requests(30))


def test_objects_in_namespaces_without_a_service_are_not_kept() -> None:
    cluster = _Cluster()
    cluster.objects += [{"kind": "Pod", "metadata": {"name": "coredns", "namespace": "kube-system"}}]
    snap = update_status.StatusKeeper(cluster).snapshot(NOW)
    assert sorted(p["metadata"]["namespace"] for p in snap.pods) == ["mine", "theirs"]


def test_a_kind_denied_cluster_wide_is_listed_per_namespace_the_others_are_not() -> None:
    cluster = _Cluster(forbidden=(("Pod", None), ("Pod", "theirs")))
    snap = update_status.StatusKeeper(cluster).snapshot(NOW)
    assert [r for r in cluster.requests if r[0] == "Pod"] == [("Pod", None), ("Pod", "mine"), ("Pod", "theirs")]
    assert [r for r in cluster.requests if r[0] == "Deployment"] == [("Deployment", None)]
    assert snap.unread == {"theirs"}
    # `theirs` stays as last written: not even its Deployments, listed cluster-wide, count.
    assert [d["metadata"]["namespace"] for d in snap.deployments] == ["mine"]


@pytest.mark.parametrize("kind", ["Secret", "ConfigMap"])  # Helm's default driver, and HELM_DRIVER=configmap
def test_helm_release_records_are_held_without_their_data(kind: str) -> None:
    cluster = _Cluster()
    cluster.objects += [{"kind": kind, "data": {"release": "H4sI..."},
                         "metadata": {"name": "sh.helm.release.v1.keystone.v1", "namespace": "mine",
                                      "labels": {"owner": "helm", "name": "keystone"}}},
                        {"kind": "ConfigMap", "data": {"a": "1"},  # not Helm's: not kept
                         "metadata": {"name": "keystone-etc", "namespace": "mine", "labels": {"name": "keystone"}}}]
    keep = update_status._held("v1", kind)  # pylint: disable=protected-access
    assert keep(dict(cluster.objects[0])) == {"apiVersion": "v1", "kind": kind,
                                              "metadata": cluster.objects[0]["metadata"]}
    snap = update_status.StatusKeeper(cluster).snapshot(NOW)
    assert [(r["kind"], r["metadata"]["name"]) for r in snap.releases] == [(kind, "sh.helm.release.v1.keystone.v1")]
    assert "data" not in snap.releases[0]
    # Nor sent: the apiserver is asked for the records' metadata only, and for the rest whole.
    assert cluster.accepts["Secret"].startswith("application/json;as=PartialObjectMetadataList;")
    assert cluster.accepts["ConfigMap"].startswith("application/json;as=PartialObjectMetadataList;")
    assert cluster.accepts["Pod"] == cluster.accepts["Deployment"] == ""


def test_any_other_failure_to_list_is_an_error() -> None:
    with pytest.raises(KubeError, match="could not list pods: HTTP 500: etcdserver"):
        update_status.StatusKeeper(_Cluster(broken=(("Pod", None),))).snapshot(NOW)
    with pytest.raises(KubeError, match="could not list pods in namespace theirs: HTTP 500"):
        update_status.StatusKeeper(_Cluster(forbidden=(None,), broken=("theirs",))).snapshot(NOW)


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


class _Racing:
    """The UpdateStatus singleton as the apiserver keeps it: each write bumps
    its resourceVersion, and a write on another version is refused (409).
    `interleave` runs between a refresh's read of the singleton and its write,
    as another refresh would."""

    def __init__(self, interleave: Any = None) -> None:
        self.current: Optional[Dict[str, Any]] = None
        self.version, self.writes, self.interleave = 0, [], interleave

    def get(self) -> Optional[Dict[str, Any]]:
        return None if self.current is None else {**self.current, "metadata": {"resourceVersion": str(self.version)}}

    def write(self, body: Dict[str, Any]) -> None:
        if self.interleave:
            interleave, self.interleave = self.interleave, None
            interleave()
        if body["metadata"].get("resourceVersion") != str(self.version):
            raise DynamicApiError(ApiException(status=409, reason="Conflict"))
        self.version += 1
        self.current = {"status": body["status"]}
        self.writes.append(body["status"]["services"])


def _keeper(store: _Racing, services: List[str], monkeypatch: pytest.MonkeyPatch) -> update_status.StatusKeeper:
    keeper = object.__new__(update_status.StatusKeeper)
    keeper.dyn, keeper.check_mode, keeper.res = None, False, type("R", (), {"status": None})()
    keeper.settings = update_status.Settings()
    monkeypatch.setattr(keeper, "_current", store.get)
    monkeypatch.setattr(keeper, "snapshot", lambda now: list(services))  # what the cluster holds when read
    return keeper


def test_a_refresh_that_read_the_cluster_before_another_wrote_does_not_put_back_what_it_saw(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two refreshes at once: the slow one read the cluster before glance's
    record was there; the fast one, after. The slow one's write must not
    drop glance: it is refused on the version it read, and it reads again."""
    store = _Racing()
    store.current, cluster = {"status": {"services": ["keystone"]}}, ["keystone"]
    monkeypatch.setattr(update_status, "cluster_status", lambda snap, settings, previous: {"services": list(snap)})
    monkeypatch.setattr(update_status, "server_side_apply", lambda res, body: store.write(body))
    monkeypatch.setattr(update_status, "report", lambda status, details, now: "")
    fast = _keeper(store, [], monkeypatch)

    def glance_created_and_refreshed() -> None:
        cluster.append("glance")
        monkeypatch.setattr(fast, "snapshot", lambda now: list(cluster))
        fast.run(now=NOW)

    store.interleave = glance_created_and_refreshed
    slow = _keeper(store, [], monkeypatch)
    monkeypatch.setattr(slow, "snapshot", lambda now: list(cluster))
    cluster.append("nova")  # what the slow refresh reads first: keystone and nova, not glance yet
    # Its write on the version it read is refused; read again, the cluster is
    # what the other refresh wrote: nothing left to change, glance kept.
    assert slow.run(now=NOW)["changed"] is False
    assert store.current["status"]["services"] == ["keystone", "nova", "glance"]
    assert store.writes == [["keystone", "nova", "glance"]]


def test_a_refresh_written_over_every_time_gives_up_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _Racing()
    store.current = {"status": {"services": []}}
    monkeypatch.setattr(update_status, "cluster_status", lambda snap, settings, previous: {"services": ["x"]})

    def always_refused(res: Any, body: Dict[str, Any]) -> None:
        raise DynamicApiError(ApiException(status=409, reason="Conflict"))
    monkeypatch.setattr(update_status, "server_side_apply", always_refused)
    with pytest.raises(LifecycleError, match="written by others under 5 refreshes in a row"):
        _keeper(store, ["x"], monkeypatch).run(now=NOW)


def test_an_older_crd_gets_the_status_without_the_site_fields_and_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    """An UpdateStatus CRD installed before the site fields refuses them
    (500, field not declared): the rest is written, and the refresh says
    which CRDs to install again, instead of stalling or failing the phase."""
    store = _Racing()
    store.current = {"status": {"services": []}}
    status = {"services": [{"name": "keystone", "site": {"name": "example", "level": 1}}],
              "sites": [{"name": "example"}]}
    monkeypatch.setattr(update_status, "cluster_status", lambda snap, settings, previous: status)
    monkeypatch.setattr(update_status, "report", lambda status, details, now: "")

    def old_crd(res: Any, body: Dict[str, Any]) -> None:
        if "sites" in body["status"] or any("site" in s for s in body["status"]["services"]):
            refused = ApiException(status=500, reason="Internal Server Error")
            refused.body = '{"message":"failed to create typed patch object: .status.sites: field not declared in schema"}'
            raise DynamicApiError(refused)
        store.write(body)
    monkeypatch.setattr(update_status, "server_side_apply", old_crd)
    keeper = _keeper(store, ["keystone"], monkeypatch)
    keeper.warning = ""
    assert keeper.run(now=NOW)["changed"] is True
    assert store.current["status"] == {"services": [{"name": "keystone"}]}
    assert "predates its site fields" in keeper.warning and "lcm.openstack.crds" in keeper.warning
