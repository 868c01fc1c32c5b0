"""plugins/module_utils/helm/chart_tests.py: the test hooks of a release's
last `helm test`, each with its phase and times, a failed test Pod with its
log tail masked."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Dict, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import MASK, Redactor
from ansible_collections.lcm.openstack.plugins.module_utils.helm import chart_tests

SECRET = "a-long-admin-passw0rd"
STATUS = {"hooks": [
    {"name": "keystone-test", "kind": "Pod", "events": ["test"],
     "last_run": {"phase": "Failed", "started_at": "2026-11-24T03:00:00Z", "completed_at": "2026-11-24T03:01:00Z"}},
    {"name": "keystone-smoke", "kind": "Pod", "events": ["test-success"],
     "last_run": {"phase": "Succeeded", "started_at": "2026-11-24T03:00:00Z", "completed_at": "2026-11-24T03:00:30Z"}},
    {"name": "keystone-db-init", "kind": "Job", "events": ["pre-install"], "last_run": {"phase": "Succeeded"}},
]}


def _helm(status: Dict[str, Any]) -> Any:
    redactor = Redactor()
    redactor.add_values({"password": SECRET})
    return SimpleNamespace(status=lambda release, namespace: status, redactor=redactor)


class _Pods:
    def __init__(self) -> None:
        self.resources = self

    def get(self, **kwargs: Any) -> Any:
        if "api_version" in kwargs:
            return self
        return SimpleNamespace(to_dict=lambda: {"kind": "Pod", "metadata": {"name": kwargs["name"]}, "status": {}})


def test_each_test_hook_with_a_failed_pods_log_tail_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: List[str] = []

    def log_tail(dyn: Any, namespace: str, pod: Dict[str, Any]) -> str:
        seen.append(pod["metadata"]["name"])
        return f"401 Unauthorized for admin:{SECRET}"
    monkeypatch.setattr(chart_tests.diagnose, "log_tail", log_tail)
    out = chart_tests.results(_Pods(), _helm(STATUS), "keystone", "openstack")
    assert [(e["name"], e["phase"]) for e in out] == [("keystone-test", "Failed"), ("keystone-smoke", "Succeeded")]
    assert out[0]["log_tail"] == f"401 Unauthorized for admin:{MASK}" and "log_tail" not in out[1]
    assert out[1]["completed_at"] == "2026-11-24T03:00:30Z" and seen == ["keystone-test"]


def test_without_a_cluster_client_or_a_status_there_is_no_tail_and_no_test() -> None:
    out = chart_tests.results(None, _helm(STATUS), "keystone", "openstack")
    assert "log_tail" not in out[0]
    assert chart_tests.results(None, _helm({}), "keystone", "openstack") == []


def test_a_test_pod_already_cleaned_up_is_still_asked_for_its_tail_and_a_failed_job_is_not(
        monkeypatch: pytest.MonkeyPatch) -> None:
    asked: List[Dict[str, Any]] = []

    def log_tail(dyn: Any, namespace: str, pod: Dict[str, Any]) -> str:
        asked.append(pod)
        return ""

    class _Gone(_Pods):
        def get(self, **kwargs: Any) -> Any:
            if "api_version" in kwargs:
                return self
            raise LookupError(f"pods {kwargs['name']} not found")
    monkeypatch.setattr(chart_tests.diagnose, "log_tail", log_tail)
    status = {"hooks": [dict(STATUS["hooks"][0]),
                        {"name": "keystone-test-job", "kind": "Job", "events": ["test"], "last_run": {"phase": "Failed"}},
                        {"name": "keystone-unrun", "kind": "Pod", "events": ["test"]}]}
    out = chart_tests.results(_Gone(), _helm(status), "keystone", "openstack")
    assert asked == [{"kind": "Pod", "metadata": {"name": "keystone-test"}}] and out[0]["log_tail"] == ""
    assert [(e["name"], e["phase"], "log_tail" in e) for e in out] == [
        ("keystone-test", "Failed", True), ("keystone-test-job", "Failed", False), ("keystone-unrun", "", False)]
    assert out[2]["started_at"] is None and out[2]["completed_at"] is None
