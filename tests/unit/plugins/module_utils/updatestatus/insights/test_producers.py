"""plugins/module_utils/updatestatus/insights/__init__.py: every producer together on
scenarios of cluster objects (each producer alone: test_<producer>.py).

A scenario (fixtures/update_status/<name>.yaml) lists every insight all the
producers together must find in it, and nothing else: an object it does not
expect an insight for (a healthy pod, a pod not Ready for less than the
threshold, the failure of an earlier flow) is a negative case.
"""

from __future__ import annotations

import copy
from typing import Dict, List

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus import insights
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import (
    IMPACTS, LEVELS, PRODUCERS, Insight, Settings, Snapshot, produce_all,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import format_time, parse_time
from support.update_status import load, scenarios, snapshot

EXPECT_KEYS = {"producer", "resource", "resources", "level", "type", "startedAt", "summary", "summary_contains",
               "description", "description_contains", "reference"}


def _by_resource(found: List[Insight]) -> Dict[str, Insight]:
    """producer:Kind/name of the main resource -> the insight."""
    out = {}
    for insight in found:
        main = insight.resources[0]
        key = f"{insight.uid.split('-')[0]}:{main['kind']}/{main['name']}"
        assert key not in out, f"two insights on {key}: {out.get(key)} and {insight}"
        out[key] = insight
    return out


@pytest.mark.parametrize("name", scenarios())
def test_scenario_yields_exactly_the_expected_insights(name: str) -> None:
    doc = load(name)
    snap = snapshot(name)
    before = copy.deepcopy(snap)
    found = _by_resource(produce_all(snap, Settings()))
    assert snap == before, "producers must not modify the snapshot"
    expected = {f"{e['producer']}:{e['resource']}": e for e in doc["expect"]}
    assert sorted(found) == sorted(expected), {k: v.summary for k, v in found.items()}
    for key, want in expected.items():
        got = found[key]
        assert set(want) <= EXPECT_KEYS, f"unknown expect keys in {name}: {set(want) - EXPECT_KEYS}"
        assert (got.level, got.type) == (want["level"], want["type"]), got
        assert format_time(got.started_at) == want["startedAt"], got
        assert got.namespace == "openstack" and got.service
        if "resources" in want:
            assert [f"{r['kind']}/{r['name']}" for r in got.resources] == want["resources"]
        for field in ("summary", "description", "reference"):
            if field in want:
                assert getattr(got, field) == want[field], got
            if f"{field}_contains" in want:
                assert want[f"{field}_contains"] in getattr(got, field), got


@pytest.mark.parametrize("name", scenarios())
def test_every_insight_is_well_formed(name: str) -> None:
    for insight in produce_all(snapshot(name), Settings()):
        assert insight.level in LEVELS and insight.type in IMPACTS, insight
        assert insight.summary and "\n" not in insight.summary, insight
        assert insight.reference.startswith(("docs/update-status.md#", "kubectl ")), insight
        assert insight.started_at.tzinfo is not None
        assert all(set(r) == {"kind", "name", "namespace"} for r in insight.resources)


def test_every_producer_is_registered_once_and_named_after_its_module() -> None:
    assert len({p.NAME for p in PRODUCERS}) == len(PRODUCERS) == 8
    for producer in PRODUCERS:
        assert producer.__name__.rsplit(".", 1)[-1] == producer.NAME


def test_a_producer_that_raises_is_an_insight_and_hides_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        NAME = "broken"

        @staticmethod
        def produce(_snapshot: Snapshot, _settings: Settings) -> List[Insight]:
            raise KeyError("metadata")

    monkeypatch.setattr(insights, "PRODUCERS", PRODUCERS + [Broken])
    found = produce_all(snapshot("releases"), Settings())
    assert [i.level for i in found] == ["Critical", "Critical", "Warning"]
    assert found[-1].type == "Unknown" and "broken insight producer failed: KeyError" in found[-1].summary


def test_insights_come_most_severe_first_then_oldest() -> None:
    doc = load("pods")
    doc["objects"] += [o for o in load("releases")["objects"]  # keystone's Helm records: a Critical
                       if o["kind"] == "Secret" and o["metadata"]["name"].startswith("sh.helm.release.v1.keystone.")]
    found = produce_all(Snapshot.from_objects(doc["objects"], parse_time(doc["now"])), Settings())
    assert [i.level for i in found] == ["Critical", "Error", "Error", "Warning", "Warning"]
    errors = [i for i in found if i.level == "Error"]
    assert errors[0].started_at < errors[1].started_at
