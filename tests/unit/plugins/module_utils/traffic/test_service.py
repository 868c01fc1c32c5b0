"""plugins/module_utils/traffic/service.py: what both Service-selector
backends share: the whole selector written at once, and the wait on the
Service's EndpointSlices saying what it waits for."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Callable, Dict, List, Optional

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.traffic import service as service_module
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.backends import Plan
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.endpoints import Settled
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.service import ServiceSelector


class _Services:
    name = "services"

    def __init__(self) -> None:
        self.sent: List[Dict[str, Any]] = []

    def server_side_apply(self, **kwargs: Any) -> Any:
        self.sent.append(kwargs)
        return SimpleNamespace(to_dict=lambda: kwargs["body"])


class _Slices:
    """Stands in for the EndpointSlice watch: reports two problems, then is met."""

    def __init__(self, dyn: Any, namespace: str, service: str, label: Optional[str]) -> None:
        self.args = (namespace, service, label)
        self.waited: List[Any] = []

    def wait(self, goal: Any, timeout: float, on_change: Callable[[List[str]], None]) -> Settled:
        self.waited.append((goal, timeout))
        on_change(["pod keystone-api-1 not ready", "pod keystone-api-2 not ready"])
        on_change(["pod keystone-api-2 not ready"])
        return Settled(met=True, endpoints=[], problems=[])


class _Gate(ServiceSelector):
    def goal(self, endpoints: List[Any]) -> Any:
        return ("goal", len(endpoints))

    def state(self, goal: Any) -> str:
        return "selects the release's pods"


@pytest.fixture
def selector(monkeypatch: pytest.MonkeyPatch) -> _Gate:
    services = _Services()
    monkeypatch.setattr(service_module, "resource", lambda dyn, api_version, kind: services)
    monkeypatch.setattr(service_module, "SliceWatch", _Slices)
    req = SimpleNamespace(selector_service="keystone-api", namespace="openstack")
    return _Gate(object(), req, "track")


def test_the_whole_selector_is_written_as_one_field(selector: _Gate) -> None:
    selector.apply({"application": "keystone", "component": "api"}, dry_run=True)
    sent = selector.services.sent[0]
    assert sent["body"] == {"apiVersion": "v1", "kind": "Service",
                            "metadata": {"name": "keystone-api", "namespace": "openstack"},
                            "spec": {"selector": {"application": "keystone", "component": "api"}}}
    assert sent["dry_run"] == "All" and sent["field_manager"] == "lcm.openstack-traffic"


def test_the_wait_says_what_the_service_selects_and_the_first_problem(selector: _Gate) -> None:
    notes: List[str] = []
    plan = Plan(kind="Service", name="keystone-api", before={}, after={}, block={}, changed=True,
                endpoints=["a", "b"])
    settled = selector.settle(plan, 30.0, notes.append)
    assert settled.met and selector.slices.args == ("openstack", "keystone-api", "track")
    assert selector.slices.waited == [(("goal", 2), 30.0)]
    assert notes == [
        "Service keystone-api selects the release's pods; waiting for the EndpointSlices: "
        "pod keystone-api-1 not ready (and 1 more)",
        "Service keystone-api selects the release's pods; waiting for the EndpointSlices: pod keystone-api-2 not ready",
    ]


def test_a_backend_must_say_its_goal_and_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service_module, "resource", lambda dyn, api_version, kind: _Services())
    monkeypatch.setattr(service_module, "SliceWatch", _Slices)
    bare = ServiceSelector(object(), SimpleNamespace(selector_service="keystone-api", namespace="openstack"), None)
    with pytest.raises(NotImplementedError):
        bare.goal([])
    with pytest.raises(NotImplementedError):
        bare.state(None)
