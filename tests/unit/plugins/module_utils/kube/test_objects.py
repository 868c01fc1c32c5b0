"""plugins/module_utils/kube/objects.py: one object, None when it does not
exist, any other answer worded with what was being done; one server-side
apply for everything the collection owns fields of."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import DynamicApiError
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.plain import plain
from ansible_collections.lcm.openstack.plugins.module_utils.kube.objects import applied, get_or_none, server_side_apply


def _api_error(status: int, reason: str, message: str) -> Exception:
    from kubernetes.client.exceptions import ApiException
    from kubernetes.dynamic.exceptions import api_exception

    exc = ApiException(status=status, reason=reason)
    exc.body = json.dumps({"kind": "Status", "status": "Failure", "message": message, "reason": reason,
                           "code": status}).encode()
    return api_exception(exc)


class _Res:
    """A resource that gives its answers in turn (an exception is raised),
    recording what it was asked: get and server_side_apply alike."""

    name = "servicelifecycles"

    def __init__(self, answers: List[Any]) -> None:
        self.answers, self.asked, self.sent = list(answers), [], []  # type: ignore[var-annotated]

    def _next(self) -> Any:
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return SimpleNamespace(to_dict=lambda: answer)

    def get(self, name: str, namespace: Any = None) -> Any:
        self.asked.append((name, namespace))
        return self._next()

    def server_side_apply(self, **kwargs: Any) -> Any:
        self.sent.append(kwargs)
        return self._next()


@pytest.fixture(autouse=True)
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    real = transient.retry
    monkeypatch.setattr(transient, "retry", lambda call, budget=60.0: real(call, budget, sleep=lambda _s: None))


def test_an_object_that_exists_is_returned_as_a_dict() -> None:
    res = _Res([{"metadata": {"name": "keystone"}}])
    assert get_or_none(res, "keystone", "openstack") == {"metadata": {"name": "keystone"}}
    assert res.asked == [("keystone", "openstack")]


def test_not_found_is_none() -> None:
    assert get_or_none(_Res([_api_error(404, "NotFound", 'servicelifecycles "keystone" not found')]),
                       "keystone", "openstack") is None


def test_a_denial_is_worded_with_the_verb_and_the_resource() -> None:
    denied = _api_error(403, "Forbidden", 'servicelifecycles.lifecycle.openstack.org "keystone" is forbidden: '
                        'User "system:serviceaccount:openstack:runner" cannot get resource "servicelifecycles"')
    assert isinstance(denied, DynamicApiError)
    with pytest.raises(KubeError) as raised:
        get_or_none(_Res([denied]), "keystone", "openstack")
    assert "get servicelifecycles" in str(raised.value) and "openstack" in str(raised.value)


def test_a_dropped_connection_is_read_again() -> None:
    res = _Res([ConnectionResetError(104, "Connection reset by peer"), {"metadata": {"name": "keystone"}}])
    assert get_or_none(res, "keystone", "openstack") == {"metadata": {"name": "keystone"}}
    assert len(res.asked) == 2


BODY = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "keystone-api"}, "spec": {"selector": {}}}


def test_an_apply_takes_over_the_fields_it_sets_under_the_collection_manager() -> None:
    res = _Res([dict(BODY, status={})])
    assert server_side_apply(res, BODY, "openstack") == dict(BODY, status={})
    assert res.sent == [{"body": BODY, "name": "keystone-api", "namespace": "openstack",
                         "field_manager": "lcm.openstack", "force_conflicts": True, "serializer": plain}]


def test_a_dry_run_apply_says_so_and_another_manager_is_kept() -> None:
    res = _Res([BODY])
    server_side_apply(res, BODY, "openstack", manager="lcm.openstack-traffic", dry_run=True)
    assert res.sent[0]["dry_run"] == "All" and res.sent[0]["field_manager"] == "lcm.openstack-traffic"


def test_an_apply_cut_off_is_sent_again() -> None:
    res = _Res([ConnectionResetError(104, "Connection reset by peer"), BODY])
    assert server_side_apply(res, BODY, "openstack") == BODY and len(res.sent) == 2


def test_a_refused_object_is_named_with_the_apiservers_reason() -> None:
    refused = _api_error(422, "Invalid", 'Service "keystone-api" is invalid: spec.ports: Required value')
    with pytest.raises(KubeError) as raised:
        applied(_Res([refused]), BODY, "openstack")
    assert str(raised.value).startswith("the apiserver refused Service keystone-api: ")
    assert "spec.ports: Required value" in str(raised.value)


def test_a_denied_apply_names_the_resource_it_patched() -> None:
    denied = _api_error(403, "Forbidden", 'updatestatuses.lifecycle.openstack.org "cluster" is forbidden: User '
                        '"system:serviceaccount:openstack:runner" cannot patch resource "updatestatuses/status"')
    with pytest.raises(KubeError) as raised:
        applied(_Res([denied]), dict(BODY, kind="UpdateStatus"), what="updatestatuses/status")
    assert "patch updatestatuses/status" in str(raised.value)
