"""plugins/module_utils/kube/paging.py: one list, page by page."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import DynamicApiError
from support.fake_lists import Page, ScriptedList

from ansible_collections.lcm.openstack.plugins.module_utils.kube import paging

EXPIRED = "The provided continue parameter is too old to display a consistent list result."


def _expired() -> DynamicApiError:
    exc = ApiException(status=410, reason="Gone")
    exc.body = json.dumps({"kind": "Status", "code": 410, "message": EXPIRED}).encode()
    return DynamicApiError(exc)


def _pod(namespace: str, name: str) -> Dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {}}


def _names(items: List[Dict[str, Any]]) -> List[str]:
    return [f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in items]


def test_pages_are_followed_by_their_continue_token_and_other_namespaces_dropped() -> None:
    pods = ScriptedList({(None, None): ([_pod("mine", "a"), _pod("other", "x")], "t1"),
                         (None, "t1"): ([_pod("other", "y"), _pod("mine", "b")], None)})
    assert _names(paging.read(pods, None, None, lambda item: item, {"mine"})) == ["mine/a", "mine/b"]
    assert [r["continue"] for r in pods.requests] == [None, "t1"]
    assert {r["limit"] for r in pods.requests} == {paging.PAGE}


def test_one_namespace_is_asked_for_with_its_selector() -> None:
    pods = ScriptedList({("mine", None): ([_pod("mine", "a")], None)})
    assert _names(paging.read(pods, "mine", "app=x", lambda item: item)) == ["mine/a"]
    assert pods.requests == [{"namespace": "mine", "selector": "app=x", "limit": paging.PAGE, "continue": None}]


def test_what_is_kept_of_a_page_is_kept_before_the_next_is_asked() -> None:
    """A Secret's data is dropped with its page, not at the end of the list."""
    kept: List[str] = []

    class _Secrets(ScriptedList):
        def get(self, **kwargs: Any) -> Page:
            if kwargs.get("_continue"):
                assert kept == ["s1"]
            return super().get(**kwargs)

    def keep(item: Dict[str, Any]) -> Dict[str, Any]:
        kept.append(item["metadata"]["name"])
        return {"metadata": item["metadata"]}

    secret = dict(_pod("mine", "s1"), data={"release": "H4sI..."})
    secrets = _Secrets({(None, None): ([secret], "t1"), (None, "t1"): ([], None)})
    assert paging.read(secrets, None, "owner=helm", keep) == [{"metadata": secret["metadata"]}]


def test_an_expired_continue_token_restarts_the_list_once() -> None:
    pods = ScriptedList({(None, None): [([_pod("mine", "a")], "t1"), ([_pod("mine", "a")], "t2")],
                         (None, "t1"): _expired(), (None, "t2"): ([_pod("mine", "b")], None)})
    # Page one of the expired list is not kept twice.
    assert _names(paging.read(pods, None, None, lambda item: item)) == ["mine/a", "mine/b"]
    assert [r["continue"] for r in pods.requests] == [None, "t1", None, "t2"]


def test_a_list_that_expires_twice_raises_the_apiservers_answer() -> None:
    pods = ScriptedList({(None, None): [([_pod("mine", "a")], "t1")] * 2, (None, "t1"): _expired()})
    with pytest.raises(DynamicApiError) as raised:
        paging.read(pods, None, None, lambda item: item)
    assert raised.value.status == 410 and len(pods.requests) == 4


def test_a_metadata_only_list_asks_for_it_and_keeps_the_metadata_alone() -> None:
    """The apiserver's PartialObjectMetadataList: what a caller that reads labels
    needs, without the Secrets' data on the wire."""
    class _Secrets(ScriptedList):
        def get(self, **kwargs: Any) -> Page:
            self.accept = kwargs.pop("header_params")["Accept"]
            return super().get(**kwargs)

    secrets = _Secrets({(None, None): ([{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
                                         "metadata": {"name": "r.v1", "namespace": "mine"}}], None)})
    kept = paging.read(secrets, None, "owner=helm", lambda item: item, metadata_only=True)
    assert kept == [{"metadata": {"name": "r.v1", "namespace": "mine"}}]
    assert secrets.accept.split(",")[0] == "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
