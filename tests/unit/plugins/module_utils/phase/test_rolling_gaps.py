"""plugins/module_utils/phase/rolling_gaps.py: the Deployments that would leave
their Service without a ready pod while a rolling update rolls them."""

from __future__ import annotations

from typing import Any, Dict

from ansible_collections.lcm.openstack.plugins.module_utils.helm import render
from ansible_collections.lcm.openstack.plugins.module_utils.phase.rolling_gaps import gaps
from support.paths import UNIT_FIXTURES


def _deployment(name: str, replicas: int, **strategy: Any) -> Dict[str, Any]:
    return {"kind": "Deployment", "metadata": {"name": name}, "spec": {"replicas": replicas, "strategy": strategy}}


def test_the_stock_chart_default_leaves_a_gap_and_says_which_value_closes_it() -> None:
    keystone = render.parse_manifest((UNIT_FIXTURES / "openstack_helm" / "keystone.out").read_text())
    (warning,) = gaps(r.obj for r in keystone)
    assert warning.startswith("Deployment keystone-api has 1 replica(s) and may take 1 away at once")
    assert "rolling_update.max_unavailable: 0" in warning


def test_what_rolls_without_a_gap_is_not_named() -> None:
    assert gaps([_deployment("a", 1, type="RollingUpdate", rollingUpdate={"maxUnavailable": 0, "maxSurge": 1}),
                 _deployment("b", 2, type="RollingUpdate", rollingUpdate={"maxUnavailable": 1}),
                 _deployment("c", 4, type="RollingUpdate", rollingUpdate={"maxUnavailable": "50%"}),
                 _deployment("d", 3),  # the default 25% rounds down to 0
                 _deployment("e", 0),
                 {"kind": "DaemonSet", "metadata": {"name": "f"}, "spec": {}}]) == []


def test_recreate_and_a_whole_percentage_are_named() -> None:
    found = gaps([_deployment("a", 2, type="Recreate"),
                  _deployment("b", 2, type="RollingUpdate", rollingUpdate={"maxUnavailable": "100%"})])
    assert [w.split(" ")[1] for w in found] == ["a", "b"]
    assert "rolls by Recreate" in found[0]
