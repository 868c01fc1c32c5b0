"""plugins/module_utils/kube/crd.py: the collection's CRDs behind a discovery cache
that outlived them (no cluster needed: the cluster's CRDs must not be deleted)."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import pytest
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError
from kubernetes.watch.watch import Watch, _find_return_type

from ansible_collections.lcm.openstack.plugins.module_utils.kube.crd import CrdResource, crd_missing, lcm_resource
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import CrdMissing, KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow import LifecycleRequest
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.runner import run as run_flow
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.info import list_lifecycle
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.record import Lifecycle
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.keeper import StatusKeeper

SLC = "lifecycle.openstack.org/v1alpha1", "ServiceLifecycle"
NOT_INSTALLED = ("the ServiceLifecycle CRD (servicelifecycles.lifecycle.openstack.org) is not installed: "
                 "run the lcm.openstack.crds role first")


def _404(body: Optional[bytes]) -> NotFoundError:
    exc = ApiException(status=404, reason="Not Found")
    exc.body = body
    return NotFoundError(exc)


class _Obj:
    def __init__(self, data: Dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> Dict[str, Any]:
        return self.data


class _Resource:
    """A resource as discovery gave it; its path answers as the cluster does now."""

    def __init__(self, cluster: "_Cluster", kind: str, version: str) -> None:
        self.cluster, self.kind, self.version = cluster, kind, version
        self.name, self.namespaced = kind.lower() + "s", True
        self.status = _Status(self)

    def _answer(self, call: str, name: Optional[str] = None) -> _Obj:
        self.cluster.requests.append((call, self.version))
        if self.cluster.served.get(self.kind) != self.version:
            raise _404(b"404 page not found\n")  # the resource path itself is gone
        if name is not None and name not in self.cluster.objects:
            raise _404(json.dumps({"kind": "Status", "reason": "NotFound", "code": 404,
                                   "message": f'{self.name} "{name}" not found',
                                   "details": {"name": name, "kind": self.name}}).encode())
        return _Obj({"metadata": {"name": name or ""}, "version": self.version})

    def get(self, name: Optional[str] = None, namespace: Optional[str] = None, **_kw: Any) -> _Obj:
        return self._answer("get", name)

    def create(self, body: Dict[str, Any], namespace: Optional[str] = None) -> _Obj:
        obj = self._answer("create")
        self.cluster.objects.add(body["metadata"]["name"])
        return obj

    def server_side_apply(self, body: Dict[str, Any], name: str, **_kw: Any) -> _Obj:
        obj = self._answer("apply")
        self.cluster.objects.add(name)
        return obj


class _Status:
    def __init__(self, parent: _Resource) -> None:
        self.parent = parent

    def replace(self, body: Dict[str, Any], namespace: Optional[str] = None) -> _Obj:
        return self.parent._answer("status.replace")  # pylint: disable=protected-access


class _Cluster:
    """What the apiserver serves now (kind: version), and a discovery cache
    that remembers what it served when the cache was written."""

    def __init__(self, served: Dict[str, str]) -> None:
        self.served = dict(served)
        self.objects: set = set()
        self.requests: List[tuple] = []
        self.invalidations = 0
        self.resources = self  # dyn.resources
        self.cache = dict(served)

    def get(self, api_version: str, kind: str) -> _Resource:
        if kind not in self.cache:
            raise ResourceNotFoundError(f"No matches found for {kind}")
        return _Resource(self, kind, self.cache[kind])

    def invalidate_cache(self) -> None:
        self.invalidations += 1
        self.cache = dict(self.served)


def test_a_crd_removed_behind_a_stale_cache_is_said_to_be_missing() -> None:
    cluster = _Cluster({"ServiceLifecycle": "v1alpha1"})
    res = lcm_resource(cluster, "ServiceLifecycle")
    del cluster.served["ServiceLifecycle"]  # `kubectl delete crd`: the cache still has it
    with pytest.raises(KubeError) as err:
        res.get(name="keystone", namespace="openstack")
    assert str(err.value) == NOT_INSTALLED
    assert isinstance(err.value.__cause__, NotFoundError)
    assert cluster.invalidations == 1 and cluster.requests == [("get", "v1alpha1")]


def test_a_crd_that_came_back_is_looked_up_again_and_the_request_sent_once_more() -> None:
    cluster = _Cluster({"ServiceLifecycle": "v1alpha1"})
    res = lcm_resource(cluster, "ServiceLifecycle")
    cluster.served["ServiceLifecycle"] = "v1beta1"  # reinstalled under another version
    assert res.create(body={"metadata": {"name": "keystone"}}).to_dict()["version"] == "v1beta1"
    assert cluster.requests == [("create", "v1alpha1"), ("create", "v1beta1")]
    # from then on the fresh resource answers, with no second refresh
    assert res.status.replace(body={}).to_dict()["version"] == "v1beta1"
    assert cluster.invalidations == 1


def test_a_path_still_gone_after_the_refresh_is_raised_as_it_is() -> None:
    """Discovery serves it, the path does not answer: the 404 is the caller's to word."""
    cluster = _Cluster({"ServiceLifecycle": "v1alpha1"})
    res = lcm_resource(cluster, "ServiceLifecycle")
    cluster.served["ServiceLifecycle"] = "v1beta1"
    cluster.cache = {"ServiceLifecycle": "v1alpha1"}
    cluster.invalidate_cache = lambda: None  # type: ignore[method-assign]
    with pytest.raises(NotFoundError):
        res.get(namespace="openstack")
    assert cluster.requests == [("get", "v1alpha1"), ("get", "v1alpha1")]


def test_a_missing_object_is_not_a_missing_crd() -> None:
    cluster = _Cluster({"ServiceLifecycle": "v1alpha1"})
    res = lcm_resource(cluster, "ServiceLifecycle")
    with pytest.raises(NotFoundError):
        res.get(name="nobody", namespace="openstack")
    assert cluster.invalidations == 0
    assert Lifecycle(cluster, "openstack", "nobody", "nobody").get() is None


def test_the_subresource_goes_through_the_refresh_too() -> None:
    cluster = _Cluster({"ServiceLifecycle": "v1alpha1"})
    res = lcm_resource(cluster, "ServiceLifecycle")
    del cluster.served["ServiceLifecycle"]
    with pytest.raises(KubeError, match="is not installed"):
        res.status.replace(body={}, namespace="openstack")


def test_it_reads_like_the_resource() -> None:
    cluster = _Cluster({"ServiceLifecycle": "v1alpha1"})
    res = lcm_resource(cluster, "ServiceLifecycle")
    assert (res.kind, res.name, res.namespaced, res.version) == ("ServiceLifecycle", "servicelifecycles", True,
                                                                 "v1alpha1")
    # dyn.watch(res) streams res.get: the kubernetes watch reads no return type from it and uses `watch=`
    assert _find_return_type(res.get) == ""
    assert Watch().get_watch_argument_name(res.get) == "watch"


def test_a_crd_not_in_discovery_at_all_gives_the_same_line_everywhere() -> None:
    cluster = _Cluster({})
    with pytest.raises(KubeError) as err:
        Lifecycle(cluster, "openstack", "keystone", "keystone")
    assert str(err.value) == NOT_INSTALLED and isinstance(err.value.__cause__, ResourceNotFoundError)
    with pytest.raises(KubeError, match=r"^the Phase CRD \(phases.lifecycle.openstack.org\) is not installed"):
        list_lifecycle(cluster, "openstack")
    with pytest.raises(KubeError, match=r"^the UpdateStatus CRD \(updatestatuses.lifecycle.openstack.org\)"):
        StatusKeeper(cluster)
    assert str(crd_missing("Phase")) == ("the Phase CRD (phases.lifecycle.openstack.org) is not installed: "
                                         "run the lcm.openstack.crds role first")
    assert isinstance(crd_missing("Phase"), CrdMissing) and crd_missing("Phase").kind == "Phase"


def test_the_service_lifecycle_flow_says_so_when_its_crd_went_away() -> None:
    """What the service_lifecycle module runs: the record's read no longer
    takes the 404 of a removed CRD for a service without a record."""
    cluster = _Cluster({"ServiceLifecycle": "v1alpha1"})
    lifecycle = Lifecycle(cluster, "openstack", "keystone", "keystone")
    del cluster.served["ServiceLifecycle"]
    with pytest.raises(KubeError) as err:
        run_flow(lifecycle, LifecycleRequest(service="keystone", release="keystone", namespace="openstack"))
    assert str(err.value) == NOT_INSTALLED


def test_a_crd_of_another_group_words_its_own_absence() -> None:
    cluster = _Cluster({"Widget": "v1"})
    res = CrdResource(cluster, "example.com/v1", "Widget", lambda: KubeError("no widgets here"))
    del cluster.served["Widget"]
    with pytest.raises(KubeError, match="^no widgets here$"):
        res.get(namespace="x")
