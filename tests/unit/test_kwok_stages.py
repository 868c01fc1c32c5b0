"""The bed's fake-kubelet stages must be mutually exclusive: kwok picks among
matching stages at random, so an overlap would make the bed flaky."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
STAGES = [d for d in yaml.safe_load_all((ROOT / "tests/cluster/kwok-stages.yaml").read_text())
          if d and d.get("kind") == "Stage"]
CASES = yaml.safe_load((Path(__file__).parent / "fixtures/kwok_pods.yaml").read_text())

# The selector keys used for pods are plain paths: .a.b or .a["key"].
_STEP = re.compile(r'\.([A-Za-z_]\w*)|\["([^"]+)"\]')
_MISSING = object()


def lookup(obj: Dict[str, Any], path: str) -> Any:
    if not re.fullmatch(r'(?:\.[A-Za-z_]\w*|\["[^"]+"\])+', path):
        raise ValueError(f"pod selector key {path!r} is not a plain path; extend this test")
    cur: Any = obj
    for attr, key in _STEP.findall(path):
        if not isinstance(cur, dict):
            return _MISSING
        cur = cur.get(attr or key, _MISSING)
        if cur is _MISSING or cur is None:
            return _MISSING
    return cur


def matches(stage: Dict[str, Any], obj: Dict[str, Any]) -> bool:
    for expr in stage["spec"]["selector"]["matchExpressions"]:
        value = lookup(obj, expr["key"])
        op = expr["operator"]
        if op == "Exists" and value is _MISSING:
            return False
        if op == "DoesNotExist" and value is not _MISSING:
            return False
        if op == "In" and (value is _MISSING or str(value) not in expr["values"]):
            return False
        if op == "NotIn" and value is not _MISSING and str(value) in expr["values"]:
            return False
    return True


def pod_stages() -> List[Dict[str, Any]]:
    return [s for s in STAGES if s["spec"]["resourceRef"]["kind"] == "Pod"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_exactly_the_expected_stage_acts(case: Dict[str, Any]) -> None:
    hits = [s["metadata"]["name"] for s in pod_stages() if matches(s, case["pod"])]
    expected: Optional[str] = case["expect"]
    assert hits == ([expected] if expected else []), hits


def test_every_pod_stage_is_exercised_by_a_fixture() -> None:
    expected = {c["expect"] for c in CASES}
    assert {s["metadata"]["name"] for s in pod_stages()} <= expected


def test_node_stages_split_on_the_ready_condition() -> None:
    """One stage makes a new node Ready, the other only refreshes Ready ones:
    the same key, complementary operators, so never both."""
    nodes = {s["metadata"]["name"]: s["spec"]["selector"]["matchExpressions"]
             for s in STAGES if s["spec"]["resourceRef"]["kind"] == "Node"}
    assert set(nodes) == {"node-ready", "node-heartbeat"}
    (init,), (beat,) = nodes["node-ready"], nodes["node-heartbeat"]
    assert init["key"] == beat["key"] and init["values"] == beat["values"] == ["True"]
    assert (init["operator"], beat["operator"]) == ("NotIn", "In")
