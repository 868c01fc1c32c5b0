"""plugins/module_utils/helm/drift.py: whether a release is what is asked,
and the diff that shows where not (Helm replaced by a stub)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.helm import drift
from ansible_collections.lcm.openstack.plugins.module_utils.helm.release import ReleaseRequest

MANIFEST = """---
# Source: svc/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-api
spec:
  replicas: 1
"""
SECRET = """---
# Source: svc/templates/secret.yaml
apiVersion: v1
kind: Secret
metadata:
  name: svc-db
stringData:
  password: not-to-be-shown
"""


class _Helm:
    def __init__(self, values: Optional[Dict[str, Any]] = None, chart: str = "svc-0.1.0") -> None:
        self.values, self.chart = values or {}, chart

    def show_chart(self, chart: str, version: Optional[str]) -> Dict[str, str]:
        name, version = self.chart.rsplit("-", 1)
        return {"name": name, "version": version}

    def get_values(self, release: str, namespace: str) -> Dict[str, Any]:
        return self.values


def _req(**values: Any) -> ReleaseRequest:
    return ReleaseRequest(name="svc", namespace="openstack", chart="svc", values=values)


def _history(status: str, chart: str = "svc-0.1.0") -> List[Dict[str, Any]]:
    return [{"revision": 1, "status": status, "chart": chart}]


@pytest.mark.parametrize("history, helm, desired, expected", [
    ([], _Helm(), MANIFEST, "install"),
    (_history("uninstalled"), _Helm(), MANIFEST, "install"),
    (_history("failed"), _Helm(), MANIFEST, "upgrade"),  # a failed release is upgraded, not left stuck
    (_history("deployed", "svc-0.0.9"), _Helm(), MANIFEST, "upgrade"),  # another chart version
    (_history("deployed"), _Helm(), MANIFEST.replace("replicas: 1", "replicas: 2"), "upgrade"),
    (_history("deployed"), _Helm({"replicas": 2}), MANIFEST, "upgrade"),  # the stored values differ
    (_history("deployed"), _Helm({"replicas": 1.0}), MANIFEST, None),  # 1 and 1.0 are alike once stored
])
def test_what_the_release_needs(history: List[Dict[str, Any]], helm: _Helm, desired: str,
                                expected: Optional[str]) -> None:
    assert drift.needed(_req(replicas=1), history, desired, MANIFEST, lambda: helm.show_chart("svc", None),
                        lambda: helm.get_values("svc", "openstack")) == expected


def test_the_diff_masks_secret_data() -> None:
    shown = drift.diff("svc", "", MANIFEST + SECRET)
    assert shown["before_header"] == "svc (deployed)" and shown["after_header"] == "svc (rendered)"
    assert "svc-db" in shown["after"] and "not-to-be-shown" not in shown["after"]


def test_the_chart_and_the_deployed_values_are_read_only_when_the_answer_depends_on_them() -> None:
    asked: List[str] = []

    def chart() -> Dict[str, str]:
        asked.append("chart")
        return {"name": "svc", "version": "0.1.0"}

    def values() -> Dict[str, Any]:
        asked.append("values")
        return {"replicas": 1}
    assert drift.needed(_req(replicas=1), _history("failed"), MANIFEST, MANIFEST, chart, values) == "upgrade"
    assert asked == []
    changed = MANIFEST.replace("replicas: 1", "replicas: 2")
    assert drift.needed(_req(replicas=1), _history("deployed"), changed, MANIFEST, chart, values) == "upgrade"
    assert asked == ["chart"]
    assert drift.needed(_req(replicas=1), _history("deployed"), MANIFEST, MANIFEST, chart, values) is None
    assert asked == ["chart", "chart", "values"]
