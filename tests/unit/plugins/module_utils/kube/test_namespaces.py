"""plugins/module_utils/kube/namespaces.py: a namespace that does not exist, told
from an object that does not, asked only after a read found nothing."""

from __future__ import annotations

from typing import Any, List, Optional

import pytest
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import ForbiddenError, NotFoundError, ResourceNotFoundError

from ansible_collections.lcm.openstack.plugins.module_utils.kube import namespaces
from ansible_collections.lcm.openstack.plugins.module_utils.traffic import runner as traffic
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError, ObjectNotFound, PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.request import TrafficRequest
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.runner import TrafficRunner

GONE = ("namespace t-gone does not exist: create it first (kubectl create namespace t-gone), or let the "
        "lcm.openstack.install role create it (install_create_namespace: true, its default)")


def _exc(cls: Any, status: int) -> Any:
    exc = ApiException(status=status, reason="Reason")
    exc.body = b'{"kind":"Status","message":"m","code":%d}' % status
    return cls(exc)


class _Namespaces:
    def __init__(self, answer: Optional[BaseException]) -> None:
        self.answer, self.asked = answer, []  # type: ignore[var-annotated]

    def get(self, name: str) -> Any:
        self.asked.append(name)
        if self.answer is not None:
            raise self.answer
        return {"metadata": {"name": name}}


class _Dyn:
    def __init__(self, answer: Optional[BaseException] = None, namespace_kind: bool = True) -> None:
        self.namespaces = _Namespaces(answer)
        self.namespace_kind = namespace_kind
        self.resources = self
        self.looked_up: List[str] = []

    def get(self, api_version: str, kind: str) -> Any:
        self.looked_up.append(kind)
        if kind == "Namespace" and self.namespace_kind:
            return self.namespaces
        if kind == "Phase":
            return object()
        raise ResourceNotFoundError(kind)


def test_a_namespace_that_does_not_exist_is_said_so() -> None:
    dyn = _Dyn(_exc(NotFoundError, 404))
    assert str(namespaces.missing(dyn, "t-gone")) == GONE
    assert dyn.namespaces.asked == ["t-gone"]


@pytest.mark.parametrize("dyn", [
    pytest.param(_Dyn(), id="it-exists"),
    pytest.param(_Dyn(_exc(ForbiddenError, 403)), id="may-not-read-namespaces"),
    pytest.param(_Dyn(namespace_kind=False), id="not-served"),
])
def test_otherwise_nothing_is_said(dyn: _Dyn) -> None:
    assert namespaces.missing(dyn, "t-gone") is None


class _Backend:
    def __init__(self, error: LcmError) -> None:
        self.error = error

    def plan(self) -> Any:
        raise self.error


def _traffic(monkeypatch: pytest.MonkeyPatch, dyn: _Dyn, error: LcmError) -> LcmError:
    monkeypatch.setattr(traffic, "backend_for", lambda _dyn, _req: _Backend(error))
    req = TrafficRequest(action="drain", service="web", release="web", namespace="t-gone",
                         backend="service_selector", selector_service="web")
    with pytest.raises(LcmError) as err:
        TrafficRunner(dyn, req).run()
    return err.value


def test_traffic_on_a_missing_namespace_says_the_namespace_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    not_found = ObjectNotFound("Service web not found in namespace t-gone", "t-gone")
    err = _traffic(monkeypatch, _Dyn(_exc(NotFoundError, 404)), not_found)
    assert str(err) == GONE and err.__cause__ is not_found


def test_traffic_on_a_missing_object_keeps_its_message(monkeypatch: pytest.MonkeyPatch) -> None:
    dyn = _Dyn()
    err = _traffic(monkeypatch, dyn, ObjectNotFound("Service web not found in namespace t-gone", "t-gone"))
    assert str(err) == "Service web not found in namespace t-gone"
    assert dyn.namespaces.asked == ["t-gone"]


def test_other_failures_do_not_ask_about_the_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    dyn = _Dyn(_exc(NotFoundError, 404))
    err = _traffic(monkeypatch, dyn, PhaseError("Service web has no selector"))
    assert str(err) == "Service web has no selector" and dyn.namespaces.asked == []


def test_helm_writing_into_a_missing_namespace_names_create_namespace() -> None:
    """helm.py: Helm relays the apiserver's 404; the option that fixes it is helm_release's."""
    from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, Result

    result = Result(["helm", "install", "svc"], 1, "",
                    'Error: INSTALLATION FAILED: create: failed to create: namespaces "t-gone" not found\n')
    err = Helm("helm").error(result, "helm install of svc")
    assert str(err) == ("helm install of svc failed: namespace t-gone does not exist: set create_namespace: true "
                        "on lcm.openstack.helm_release, or create it first (kubectl create namespace t-gone)")
    assert "namespaces \"t-gone\" not found" in err.details["stderr"]
    other = Helm("helm").error(Result(["helm", "upgrade", "svc"], 1, "", "Error: UPGRADE FAILED: boom\n"))
    assert str(other) == "helm upgrade failed: UPGRADE FAILED: boom"
