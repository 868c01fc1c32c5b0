"""plugins/module_utils/site/records.py: the site's ServiceLifecycles in one
list (a namespace's, or the cluster's), per namespace where the cluster-wide
list is denied, none at all without the CRD."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import pytest
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import DynamicApiError, NotFoundError, ResourceNotFoundError

from support.fake_lists import ScriptedList

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.paging import PAGE
from ansible_collections.lcm.openstack.plugins.module_utils.site.records import read_records


class _Lifecycles(ScriptedList):
    name = "servicelifecycles"


class _Dyn:
    """A dynamic client whose discovery serves `res` as the ServiceLifecycle resource (None: no CRD)."""

    def __init__(self, res: Optional[Any]) -> None:
        self.res, self.resources = res, self

    def get(self, api_version: str, kind: str) -> Any:
        assert (api_version, kind) == ("lifecycle.openstack.org/v1alpha1", "ServiceLifecycle")
        if self.res is None:
            raise ResourceNotFoundError(f"No matches found for {kind}")
        return self.res

    def invalidate_cache(self) -> None:
        self.res = None  # the CRD is gone for discovery too


def _error(status: int, message: str) -> DynamicApiError:
    exc = ApiException(status=status, reason="")
    exc.body = json.dumps({"kind": "Status", "code": status, "message": message}).encode()
    return DynamicApiError(exc)


def _denied(namespace: Optional[str]) -> DynamicApiError:
    where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    return _error(403, f'servicelifecycles.lifecycle.openstack.org is forbidden: User "system:serviceaccount:mine:runner" '
                       f'cannot list resource "servicelifecycles" in API group "lifecycle.openstack.org" {where}')


def _slc(namespace: str, name: str, state: str = "Operational", version: str = "2025.1") -> Dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "resourceVersion": "7"},
            "spec": {"service": name, "release": name},
            "status": {"state": state, "currentVersion": version, "previousVersion": "2024.2",
                       "history": [{"name": f"{name}-install-1", "type": "install", "result": "Succeeded"}],
                       "flow": {"name": "greenfield", "state": "Succeeded", "targetVersion": version,
                                "phases": [f"{name}-install-1"], "planned": ["install"]}}}


def _where(requests: List[Dict[str, Any]]) -> List[Any]:
    return [(r["namespace"], r["continue"]) for r in requests]


def test_a_site_in_one_namespace_is_one_list_of_that_namespace() -> None:
    res = _Lifecycles({("openstack", None): ([_slc("openstack", "keystone"), _slc("openstack", "mariadb")], None)})
    found = read_records(_Dyn(res), ["openstack", "openstack"])
    assert sorted(found) == [("openstack", "keystone"), ("openstack", "mariadb")]
    assert res.requests == [{"namespace": "openstack", "selector": None, "limit": PAGE, "continue": None}]


def test_what_is_kept_is_what_the_decision_reads() -> None:
    res = _Lifecycles({("openstack", None): ([_slc("openstack", "keystone")], None)})
    assert read_records(_Dyn(res), ["openstack"])["openstack", "keystone"] == {
        "metadata": {"name": "keystone", "namespace": "openstack"}, "spec": {"service": "keystone", "release": "keystone"},
        "status": {"state": "Operational", "currentVersion": "2025.1",
                   "flow": {"name": "greenfield", "state": "Succeeded", "targetVersion": "2025.1"}}}


def test_a_site_across_namespaces_is_one_cluster_wide_list_in_pages() -> None:
    res = _Lifecycles({(None, None): ([_slc("infra", "mariadb"), _slc("kube-system", "other")], "t1"),
                       (None, "t1"): ([_slc("openstack", "keystone")], None)})
    found = read_records(_Dyn(res), ["openstack", "infra"])
    assert sorted(found) == [("infra", "mariadb"), ("openstack", "keystone")]
    assert _where(res.requests) == [(None, None), (None, "t1")]


def test_a_denied_cluster_wide_list_is_one_list_per_namespace() -> None:
    res = _Lifecycles({(None, None): _denied(None), ("infra", None): ([_slc("infra", "mariadb")], None),
                       ("openstack", None): ([_slc("openstack", "keystone")], None)})
    assert sorted(read_records(_Dyn(res), ["openstack", "infra"])) == [("infra", "mariadb"), ("openstack", "keystone")]
    assert _where(res.requests) == [(None, None), ("infra", None), ("openstack", None)]


def test_a_denied_namespace_fails_the_plan_naming_what_to_grant() -> None:
    res = _Lifecycles({(None, None): _denied(None), ("infra", None): _denied("infra")})
    with pytest.raises(KubeError, match=r"^forbidden: the credentials in use may not list servicelifecycles "
                                        r"in namespace infra\. Grant the verb 'list'"):
        read_records(_Dyn(res), ["openstack", "infra"])


@pytest.mark.parametrize("script, message", [
    ({("openstack", None): _error(500, "etcdserver: request timed out")},
     "could not list servicelifecycles in namespace openstack: HTTP 500: etcdserver: request timed out"),
])
def test_any_other_answer_is_the_collections_error(script: Dict[Any, Any], message: str) -> None:
    with pytest.raises(KubeError, match=f"^{message}$"):
        read_records(_Dyn(_Lifecycles(script)), ["openstack"])


def test_a_cluster_wide_error_that_is_no_denial_is_not_retried_per_namespace() -> None:
    res = _Lifecycles({(None, None): _error(500, "etcdserver: leader changed")})
    with pytest.raises(KubeError, match="^could not list servicelifecycles: HTTP 500"):
        read_records(_Dyn(res), ["a", "b"])
    assert len(res.requests) == 1


def test_no_crd_is_no_record() -> None:
    assert read_records(_Dyn(None), ["openstack"]) == {}


def test_a_crd_removed_behind_a_stale_discovery_is_no_record() -> None:
    gone = ApiException(status=404, reason="Not Found")
    gone.body = b"404 page not found"
    res = _Lifecycles({("openstack", None): NotFoundError(gone)})
    assert read_records(_Dyn(res), ["openstack"]) == {}


def test_no_namespace_is_no_request() -> None:
    res = _Lifecycles({})
    assert read_records(_Dyn(res), []) == {} and res.requests == []
