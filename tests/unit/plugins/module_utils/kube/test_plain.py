"""plugins/module_utils/kube/plain.py: a dynamic client response as its parsed
JSON, with what ResourceInstance would have added to a list's items."""

from __future__ import annotations

import json

import pytest
from kubernetes.dynamic.client import meta_request
from kubernetes.dynamic.resource import ResourceInstance

from ansible_collections.lcm.openstack.plugins.module_utils.kube.plain import Plain, plain

LISTED = {"apiVersion": "batch/v1", "kind": "JobList", "metadata": {"resourceVersion": "7"},
          "items": [{"metadata": {"name": "db-sync"}, "status": {"succeeded": 1}},
                    {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "db-init"}}]}
ONE = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "keystone-db"}, "data": {"password": "cw=="}}


@pytest.mark.parametrize("body", [LISTED, ONE, {"apiVersion": "v1", "kind": "PodList", "items": None}])
def test_to_dict_is_what_resource_instance_gives(body: dict) -> None:
    assert plain(None, json.loads(json.dumps(body))).to_dict() == \
        ResourceInstance(None, json.loads(json.dumps(body))).to_dict()


def test_the_object_itself_no_copy() -> None:
    body = json.loads(json.dumps(ONE))
    assert plain(None, body).to_dict() is body


class _Response:
    def __init__(self, body: dict) -> None:
        self.data = json.dumps(body).encode()


def test_the_dynamic_client_returns_it_when_asked() -> None:
    """serializer= is the dynamic client's own hook (meta_request, around every
    request): it is called with the client and the parsed body."""
    request = meta_request(lambda _client, _method, _path, **_params: _Response(LISTED))
    got = request(None, "get", "/apis/batch/v1/namespaces/ns/jobs", serializer=plain)
    assert isinstance(got, Plain)
    assert [i["kind"] for i in got.to_dict()["items"]] == ["Job", "Job"]
    assert isinstance(request(None, "get", "/apis/batch/v1/namespaces/ns/jobs"), ResourceInstance)
