"""plugins/module_utils/traffic/runner.py: TrafficRunner records a shift as a Phase, steps, pauses, checks, and
backs out, against an in-memory cluster and a scripted backend."""

from __future__ import annotations

import copy
import itertools
import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import ConflictError, NotFoundError, ResourceNotFoundError

from ansible_collections.lcm.openstack.plugins.module_utils.traffic import runner as traffic
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.endpoints import Endpoint, Settled
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError, PhaseFailed
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.check import Check
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.request import TrafficRequest
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.runner import TrafficRunner
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.backends import Plan
from ansible_collections.lcm.openstack.plugins.module_utils.traffic import release_target
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.target import Target

GROUP = "lifecycle.openstack.org/v1alpha1"
UIDS = itertools.count(1)


# -- an in-memory apiserver for Phases and ServiceLifecycles ----------------------------------

class _Obj:
    def __init__(self, data: Dict[str, Any]) -> None:
        self.data = copy.deepcopy(data)

    def to_dict(self) -> Dict[str, Any]:
        return copy.deepcopy(self.data)


def _merge(into: Dict[str, Any], patch: Dict[str, Any]) -> Dict[str, Any]:
    for key, value in patch.items():
        if value is None:
            into.pop(key, None)
        elif isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = copy.deepcopy(value)
    return into


class _Status:
    def __init__(self, store: "_Store") -> None:
        self.store = store

    def patch(self, body: Dict[str, Any], name: str, namespace: str, content_type: str, **_kw: Any) -> _Obj:
        obj = self.store.objects[name]
        _merge(obj.setdefault("status", {}), body["status"])
        self.store.messages.append((name, obj["status"].get("message")))
        return _Obj(obj)

    def replace(self, body: Dict[str, Any], namespace: str) -> _Obj:
        name = body["metadata"]["name"]
        if body["metadata"].get("resourceVersion") != self.store.objects[name]["metadata"]["resourceVersion"]:
            raise ConflictError(ApiException(status=409, reason="Conflict"))
        self.store.objects[name] = copy.deepcopy(body)
        self.store.objects[name]["metadata"]["resourceVersion"] = str(next(UIDS))
        return _Obj(self.store.objects[name])


class _Store:
    def __init__(self, kind: str) -> None:
        self.kind, self.name = kind, kind.lower() + "s"
        self.objects: Dict[str, Dict[str, Any]] = {}
        self.status = _Status(self)
        self.calls: List[Tuple[str, str, Any]] = []
        self.messages: List[Tuple[str, Optional[str]]] = []

    def get(self, name: Optional[str] = None, namespace: Optional[str] = None,
            label_selector: Optional[str] = None, **_kw: Any) -> _Obj:
        if name is not None:
            if name not in self.objects:
                raise NotFoundError(ApiException(status=404, reason="Not Found"))
            return _Obj(self.objects[name])
        key, _sep, value = (label_selector or "").partition("=")
        items = [o for o in self.objects.values() if not key or o["metadata"].get("labels", {}).get(key) == value]
        return _Obj({"metadata": {"resourceVersion": "1"}, "items": items})

    def create(self, body: Dict[str, Any], namespace: str, dry_run: Optional[str] = None) -> _Obj:
        self.calls.append(("create", body["metadata"]["name"], dry_run))
        if dry_run:
            return _Obj(body)
        obj = copy.deepcopy(body)
        obj["metadata"].update(uid=f"uid-{next(UIDS)}", generation=1, resourceVersion=str(next(UIDS)),
                               namespace=namespace)
        self.objects[obj["metadata"]["name"]] = obj
        return _Obj(obj)

    def delete(self, name: str, namespace: str, body: Any = None) -> None:
        self.calls.append(("delete", name, body))
        if name not in self.objects:
            raise NotFoundError(ApiException(status=404, reason="Not Found"))
        del self.objects[name]

    def server_side_apply(self, body: Dict[str, Any], name: str, namespace: str, **_kw: Any) -> _Obj:
        obj = self.objects.setdefault(name, {"metadata": {"resourceVersion": "1"}})
        _merge(obj, copy.deepcopy(body))
        return _Obj(obj)


class _Resources:
    def __init__(self, stores: Dict[str, _Store]) -> None:
        self.stores = stores

    def get(self, api_version: str, kind: str) -> _Store:
        if kind not in self.stores:  # as a cluster without that CRD answers
            raise ResourceNotFoundError(f"no {kind} in {api_version}")
        return self.stores[kind]


class _Dyn:
    def __init__(self) -> None:
        self.phases, self.lifecycles = _Store("Phase"), _Store("ServiceLifecycle")
        self.resources = _Resources({"Phase": self.phases, "ServiceLifecycle": self.lifecycles})

    def watch(self, res: _Store, field_selector: str, **_kw: Any) -> Iterator[Dict[str, Any]]:
        if field_selector.split("=", 1)[1] not in res.objects:
            yield {"type": "DELETED", "raw_object": {}}


# -- scripted backends ------------------------------------------------------------------------

class _Weights:
    kind = "Ingress"

    def __init__(self, req: TrafficRequest, current: int = 0, steps: Optional[List[int]] = None) -> None:
        self.req, self.sets = req, []
        final = req.steps[-1] if req.action == "rollout" else 0
        self.steps = [s for s in req.steps if s > current] if steps is None else steps
        if req.action == "drain":
            self.steps = [0] if current else []
        self.block = {"backend": req.backend, "target": "web", "canary_service": req.canary_service,
                      "from_weight": current, "check": req.check_summary}
        self.before, self.after = {"weight": current}, {"weight": final if self.steps else current}

    def plan(self) -> Plan:
        return Plan(self.kind, "web-canary", dict(self.before), dict(self.after), dict(self.block),
                    changed=bool(self.steps), steps=list(self.steps), note="already there")

    def set_weight(self, weight: int, dry_run: bool = False) -> None:
        self.sets.append((weight, dry_run))

    def describe(self, weight: int) -> str:
        return f"Ingress web-canary sends {weight}% to Service web-green"


class _Selector:
    kind = "Service"
    value = "green"
    with_track = True

    def __init__(self, settled: Settled, back: Optional[Dict[str, str]] = None,
                 before: Optional[Dict[str, str]] = None) -> None:
        self.settled, self.applied, self.back = settled, [], back
        self.before = before or {"app": "web", "track": "blue"}

    def plan(self) -> Plan:
        return Plan("Service", "web", {"selector": self.before},
                    {"selector": {"app": "web", "track": "green"}},
                    {"backend": "service_selector", "target": "web", "track": "green", "from_track": "blue"},
                    changed=True)

    def apply(self, selector: Dict[str, str], dry_run: bool = False) -> None:
        self.applied.append((selector, dry_run))

    def settle(self, plan: Plan, timeout: float, note: Any) -> Settled:
        note("waiting for the EndpointSlices: no ready endpoint")
        return self.settled

    def timeout_message(self, plan: Plan, settled: Settled, timeout: float) -> str:
        return f"timed out after {timeout:.0f}s: no ready endpoint: pods with track=green: 0 found"

    @staticmethod
    def setting(plan: Plan) -> str:
        return f"Service {plan.name}: setting the selector track=green"

    def after_failed_rollout(self, _plan: Plan) -> Tuple[Optional[Dict[str, str]], str]:
        return self.back, "; the selector is back to track=blue" if self.back else "; the selector stays"

    def message(self, endpoints: List[Endpoint]) -> str:
        return f"Service web selects track=green: {len(endpoints)} ready endpoint(s)"


def _req(action: str = "rollout", **kw: Any) -> TrafficRequest:
    base: Dict[str, Any] = {"backend": "ingress_canary", "ingress": "web", "canary_service": "web-green"}
    base.update(kw)
    return TrafficRequest(action=action, service="web", release="web", namespace="t", **base)


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> Any:
    """run(req, backend, checks=[...], check_mode=False) -> (result or exception, dyn, pauses, urls checked)."""
    def go(req: TrafficRequest, backend: Any, checks: Optional[List[Optional[str]]] = None,
           check_mode: bool = False, dyn: Optional[_Dyn] = None,
           flow_ends_after: bool = False) -> Tuple[Any, _Dyn, List[float], List[str]]:
        dyn = dyn or _Dyn()
        pauses: List[float] = []
        urls: List[str] = []
        answers = list(checks or [])

        def http_check(url: str, expect: int, timeout: float, opener: Any) -> Optional[str]:
            urls.append(url)
            return answers.pop(0) if answers else None
        monkeypatch.setattr(traffic, "backend_for", lambda _dyn, _req: backend)
        monkeypatch.setattr(traffic, "http_check", http_check)
        runner = TrafficRunner(dyn, req, check_mode=check_mode, pause=pauses.append, flow_ends_after=flow_ends_after)
        try:
            out: Any = runner.run()
        except PhaseError as exc:
            out = exc
        return out, dyn, pauses, urls
    return go


def _only_phase(dyn: _Dyn) -> Dict[str, Any]:
    (phase,) = dyn.phases.objects.values()
    return phase


def _history(dyn: _Dyn) -> List[Tuple[str, str]]:
    status = dyn.lifecycles.objects["web"].get("status") or {}
    return [(h["name"], h["result"]) for h in status.get("history", [])]


# -- weights ----------------------------------------------------------------------------------

def test_a_rollout_steps_pauses_and_checks_each_step(run: Any) -> None:
    req = _req(pause_seconds=30, check=Check(url="http://web/"))
    backend = _Weights(req)
    result, dyn, pauses, urls = run(req, backend)
    assert result["changed"] is True and result["steps_done"] == [10, 50, 100]
    assert backend.sets == [(10, False), (50, False), (100, False)]
    assert pauses == [30, 30, 30] and urls == ["http://web/"] * 3
    phase = _only_phase(dyn)
    assert phase["spec"]["type"] == "trafficrollout"
    assert phase["status"]["state"] == "Succeeded"
    assert phase["status"]["message"] == "Ingress web-canary sends 100% to Service web-green after 3 step(s)"
    assert result["phase"]["state"] == "Succeeded" and result["phase"]["name"] == phase["metadata"]["name"]
    messages = [m for _n, m in dyn.phases.messages]
    assert messages.index("weight 50% (step 2/3), pausing 30s before the check") < \
        messages.index("weight 50% (step 2/3), checking: GET http://web/ expects 200") < \
        messages.index("setting weight 100% (step 3/3)")
    assert _history(dyn) == [(phase["metadata"]["name"], "Succeeded")]
    assert dyn.lifecycles.objects["web"]["status"]["state"] == "Operational"


@pytest.mark.parametrize("ends, checks, refreshes", [
    (False, [], 2),  # under way, and ended
    (True, [], 1),  # the end's refresh is the flow end's, in the same process
    (True, ["503"], 2),  # a failed move ends no flow: refreshed here
])
def test_the_update_status_is_refreshed_at_the_end_unless_the_flows_end_follows(
        run: Any, monkeypatch: pytest.MonkeyPatch, ends: bool, checks: List[str], refreshes: int) -> None:
    from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus import keeper

    seen: List[str] = []
    monkeypatch.setattr(keeper, "refresh", lambda dyn: seen.append("refresh") or "")
    req = _req(check=Check(url="http://web/"))
    result, dyn, _pauses, _urls = run(req, _Weights(req), checks=checks, flow_ends_after=ends)
    assert _only_phase(dyn)["status"]["state"] == ("Failed" if checks else "Succeeded")
    assert isinstance(result, PhaseFailed) == bool(checks) and len(seen) == refreshes


def test_without_a_check_only_the_steps_between_pause(run: Any) -> None:
    req = _req(pause_seconds=5)
    result, _dyn, pauses, urls = run(req, _Weights(req))
    assert result["steps_done"] == [10, 50, 100] and pauses == [5, 5] and urls == []


def test_a_failed_check_sends_the_weight_back_to_zero_and_fails(run: Any) -> None:
    req = _req(check=Check(url="http://web/"))
    backend = _Weights(req)
    exc, dyn, _pauses, _urls = run(req, backend, checks=[None, "GET http://web/ returned 500, expected 200"])
    assert isinstance(exc, PhaseFailed)
    assert str(exc) == ("check failed at weight 50% (step 2/3): GET http://web/ returned 500, expected 200; "
                        "weight set back to 0%")
    assert backend.sets == [(10, False), (50, False), (0, False)]
    assert exc.details["changed"] is True
    assert exc.details["steps_done"] == [10, 50] and exc.details["after"]["weight"] == 0
    phase = _only_phase(dyn)["status"]
    assert (phase["state"], phase["reason"], phase["failedObject"]) == ("Failed", "CheckFailed", "Ingress/web-canary")
    assert exc.details["phase"]["reason"] == "CheckFailed"
    assert _history(dyn)[-1][1] == "Failed"


def test_a_weight_that_cannot_go_back_says_so(run: Any) -> None:
    req = _req(check=Check(url="http://web/"))
    backend = _Weights(req)

    def set_weight(weight: int, dry_run: bool = False) -> None:
        if weight == 0:
            raise PhaseError("could not patch ingresses in namespace t: HTTP 500: etcd timeout")
        backend.sets.append((weight, dry_run))
    backend.set_weight = set_weight  # type: ignore[method-assign]
    exc, _dyn, _p, _u = run(req, backend, checks=["GET http://web/ returned 503, expected 200"])
    assert str(exc).endswith("; setting the weight back to 0% failed too: could not patch ingresses in "
                             "namespace t: HTTP 500: etcd timeout")
    assert exc.details["after"]["weight"] == 10


def test_a_drain_sets_zero_then_waits_the_grace(run: Any) -> None:
    req = _req("drain")
    backend = _Weights(req, current=50)
    result, dyn, pauses, _urls = run(req, backend)
    assert backend.sets == [(0, False)] and pauses == [30] and result["steps_done"] == [0]
    assert ("web-trafficdrain" in _only_phase(dyn)["metadata"]["name"])
    assert any(m == "Ingress web-canary sends 0% to Service web-green; waiting 30s for open connections to finish"
               for _n, m in dyn.phases.messages)


def test_nothing_to_change_creates_no_phase(run: Any) -> None:
    req = _req()
    result, dyn, pauses, _urls = run(req, _Weights(req, current=100))
    assert result["changed"] is False and result["phase"] is None and result["message"] == "already there"
    assert dyn.phases.calls == [] and dyn.lifecycles.objects == {} and pauses == []


def test_check_mode_validates_and_writes_nothing(run: Any) -> None:
    req = _req(pause_seconds=30, check=Check(url="http://web/"))
    backend = _Weights(req)
    result, dyn, pauses, urls = run(req, backend, check_mode=True)
    assert result["changed"] is True and result["phase"]["state"] == "Pending"
    assert [c[2] for c in dyn.phases.calls] == ["All"]  # one dry-run create
    assert dyn.phases.objects == {} and dyn.lifecycles.objects == {}
    assert backend.sets == [(100, True)] and pauses == [] and urls == []
    assert result["diff"]["before"] == {"weight": 0} and result["diff"]["after"] == {"weight": 100}


def test_an_earlier_phase_of_the_same_name_is_replaced(run: Any) -> None:
    req = _req()
    first, dyn, _p, _u = run(req, _Weights(req))
    old_uid = _only_phase(dyn)["metadata"]["uid"]
    again, dyn, _p, _u = run(req, _Weights(req), dyn=dyn)  # the same transition: the weight drifted back
    assert again["phase"]["name"] == first["phase"]["name"]
    assert _only_phase(dyn)["metadata"]["uid"] != old_uid
    assert ("delete", first["phase"]["name"], {"propagationPolicy": "Foreground"}) in dyn.phases.calls


def test_the_phase_name_follows_where_the_traffic_comes_from(run: Any) -> None:
    req = _req()
    names = set()
    for current in (0, 10):
        result, dyn, _p, _u = run(req, _Weights(req, current=current))
        names.add(result["phase"]["name"])
        spec = _only_phase(dyn)["spec"]
        assert spec["traffic"] == {"backend": "ingress_canary", "target": "web", "canaryService": "web-green",
                                   "fromWeight": current}
        assert spec["source"]["selection"] == "manifests" and spec["timeoutSeconds"] == 300
    assert len(names) == 2 and all(n.startswith("web-trafficrollout-") for n in names)


def test_another_running_phase_of_the_service_refuses(run: Any) -> None:
    dyn = _Dyn()
    dyn.phases.objects["web-upgrade-1234abcd"] = {
        "metadata": {"name": "web-upgrade-1234abcd", "labels": {"lifecycle.openstack.org/service": "web"}},
        "spec": {"type": "upgrade"}, "status": {"state": "Running"}}
    req = _req()
    backend = _Weights(req)
    exc, dyn, _p, _u = run(req, backend, dyn=dyn)
    assert str(exc).startswith("Phase web-upgrade-1234abcd (upgrade) is Running for web;")
    assert dyn.phases.calls == [] and backend.sets == []


def test_a_password_in_the_check_url_is_masked_everywhere(run: Any) -> None:
    url = "http://admin:Pa55-w0rd-x@web/"
    req = _req(check=Check(url=url))
    exc, dyn, _p, _u = run(req, _Weights(req), checks=[f"GET {url} returned 401, expected 200"])
    phase = _only_phase(dyn)
    assert "Pa55-w0rd-x" not in str(exc) and "Pa55-w0rd-x" not in str(phase) and "Pa55-w0rd-x" not in str(
        exc.details)
    assert phase["spec"]["traffic"]["check"] == "GET http://admin:********@web/ expects 200"


# -- a test Phase as the check ------------------------------------------------------------------

class _FakePhaseRunner:
    runs: List[Tuple[str, Optional[str], str]] = []
    fail: Optional[str] = None

    def __init__(self, dyn: Any, req: Any, parent: Optional[str] = None) -> None:
        self.req, self.parent = req, parent
        from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import Redactor

        self.redactor = Redactor()

    def absent(self) -> Dict[str, Any]:
        self.runs.append((self.req.name, self.parent, "absent"))
        return {}

    def present(self) -> Dict[str, Any]:
        self.runs.append((self.req.name, self.parent, "present"))
        if self.fail:
            raise PhaseFailed(self.fail)
        return {}


def test_a_test_phase_check_runs_under_the_traffic_phase(run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import PhaseRequest, Source

    monkeypatch.setattr(_FakePhaseRunner, "runs", [])
    from ansible_collections.lcm.openstack.plugins.module_utils.phase import runner as phase_runner

    monkeypatch.setattr(phase_runner, "PhaseRunner", _FakePhaseRunner)  # imported when a check needs it
    test = PhaseRequest(type="test", service="web", release="web", namespace="t", source=Source(manifests=[]))
    req = _req(steps=[50, 100], check=Check(test=test))
    result, dyn, _p, _u = run(req, _Weights(req))
    parent = result["phase"]["name"]
    names = [traffic.check_phase_name("web", parent, step) for step in (1, 2)]
    assert _FakePhaseRunner.runs == [(names[0], parent, "absent"), (names[0], parent, "present"),
                                     (names[1], parent, "absent"), (names[1], parent, "present")]
    assert dyn.lifecycles.objects["web"]["status"]["history"][-1]["name"] == parent

    monkeypatch.setattr(_FakePhaseRunner, "fail", "Pod web-test failed: Error: exit 1")
    exc, dyn, _p, _u = run(req, _Weights(req))
    assert str(exc) == ("check failed at weight 50% (step 1/2): Pod web-test failed: Error: exit 1; "
                        "weight set back to 0%")


# -- selector ---------------------------------------------------------------------------------

def test_a_rollout_that_times_out_puts_the_selector_back(run: Any) -> None:
    req = TrafficRequest(action="rollout", service="web", release="web", namespace="t",
                         selector_service="web", track="green", timeout=5)
    backend = _Selector(Settled(False, [], ["no ready endpoint"]), back={"app": "web", "track": "blue"})
    exc, dyn, _p, _u = run(req, backend)
    assert str(exc) == ("timed out after 5s: no ready endpoint: pods with track=green: 0 found; "
                        "the selector is back to track=blue")
    assert backend.applied == [({"app": "web", "track": "green"}, False), ({"app": "web", "track": "blue"}, False)]
    assert exc.details["after"] == {"selector": {"app": "web", "track": "blue"}}
    status = _only_phase(dyn)["status"]
    assert (status["state"], status["reason"], status["failedObject"]) == ("Failed", "Timeout", "Service/web")


def test_a_rollout_that_times_out_keeps_the_selector_when_the_backend_says_so(run: Any) -> None:
    req = TrafficRequest(action="rollout", service="web", release="web", namespace="t",
                         selector_service="web", track="green", timeout=5)
    backend = _Selector(Settled(False, [], ["no ready endpoint"]))
    exc, _dyn, _p, _u = run(req, backend)
    assert str(exc).endswith("0 found; the selector stays")
    assert backend.applied == [({"app": "web", "track": "green"}, False)]
    assert exc.details["after"] == {"selector": {"app": "web", "track": "green"}}


def test_a_selector_already_set_is_not_written_again(run: Any) -> None:
    """Only the endpoints lag behind: the run waits for them, and writes nothing."""
    req = TrafficRequest(action="rollout", service="web", release="web", namespace="t",
                         selector_service="web", track="green")
    backend = _Selector(Settled(True, [Endpoint("web-x", "web-green-1", True, "green")], []),
                        before={"app": "web", "track": "green"})
    result, _dyn, _p, _u = run(req, backend)
    assert result["changed"] is True and backend.applied == []


def test_a_drain_that_times_out_stays_drained(run: Any) -> None:
    req = TrafficRequest(action="drain", service="web", release="web", namespace="t", selector_service="web")
    backend = _Selector(Settled(False, [], ["EndpointSlice web-x still lists pod web-blue-1 (track=blue)"]))
    exc, _dyn, _p, _u = run(req, backend)
    assert isinstance(exc, PhaseFailed) and len(backend.applied) == 1


def test_a_selector_rollout_records_the_endpoints(run: Any) -> None:
    req = TrafficRequest(action="rollout", service="web", release="web", namespace="t",
                         selector_service="web", track="green")
    ready = [Endpoint("web-x", "web-green-1", True, "green")]
    result, dyn, _p, _u = run(req, _Selector(Settled(True, ready, [])))
    assert result["endpoints"] == [{"pod": "web-green-1", "ready": True, "track": "green"}]
    assert _only_phase(dyn)["status"]["message"] == "Service web selects track=green: 1 ready endpoint(s)"
    assert result["steps_done"] == []


# -- the target, when the request names none --------------------------------------------------

def _resolved(monkeypatch: pytest.MonkeyPatch, name: str, why: str) -> List[TrafficRequest]:
    asked: List[TrafficRequest] = []

    def resolve(_dyn: Any, req: TrafficRequest) -> Target:
        asked.append(req)
        if name:
            req.selector_service = name
        return Target("Service", name, why)
    monkeypatch.setattr(release_target, "resolve", resolve)
    return asked


def test_an_unnamed_service_is_the_one_the_release_renders(run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _resolved(monkeypatch, "web", "the only Service of release web that selects its pods")
    req = TrafficRequest(action="rollout", service="web", release="web", namespace="t", selector_mode="track",
                         track="green")
    ready = [Endpoint("web-x", "web-green-1", True, "green")]
    result, dyn, _p, _u = run(req, _Selector(Settled(True, ready, [])))
    assert asked == [req] and result["changed"] is True
    assert result["target"] == {"kind": "Service", "name": "web",
                                "why": "the only Service of release web that selects its pods"}
    assert _only_phase(dyn)["spec"]["traffic"]["target"] == "web"


def test_a_named_target_is_taken_as_given(run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _resolved(monkeypatch, "other", "")
    result, _dyn, _p, _u = run(_req(), _Weights(_req()))
    assert asked == [] and result["target"] == {"kind": "Ingress", "name": "web", "why": "given"}


def test_a_release_with_nothing_to_route_moves_nothing_and_creates_no_phase(
        run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    why = "release web renders no Service: nothing to route"
    _resolved(monkeypatch, "", why)
    req = TrafficRequest(action="drain", service="web", release="web", namespace="t")
    result, dyn, _p, _u = run(req, None)
    assert (result["changed"], result["phase"], result["skipped"]) == (False, None, why)
    assert result["message"] == f"trafficdrain skipped: {why}"
    assert dyn.phases.objects == {} and dyn.lifecycles.objects == {}  # no flow ran: no record made


# -- labels and names of the steps --------------------------------------------------------

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def test_step_label() -> None:
    assert traffic.step_label(50, [10, 50, 100]) == "weight 50% (step 2/3)"
    assert traffic.step_label(100, [10, 50, 100]) == "weight 100% (step 3/3)"


def test_check_phase_names_fit_a_label_and_differ_per_step_and_parent() -> None:
    names: Dict[tuple, str] = {}
    for parent in ("keystone-trafficrollout-1a2b3c4d", "keystone-trafficrollout-5e6f7a8b"):
        for step in (1, 2, 3):
            names[(parent, step)] = traffic.check_phase_name("keystone", parent, step)
    assert len(set(names.values())) == 6
    assert all(n.startswith("keystone-test-") and DNS_LABEL.match(n) for n in names.values())
    long = traffic.check_phase_name("r" * 60, "p", 1)
    assert len(long) <= 63 and DNS_LABEL.match(long)
