"""plugins/module_utils/lifecycle/runner.py: the record brought to what the
request asks; a flow's start waits for its dependencies first and says so in
the DependenciesReady condition and the result (the wait itself:
test_dependency_wait.py)."""

from __future__ import annotations

import copy
from typing import Any, Callable, Dict, List, Optional

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LifecycleError, PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import runner
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.dependency_wait import Waited
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow import LifecycleRequest


class _Lifecycle:
    """The record of glance, kept in memory: what runner.run reads and writes."""

    def __init__(self, record: Optional[Dict[str, Any]] = None) -> None:
        self.dyn, self.res = object(), object()
        self.namespace, self.service, self.release = "openstack", "glance", "glance"
        self.record = record
        self.writes: List[str] = []

    def get(self) -> Optional[Dict[str, Any]]:
        return copy.deepcopy(self.record)

    def ensure(self, depends_on: Optional[List[str]] = None, site: Any = None) -> Dict[str, Any]:
        self.record = self.record or {"metadata": {"name": "glance", "namespace": "openstack"},
                                      "spec": {"service": "glance", "release": "glance"}}
        if depends_on is not None:
            self.record["spec"]["dependsOn"] = list(depends_on)
        if site is not None:
            meta = self.record["metadata"]
            meta["labels"] = dict(meta.get("labels") or {}, **site.labels())
            meta["annotations"] = dict(meta.get("annotations") or {}, **site.annotations())
        self.writes.append("spec")
        return self.get()

    def update(self, change: Callable[[Dict[str, Any]], None], dry_run: bool = False) -> bool:
        current = self.get() or ({} if dry_run else self.ensure())
        before = current.get("status") or {}
        status = copy.deepcopy(before)
        change(status)
        if status == before or dry_run:
            return status != before
        self.record["status"] = status
        self.writes.append("status")
        return True

    def condition(self) -> Dict[str, Any]:
        (found,) = [c for c in self.record["status"].get("conditions") or [] if c["type"] == "DependenciesReady"]
        return found


class _Settle:
    """runner.settle's stand-in: what it was asked, and the wait's outcome."""

    def __init__(self, outcome: Any = None) -> None:
        self.outcome = outcome if outcome is not None else Waited(12.3, ["keystone"], "met: keystone (Operational)")
        self.asked: Dict[str, Any] = {}

    def __call__(self, dyn: Any, res: Any, service: str, deps: Any, timeout: float, since: Any, tell: Any,
                 check_mode: bool = False) -> Waited:
        self.asked = dict(service=service, deps=[d.label for d in deps], minimums=[d.minimum for d in deps],
                          timeout=timeout, since=since,
                          tell=tell, check_mode=check_mode)
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


def _req(**kw: Any) -> LifecycleRequest:
    base: Dict[str, Any] = dict(service="glance", release="glance", namespace="openstack", flow="greenfield",
                                flow_action="start", target_version="2025.1", depends_on=["keystone>=2025.1"])
    base.update(kw)
    return LifecycleRequest(**base)


@pytest.fixture
def settle(monkeypatch: pytest.MonkeyPatch) -> _Settle:
    stand_in = _Settle()
    monkeypatch.setattr(runner, "settle", stand_in)
    return stand_in


def test_a_start_that_waited_returns_how_long_and_for_what_and_sets_the_condition_true(settle: _Settle) -> None:
    lifecycle = _Lifecycle()
    out = runner.run(lifecycle, _req(dependency_timeout=600, dependencies_since="2026-02-01T00:00:00Z"))
    assert (out["waited"], out["waited_for"]) == (12.3, ["keystone"])
    assert settle.asked["deps"] == ["keystone"] and settle.asked["timeout"] == 600
    assert settle.asked["since"] == parse_time("2026-02-01T00:00:00Z")
    assert lifecycle.record["spec"]["dependsOn"] == ["keystone>=2025.1"]  # kept as given
    condition = lifecycle.condition()
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "True", "Met", "met: keystone (Operational)")
    assert lifecycle.writes == ["spec", "status"]  # the condition rides on the start's own write


def test_what_the_wait_tells_goes_to_the_condition_false_and_stays_one_transition(settle: _Settle) -> None:
    lifecycle = _Lifecycle()
    runner.run(lifecycle, _req(dependency_timeout=600))
    lifecycle.record["status"]["conditions"] = []
    settle.asked["tell"]("Waiting", "waiting for keystone (Installing)")
    first = dict(lifecycle.condition())
    settle.asked["tell"]("Waiting", "waiting for keystone (Testing)")
    assert (lifecycle.condition()["status"], lifecycle.condition()["message"]) == (
        "False", "waiting for keystone (Testing)")
    assert lifecycle.condition()["lastTransitionTime"] == first["lastTransitionTime"]


def test_a_site_run_waits_for_its_versions_and_the_record_keeps_what_is_declared(settle: _Settle) -> None:
    lifecycle = _Lifecycle()
    site = {"name": "cloud", "level": 1, "dependency_versions": {"keystone": "2026.1", "infra/mariadb": "10.11"}}
    runner.run(lifecycle, _req(depends_on=["keystone>=2025.1", "memcached", "infra/mariadb>=10.11"],
                               dependency_timeout=600, site=site))
    assert settle.asked["deps"] == ["keystone", "memcached", "infra/mariadb"]
    assert settle.asked["minimums"] == ["2026.1", "", "10.11"]
    assert lifecycle.record["spec"]["dependsOn"] == ["keystone>=2025.1", "memcached", "infra/mariadb>=10.11"]
    assert "dependency_versions" not in str(lifecycle.record["metadata"])
    # A later flow of its own (a rollback) waits for what is declared, whatever the run asked.
    runner.run(lifecycle, _req(depends_on=None, flow="rollback", dependency_timeout=600))
    assert settle.asked["minimums"] == ["2025.1", "", "10.11"]


def test_a_run_version_below_a_declared_minimum_keeps_the_minimum() -> None:
    deps = runner.parse_all(["keystone>=2026.1"], "openstack", "glance")
    assert [d.minimum for d in runner.at_run_versions(deps, {"keystone": "2025.2"})] == ["2026.1"]
    assert runner.at_run_versions(deps, {}) == deps


def test_without_a_timeout_no_condition_is_added_but_an_earlier_false_one_is_set_true(settle: _Settle) -> None:
    lifecycle = _Lifecycle()
    out = runner.run(lifecycle, _req())
    assert "conditions" not in lifecycle.record["status"] and out["waited_for"] == ["keystone"]
    left = {"type": "DependenciesReady", "status": "False", "reason": "Timeout", "message": "waited",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}
    lifecycle.record["status"] = {"conditions": [left]}
    runner.run(lifecycle, _req(target_version="2025.2"))
    assert lifecycle.condition()["status"] == "True"


def test_a_malformed_dependency_is_refused_before_anything_is_written(settle: _Settle) -> None:
    lifecycle = _Lifecycle()
    with pytest.raises(LifecycleError, match="is not name, name>=min_version or namespace/name>=min_version"):
        runner.run(lifecycle, _req(depends_on=["keystone=>2025.1"]))
    assert lifecycle.writes == [] and settle.asked == {}


@pytest.mark.parametrize("kw, error", [
    ({"dependency_timeout": -1}, "dependency_timeout must be 0"),
    ({"dependencies_since": "yesterday"}, "dependencies_since 'yesterday' is not a timestamp"),
])
def test_bad_wait_options_name_the_fix(settle: _Settle, kw: Dict[str, Any], error: str) -> None:
    with pytest.raises(LifecycleError, match=error):
        runner.run(_Lifecycle(), _req(**kw))


def test_a_start_reads_the_records_list_when_none_is_given_and_skips_when_not_required(settle: _Settle) -> None:
    lifecycle = _Lifecycle({"metadata": {"name": "glance", "namespace": "openstack"},
                            "spec": {"service": "glance", "release": "glance", "dependsOn": ["infra/mariadb>=10.6"]}})
    runner.run(lifecycle, _req(depends_on=None))
    assert settle.asked["deps"] == ["infra/mariadb"]
    settle.asked = {}
    out = runner.run(lifecycle, _req(depends_on=None, require_dependencies=False, target_version="2025.2"))
    assert settle.asked == {} and "waited" not in out


def test_a_failed_wait_starts_no_flow(settle: _Settle) -> None:
    settle.outcome = PhaseError("glance depends on keystone (Failed)")
    lifecycle = _Lifecycle()
    with pytest.raises(PhaseError, match="keystone"):
        runner.run(lifecycle, _req(dependency_timeout=60))
    assert "flow" not in (lifecycle.record.get("status") or {})


def test_check_mode_asks_the_wait_in_check_mode_and_writes_nothing(settle: _Settle) -> None:
    lifecycle = _Lifecycle()
    out = runner.run(lifecycle, _req(dependency_timeout=600), check_mode=True)
    assert settle.asked["check_mode"] is True and lifecycle.writes == []
    assert out["waited_for"] == ["keystone"] and out["changed"] is True


def test_a_site_member_is_labelled_once_and_keeps_its_run_when_none_is_given() -> None:
    lifecycle = _Lifecycle()
    site = {"name": "example", "level": 1, "run": "2026-02-01T00:00:00Z", "expected_duration": 120}
    assert runner.run(lifecycle, LifecycleRequest("glance", "glance", "openstack", site=site))["changed"]
    meta = lifecycle.record["metadata"]
    assert meta["labels"] == {"lifecycle.openstack.org/site": "example"}
    assert meta["annotations"] == {"lifecycle.openstack.org/site-level": "1",
                                   "lifecycle.openstack.org/site-run": "2026-02-01T00:00:00Z",
                                   "lifecycle.openstack.org/site-expected-seconds": "120",
                                   "lifecycle.openstack.org/site-provided": "[]"}
    # The same again, or without a run (a later run with nothing to do for it): no write.
    writes = list(lifecycle.writes)
    assert not runner.run(lifecycle, LifecycleRequest("glance", "glance", "openstack", site=site))["changed"]
    unchanged = dict(site, run="")
    assert not runner.run(lifecycle, LifecycleRequest("glance", "glance", "openstack", site=unchanged))["changed"]
    assert lifecycle.writes == writes
    # Another level is written.
    assert runner.run(lifecycle, LifecycleRequest("glance", "glance", "openstack", site=dict(site, level=2)))["changed"]


@pytest.mark.parametrize("site, why", [
    ({"name": ""}, "site.name is required"),
    ({"name": "example", "level": -1}, "0 or more"),
    ({"name": "example", "run": "yesterday"}, "is not a timestamp"),
])
def test_a_bad_site_is_refused_before_anything_is_written(site: Dict[str, Any], why: str) -> None:
    lifecycle = _Lifecycle()
    with pytest.raises(LifecycleError, match=why):
        runner.run(lifecycle, LifecycleRequest("glance", "glance", "openstack", site=site))
    assert lifecycle.writes == []


class _Records:
    """The namespace's ServiceLifecycles, as one list answers them."""

    def __init__(self, *records: Dict[str, Any]) -> None:
        self.items = list(records)

    def get(self, **_kw: Any) -> Any:
        items = self.items

        class _Page:
            @staticmethod
            def to_dict() -> Dict[str, Any]:
                return {"items": items, "metadata": {}}
        return _Page()


def _dependent(name: str, state: str) -> Dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "openstack"}, "spec": {"dependsOn": ["glance"]},
            "status": {"state": state}}


def test_a_removal_is_refused_while_an_operational_service_depends_on_it(settle: _Settle) -> None:
    lifecycle = _Lifecycle({"metadata": {"name": "glance"}, "spec": {}, "status": {"state": "Operational"}})
    lifecycle.res = _Records(_dependent("nova", "Operational"), _dependent("cinder", "Removed"),
                             _dependent("heat", "Failed"))
    with pytest.raises(LifecycleError, match=r"glance is depended on by nova \(Operational\): remove them first"):
        runner.run(lifecycle, _req(flow="remove", depends_on=None))
    assert lifecycle.writes == [] and settle.asked == {}


def test_a_site_removal_waits_for_the_dependents_it_removes_too(settle: _Settle) -> None:
    lifecycle = _Lifecycle({"metadata": {"name": "glance"}, "spec": {}, "status": {"state": "Operational"}})
    lifecycle.res = _Records(_dependent("nova", "Operational"), _dependent("cinder", "Removed"))
    runner.run(lifecycle, _req(flow="remove", depends_on=None, removed_with=["nova"], dependency_timeout=60))
    assert settle.asked["deps"] == ["nova"] and settle.asked["timeout"] == 60


def test_a_flow_lease_taken_over_is_recorded_on_the_service(settle: _Settle) -> None:
    lifecycle = _Lifecycle()
    said = "keystone: flow lease lcm-flow-keystone taken over from host-a/4711, which stopped renewing it at ..."
    runner.run(lifecycle, _req(depends_on=None, took_over=said))
    (cond,) = [c for c in lifecycle.record["status"]["conditions"] if c["type"] == "FlowLeaseTakenOver"]
    assert (cond["status"], cond["reason"], cond["message"]) == ("True", "TakenOver", said)
    # A flow started normally adds none.
    other = _Lifecycle()
    runner.run(other, _req(depends_on=None))
    assert not [c for c in other.record["status"].get("conditions") or [] if c["type"] == "FlowLeaseTakenOver"]


def test_a_slice_of_a_site_removal_waits_for_every_dependent(settle: _Settle) -> None:
    lifecycle = _Lifecycle({"metadata": {"name": "glance"}, "spec": {}, "status": {"state": "Operational"}})
    lifecycle.res = _Records(_dependent("nova", "Operational"), _dependent("heat", "Installing"),
                             _dependent("cinder", "Removed"))
    runner.run(lifecycle, _req(flow="remove", depends_on=None, removed_with=["*"], dependency_timeout=60))
    assert settle.asked["deps"] == ["nova", "heat"]


def test_what_the_wait_tells_is_also_a_progress_line_with_the_time_left(
        settle: _Settle, monkeypatch: pytest.MonkeyPatch) -> None:
    from ansible_collections.lcm.openstack.plugins.module_utils.progress import lines as progress_lines
    said: List[Any] = []

    def for_run(subject: str, redact: Any = str, deadline: Optional[float] = None) -> Any:
        assert deadline is not None
        return progress_lines.WaitLines(subject, lambda text, level: said.append((level, text)), redact,
                                        deadline, clock=lambda: deadline - 600)  # as the wait starts
    monkeypatch.setattr(progress_lines, "for_run", for_run)
    runner.run(_Lifecycle(), _req(dependency_timeout=600))
    settle.asked["tell"]("Waiting", "waiting for keystone (Installing)")
    assert said == [(0, "glance greenfield: waiting for keystone (Installing), 600 s left")]
