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

# The selector keys are jq queries. This test understands the shapes the
# stages use: plain paths (.a.b, .a["key"], .a[0]), a condition's field
# (.status.conditions.[] | select( .type == "T" ) | .status), and the few
# compound queries below, each with its meaning written out in Python.
_STEP = re.compile(r'\.([A-Za-z_]\w*)|\["([^"]+)"\]|\[(\d+)\]')
_PLAIN = re.compile(r'(?:\.[A-Za-z_]\w*|\["[^"]+"\]|\[\d+\])+')
_CONDITION = re.compile(r'(?P<list>\S+)\.\[\] \| select\( \.type == "(?P<type>\w+)" \) \| \.(?P<field>\w+)')
_MISSING = object()

DEPENDENCIES = "bed.lcm.openstack.org/dependencies"
FAIL = "bed.lcm.openstack.org/fail"


def _released(pod: Dict[str, Any]) -> bool:
    """Init containers may complete: bedlet said the entrypoint dependencies
    hold, or no init container is a kubernetes-entrypoint one."""
    if ((pod.get("metadata") or {}).get("annotations") or {}).get(DEPENDENCIES) == "satisfied":
        return True
    return not any(e.get("name", "").startswith("DEPENDENCY_")
                   for c in (pod.get("spec") or {}).get("initContainers") or []
                   for e in c.get("env") or [])


def _starts(pod: Dict[str, Any]) -> bool:
    """Containers start: not asked to fail, or restarted in place when they do."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return FAIL not in annotations or (pod.get("spec") or {}).get("restartPolicy") == "OnFailure"


COMPOUND = {
    '(.metadata.annotations["bed.lcm.openstack.org/dependencies"] == "satisfied") or '
    '([.spec.initContainers[]?.env[]?.name | select(startswith("DEPENDENCY_"))] | length == 0)': _released,
    '(.metadata.annotations["bed.lcm.openstack.org/fail"] == null) or '
    '(.spec.restartPolicy == "OnFailure")': _starts,
}


def _path(obj: Any, path: str) -> Any:
    cur: Any = obj
    for attr, key, index in _STEP.findall(path):
        if index:
            if not isinstance(cur, list) or int(index) >= len(cur):
                return _MISSING
            cur = cur[int(index)]
        else:
            if not isinstance(cur, dict):
                return _MISSING
            cur = cur.get(attr or key, _MISSING)
        if cur is _MISSING or cur is None:
            return _MISSING
    return cur


def lookup(obj: Dict[str, Any], query: str) -> Any:
    if query in COMPOUND:
        return COMPOUND[query](obj)
    cond = _CONDITION.fullmatch(query)
    if cond:
        items = _path(obj, cond["list"])
        for item in items if isinstance(items, list) else []:
            if item.get("type") == cond["type"] and cond["field"] in item:
                return item[cond["field"]]
        return _MISSING
    if not _PLAIN.fullmatch(query):
        raise ValueError(f"selector key {query!r} is not a shape this test knows; extend this test")
    return _path(obj, query)


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def matches(stage: Dict[str, Any], obj: Dict[str, Any]) -> bool:
    for expr in stage["spec"]["selector"]["matchExpressions"]:
        value = lookup(obj, expr["key"])
        op = expr["operator"]
        if op == "Exists" and value is _MISSING:
            return False
        if op == "DoesNotExist" and value is not _MISSING:
            return False
        if op == "In" and (value is _MISSING or _text(value) not in expr["values"]):
            return False
        if op == "NotIn" and value is not _MISSING and _text(value) in expr["values"]:
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
