"""plugins/module_utils/helm/settle.py: a release waited on by watch until its
namespaced objects are ready, as `helm --wait` would, but naming each object
that is not, and why, when the time is up or one fails."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Dict, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import MASK, Redactor
from ansible_collections.lcm.openstack.plugins.module_utils.helm import settle
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import HelmError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import Readiness
from ansible_collections.lcm.openstack.plugins.module_utils.kube.tracker import WaitResult

MANIFEST = """---
# Source: keystone/templates/deployment-api.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: keystone-api
---
# Source: keystone/templates/clusterrole.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: keystone
---
# Source: keystone/templates/service-api.yaml
apiVersion: v1
kind: Service
metadata:
  name: keystone-api
  namespace: elsewhere
"""
HISTORY = [{"revision": 4, "status": "deployed", "chart": "keystone-2025.1.0"}]
SECRET = "a-long-admin-passw0rd"


class _Dyn:
    def __init__(self, services: List[Dict[str, Any]] = ()) -> None:  # type: ignore[assignment]
        self.resources = self
        self.services = list(services)

    def get(self, api_version: str, kind: str) -> Any:
        listed = SimpleNamespace(to_dict=lambda: {"items": self.services if kind == "Service" else []})
        return SimpleNamespace(namespaced=kind != "ClusterRole", get=lambda **kw: listed)


def _helm() -> Any:
    redactor = Redactor()
    redactor.add_values({"password": SECRET})
    return SimpleNamespace(get_manifest=lambda name, namespace: MANIFEST, redactor=redactor)


def _req(**given: Any) -> Any:
    return SimpleNamespace(**dict(dict(name="keystone", namespace="openstack", wait=True, helm_wait=False, atomic=False,
                                       timeout=120), **given))


@pytest.fixture
def waited(monkeypatch: pytest.MonkeyPatch) -> List[Any]:
    calls: List[Any] = []

    def wait_for(dyn: Any, namespace: str, targets: List[Any], selector: Any, timeout: float,
                 on_change: Any = None) -> WaitResult:
        if on_change is not None:  # a progress channel is open: it hears the states
            on_change(RESULT[0].states)
        calls.append((namespace, [t.key for t in targets], timeout))
        return RESULT[0]
    monkeypatch.setattr(settle, "wait_for", wait_for)
    monkeypatch.setattr(settle.diagnose, "why", lambda dyn, namespace, key, state, obj: (
        f"{key[0]} {key[1]}: {state.message} (admin password {SECRET})"))
    return calls


RESULT: List[WaitResult] = [WaitResult(states={}, objects={})]
KEY = ("Deployment", "keystone-api")


def test_the_namespaced_objects_of_this_namespace_are_waited_for(waited: List[Any]) -> None:
    RESULT[0] = WaitResult(states={KEY: Readiness("Current", "3/3 ready")}, objects={})
    settle.wait_for_release(_Dyn(), _helm(), _req(), HISTORY)
    assert waited == [("openstack", [KEY], 120)]


@pytest.mark.parametrize("given", [dict(wait=False), dict(helm_wait=True), dict(atomic=True)])
def test_nothing_is_waited_for_when_helm_waits_or_nobody_asked(waited: List[Any], given: Dict[str, Any]) -> None:
    settle.wait_for_release(_Dyn(), _helm(), _req(**given), HISTORY)
    settle.wait_for_release(None, _helm(), _req(), HISTORY)
    assert waited == []


def test_the_time_up_names_what_is_not_ready_and_why_masked(waited: List[Any]) -> None:
    RESULT[0] = WaitResult(states={KEY: Readiness("InProgress", "1/3 ready")}, objects={}, timed_out=True)
    with pytest.raises(HelmError) as err:
        settle.wait_for_release(_Dyn(), _helm(), _req(), HISTORY)
    assert str(err.value).startswith("release keystone revision 4 is not ready after 120s: "
                                     "Deployment keystone-api: 1/3 ready")
    assert SECRET not in str(err.value)
    assert err.value.details["status"]["revision"] == 4 and err.value.details["history"][0]["revision"] == 4


def test_a_failed_object_fails_the_release(waited: List[Any]) -> None:
    RESULT[0] = WaitResult(states={KEY: Readiness("Failed", "ProgressDeadlineExceeded")}, objects={}, failed=[KEY])
    with pytest.raises(HelmError, match="release keystone revision 4 failed: Deployment keystone-api: ProgressDeadlineExceeded"):
        settle.wait_for_release(_Dyn(), _helm(), _req(), HISTORY)


def test_the_time_up_names_each_object_still_pending_and_none_that_is_ready(waited: List[Any]) -> None:
    job, service = ("Job", "keystone-db-sync"), ("Service", "keystone-api")
    RESULT[0] = WaitResult(states={KEY: Readiness("Current", "3/3 ready"), job: Readiness("InProgress", "0/1 succeeded"),
                                   service: Readiness("InProgress", "no endpoints")}, objects={}, timed_out=True)
    with pytest.raises(HelmError) as err:
        settle.wait_for_release(_Dyn(), _helm(), _req(timeout=60), HISTORY)
    why = str(err.value).split(": ", 1)[1]
    assert why.split("; ") == [f"Job keystone-db-sync: 0/1 succeeded (admin password {MASK})",
                               f"Service keystone-api: no endpoints (admin password {MASK})"]
    assert str(err.value).startswith("release keystone revision 4 is not ready after 60s: ")


CONDUCTOR = """---
# Source: nova/templates/deployment-conductor.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nova-conductor
spec:
  template:
    spec:
      initContainers:
        - name: init
          env:
            - {name: DEPENDENCY_SERVICE, value: "openstack:nova-api,openstack:rabbitmq"}
"""


def test_a_workload_waiting_for_a_service_the_drain_closed_is_left_to_the_test(waited: List[Any]) -> None:
    """nova-conductor's init container waits for nova-api, which the update's drain
    closed until the rollout: waiting for it here would hold the flow to its timeout."""
    RESULT[0] = WaitResult(states={KEY: Readiness("Current", "3/3 ready")}, objects={})
    helm = _helm()
    helm.get_manifest = lambda name, namespace: MANIFEST + CONDUCTOR
    closed = {"metadata": {"name": "nova-api"},
              "spec": {"selector": {"application": "nova", "lifecycle.openstack.org/traffic": "drained"}}}
    open_ = {"metadata": {"name": "rabbitmq"}, "spec": {"selector": {"application": "rabbitmq"}}}
    settle.wait_for_release(_Dyn([closed, open_]), helm, _req(), HISTORY)
    assert waited == [("openstack", [KEY], 120)]
    # With the Service open, it is waited for as any other.
    settle.wait_for_release(_Dyn([open_]), helm, _req(), HISTORY)
    assert waited[-1] == ("openstack", [KEY, ("Deployment", "nova-conductor")], 120)
