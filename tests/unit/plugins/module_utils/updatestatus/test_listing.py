"""plugins/module_utils/updatestatus/listing.py: one kind across the services'
namespaces, cluster-wide in pages, namespace by namespace when that is denied."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Set, Tuple, Union

import pytest
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import DynamicApiError

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.plain import plain
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus import listing

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


class _Page:
    def __init__(self, items: List[Dict[str, Any]], token: Optional[str]) -> None:
        self.items, self.token = items, token

    def to_dict(self) -> Dict[str, Any]:
        return {"metadata": {"continue": self.token} if self.token else {}, "items": self.items}


class _Pods:
    """A resource answering each (namespace, continue token) from a script:
    (items, next token), or an error; an answer given as a list is used up
    one request at a time."""

    name = "pods"

    def __init__(self, script: Dict[Key, Any]) -> None:
        self.script = script
        self.requests: List[Dict[str, Any]] = []

    def get(self, namespace: Optional[str] = None, label_selector: Optional[str] = None,
            limit: Optional[int] = None, _continue: Optional[str] = None, serializer: Any = None) -> _Page:
        assert serializer is plain  # parsed JSON, not a ResourceInstance built field by field
        self.requests.append({"namespace": namespace, "selector": label_selector, "limit": limit,
                              "continue": _continue})
        answer: Union[DynamicApiError, Tuple[List[Dict[str, Any]], Optional[str]]] = self.script[namespace, _continue]
        if isinstance(answer, list):
            answer = answer.pop(0)
        if isinstance(answer, DynamicApiError):
            raise answer
        items, token = answer
        return _Page([dict(i) for i in items], token)


def _across(pods: _Pods, namespaces: Set[str], unread: Optional[Set[str]] = None) -> List[str]:
    found = listing.across(pods, namespaces, "app=x", lambda item: item, set() if unread is None else unread)
    return [f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in found]


def test_one_cluster_wide_list_keeps_only_the_services_namespaces() -> None:
    pods = _Pods({(None, None): ([_pod("mine", "a"), _pod("kube-system", "coredns"), _pod("theirs", "b")], None)})
    assert _across(pods, {"mine", "theirs"}) == ["mine/a", "theirs/b"]
    assert pods.requests == [{"namespace": None, "selector": "app=x", "limit": listing.PAGE, "continue": None}]


def test_pages_are_followed_by_their_continue_token() -> None:
    pods = _Pods({(None, None): ([_pod("mine", "a"), _pod("other", "x")], "t1"),
                  (None, "t1"): ([_pod("other", "y"), _pod("mine", "b")], None)})
    assert _across(pods, {"mine"}) == ["mine/a", "mine/b"]
    assert [r["continue"] for r in pods.requests] == [None, "t1"]
    assert {r["limit"] for r in pods.requests} == {500}


def test_what_is_kept_of_a_page_is_kept_before_the_next_is_asked() -> None:
    """A Secret's data is dropped with its page, not at the end of the list."""
    kept: List[str] = []

    class _Secrets(_Pods):
        def get(self, **kwargs: Any) -> _Page:
            if kwargs.get("_continue"):
                assert kept == ["s1"]
            return super().get(**kwargs)

    def keep(item: Dict[str, Any]) -> Dict[str, Any]:
        kept.append(item["metadata"]["name"])
        return {"metadata": item["metadata"]}

    secret = dict(_pod("mine", "s1"), data={"release": "H4sI..."})
    secrets = _Secrets({(None, None): ([secret], "t1"), (None, "t1"): ([], None)})
    assert listing.across(secrets, {"mine"}, "owner=helm", keep, set()) == [{"metadata": secret["metadata"]}]


def test_no_namespace_with_a_service_is_no_request() -> None:
    pods = _Pods({})
    assert _across(pods, set()) == [] and pods.requests == []


def test_a_denied_cluster_wide_list_falls_back_to_one_list_per_namespace() -> None:
    unread: Set[str] = set()
    pods = _Pods({(None, None): _denied(None),
                  ("mine", None): ([_pod("mine", "a")], "t1"), ("mine", "t1"): ([_pod("mine", "b")], None),
                  ("theirs", None): _denied("theirs")})
    assert _across(pods, {"mine", "theirs"}, unread) == ["mine/a", "mine/b"]
    assert unread == {"theirs"}
    assert [(r["namespace"], r["continue"]) for r in pods.requests] == [
        (None, None), ("mine", None), ("mine", "t1"), ("theirs", None)]


def test_a_namespace_already_unread_is_not_asked_again() -> None:
    unread = {"theirs"}
    pods = _Pods({(None, None): _denied(None), ("mine", None): ([_pod("mine", "a")], None)})
    assert _across(pods, {"mine", "theirs"}, unread) == ["mine/a"]
    assert [r["namespace"] for r in pods.requests] == [None, "mine"] and unread == {"theirs"}


def test_an_expired_continue_token_restarts_the_list_once() -> None:
    expired = _error(410, "The provided continue parameter is too old to display a consistent list result.")
    pods = _Pods({(None, None): [([_pod("mine", "a")], "t1"), ([_pod("mine", "a")], "t2")],
                  (None, "t1"): expired, (None, "t2"): ([_pod("mine", "b")], None)})
    assert _across(pods, {"mine"}) == ["mine/a", "mine/b"]  # page one of the expired list is not kept twice
    assert [r["continue"] for r in pods.requests] == [None, "t1", None, "t2"]


def test_a_list_that_expires_twice_is_an_error() -> None:
    expired = _error(410, "The provided continue parameter is too old to display a consistent list result.")
    pods = _Pods({(None, None): ([_pod("mine", "a")], "t1"), (None, "t1"): expired})
    pods.script[None, None] = [pods.script[None, None]] * 2
    with pytest.raises(PhaseError, match="could not list pods: HTTP 410: The provided continue parameter"):
        _across(pods, {"mine"})
    assert len(pods.requests) == 4


@pytest.mark.parametrize("script, message", [
    ({(None, None): _error(500, "etcdserver: request timed out")},
     "could not list pods: HTTP 500: etcdserver: request timed out"),
    ({(None, None): _denied(None), ("mine", None): _error(500, "etcdserver: request timed out")},
     "could not list pods in namespace mine: HTTP 500: etcdserver: request timed out"),
])
def test_any_other_answer_is_the_collections_error(script: Dict[Key, Any], message: str) -> None:
    with pytest.raises(PhaseError, match=message):
        _across(_Pods(script), {"mine"})
