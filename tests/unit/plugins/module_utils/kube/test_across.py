"""plugins/module_utils/kube/across.py: one kind across the services'
namespaces, cluster-wide in pages, namespace by namespace when that is denied."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Set, Tuple

import pytest
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import DynamicApiError

from support.fake_lists import ScriptedList

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.paging import PAGE
from ansible_collections.lcm.openstack.plugins.module_utils.kube import across as listing

Key = Tuple[Optional[str], Optional[str]]  # (namespace, continue token) of a request


def _error(status: int, message: str) -> DynamicApiError:
    exc = ApiException(status=status, reason="")
    exc.body = json.dumps({"kind": "Status", "code": status, "message": message}).encode()
    return DynamicApiError(exc)


def _denied(namespace: Optional[str]) -> DynamicApiError:
    where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    return _error(403, f'pods is forbidden: User "system:serviceaccount:mine:lcm-runner" cannot list '
                       f'resource "pods" in API group "" {where}')


def _pod(namespace: str, name: str) -> Dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {}}


def _across(pods: ScriptedList, namespaces: Set[str], unread: Optional[Set[str]] = None) -> List[str]:
    found = listing.across(pods, namespaces, "app=x", lambda item: item, set() if unread is None else unread)
    return [f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in found]


def test_one_cluster_wide_list_keeps_only_the_services_namespaces() -> None:
    pods = ScriptedList({(None, None): ([_pod("mine", "a"), _pod("kube-system", "coredns"), _pod("theirs", "b")], None)})
    assert _across(pods, {"mine", "theirs"}) == ["mine/a", "theirs/b"]
    assert pods.requests == [{"namespace": None, "selector": "app=x", "limit": PAGE, "continue": None}]


def test_no_namespace_with_a_service_is_no_request() -> None:
    pods = ScriptedList({})
    assert _across(pods, set()) == [] and pods.requests == []


def test_a_denied_cluster_wide_list_falls_back_to_one_list_per_namespace() -> None:
    unread: Set[str] = set()
    pods = ScriptedList({(None, None): _denied(None),
                         ("mine", None): ([_pod("mine", "a")], "t1"), ("mine", "t1"): ([_pod("mine", "b")], None),
                         ("theirs", None): _denied("theirs")})
    assert _across(pods, {"mine", "theirs"}, unread) == ["mine/a", "mine/b"]
    assert unread == {"theirs"}
    assert [(r["namespace"], r["continue"]) for r in pods.requests] == [
        (None, None), ("mine", None), ("mine", "t1"), ("theirs", None)]


def test_a_namespace_already_unread_is_not_asked_again() -> None:
    unread = {"theirs"}
    pods = ScriptedList({(None, None): _denied(None), ("mine", None): ([_pod("mine", "a")], None)})
    assert _across(pods, {"mine", "theirs"}, unread) == ["mine/a"]
    assert [r["namespace"] for r in pods.requests] == [None, "mine"] and unread == {"theirs"}


@pytest.mark.parametrize("script, message", [
    ({(None, None): _error(500, "etcdserver: request timed out")},
     "could not list pods: HTTP 500: etcdserver: request timed out"),
    ({(None, None): _denied(None), ("mine", None): _error(500, "etcdserver: request timed out")},
     "could not list pods in namespace mine: HTTP 500: etcdserver: request timed out"),
])
def test_any_other_answer_is_the_collections_error(script: Dict[Key, Any], message: str) -> None:
    with pytest.raises(KubeError, match=message):
        _across(ScriptedList(script), {"mine"})
