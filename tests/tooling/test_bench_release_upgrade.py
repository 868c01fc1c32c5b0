"""bench/release_upgrade.py, the release upgrade bench's arithmetic: the updates of a site's run
from its ServiceLifecycles, their ordered critical path, the strategies' turns and table, and
keystone's values for a rolling update."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Dict, List

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_release_upgrade", ROOT / "bench" / "release_upgrade.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

T0 = 1_800_000_000.0  # 2027-01-15T08:00:00Z


def _at(seconds: float) -> str:
    from datetime import datetime, timezone
    return datetime.fromtimestamp(T0 + seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _record(service: str, flow: str, start: float, end: float, depends: List[str]) -> Dict[str, Any]:
    return {"spec": {"service": service, "dependsOn": depends},
            "status": {"flow": {"name": flow, "startedAt": _at(start), "completedAt": _at(end)}}}


RECORDS = [
    _record("mariadb", "greenfield", -300, -250, []),  # not updated by the run: no weight, no link
    _record("keystone", "update", 5, 40, ["kit/mariadb", "kit/memcached"]),
    _record("placement", "update", 41, 70, ["kit/keystone>=2026.1", "kit/mariadb"]),
    _record("nova", "update", 71, 150, ["kit/placement", "kit/keystone"]),
    _record("neutron", "update", 41, 120, ["kit/keystone"]),
    _record("cinder", "update", -200, -100, ["kit/keystone"]),  # an update of an earlier run
]


def test_the_run_s_updates_from_its_start_and_their_ordered_critical_path() -> None:
    times = bench.update_times(RECORDS, T0)
    assert sorted(times) == ["keystone", "neutron", "nova", "placement"]
    assert times["nova"] == {"start": 71.0, "end": 150.0, "duration": 79.0}
    deps = bench.updated_dependencies(RECORDS, list(times))
    assert deps == {"keystone": [], "placement": ["keystone"], "nova": ["keystone", "placement"], "neutron": ["keystone"]}
    result = bench.site_result(RECORDS, T0, wall=160.0)
    assert (result["critical_path"], result["chain"]) == (35 + 29 + 79, ["keystone", "placement", "nova"])
    assert result["serial"] == 35 + 29 + 79 + 79
    table = bench.site_table(result)
    assert table[2:6] == ["| keystone | 5 s | 40 s | 35 s |", "| neutron | 41 s | 120 s | 79 s |",
                          "| placement | 41 s | 70 s | 29 s |", "| nova | 71 s | 150 s | 79 s |"]
    assert table[-1] == "| 160 s | 143 s (keystone -> placement -> nova) | 1.12 | 222 s | 1.6 |"


def test_a_run_that_updated_nothing_has_no_path() -> None:
    result = bench.site_result(RECORDS[:1], T0, wall=12.0)
    assert result["chain"] == [] and result["serial"] == 0
    assert bench.site_table(result)[-1] == "| 12 s | no update | | 0 s | |"


def test_the_next_release_is_one_step_on() -> None:
    assert [bench.next_release(v) for v in ("2025.2", "2026.1", "2026.2")] == ["2026.1", "2026.2", "2027.1"]
    with pytest.raises(ValueError):
        bench.next_release("10.11")


def test_each_strategy_runs_as_often_taking_turns_to_go_first() -> None:
    assert bench.strategy_rounds(3) == ["drain", "rolling", "rolling", "drain", "drain", "rolling"]


def test_the_strategies_table() -> None:
    runs = [{"strategy": "drain", "zero_seconds": 4.0, "zero_spans": 1, "min_ready": 0, "wall": 50.0,
             "phases": ["traffic-drain", "upgrade", "traffic-rollout", "test"]},
            {"strategy": "rolling", "zero_seconds": 0.0, "zero_spans": 0, "min_ready": 1, "wall": 40.0,
             "phases": ["upgrade", "test"]},
            {"strategy": "drain", "zero_seconds": 6.0, "zero_spans": 2, "min_ready": 0, "wall": 54.0,
             "phases": ["traffic-drain", "upgrade", "traffic-rollout", "test"]}]
    rows = bench.strategy_rows(runs)
    assert rows[2] == "| drain | 2 | 5.0 s (6.0 s) | 3 | 0 | 52 s | traffic-drain -> upgrade -> traffic-rollout -> test |"
    assert rows[3] == "| rolling | 1 | 0.0 s (0.0 s) | 0 | 1 | 40 s | upgrade -> test |"


def test_keystone_s_values_name_the_release_s_images_and_roll_two_pods_one_at_a_time() -> None:
    given = {"images": {"tags": {"keystone_api": "old", "bootstrap": "kept"}}, "conf": {"x": 1}}
    values = bench.keystone_values("2026.2", given)
    assert values["images"]["tags"] == {"keystone_api": "quay.io/airshipit/keystone:2026.2-ubuntu_noble",
                                        "keystone_db_sync": "quay.io/airshipit/keystone:2026.2-ubuntu_noble",
                                        "bootstrap": "kept"}
    assert values["conf"] == {"x": 1} and given["images"]["tags"]["keystone_api"] == "old"
    assert values["pod"]["replicas"]["api"] == 2
    assert values["pod"]["lifecycle"]["upgrades"]["deployments"]["rolling_update"]["max_unavailable"] == 0


def test_the_rolling_values_are_keys_of_keystone_s_chart() -> None:
    from support import openstack_helm
    chart = yaml.safe_load((openstack_helm.source_dir() / "keystone" / "values.yaml").read_text())
    deployments = chart["pod"]["lifecycle"]["upgrades"]["deployments"]
    assert chart["pod"]["replicas"]["api"] == 1 and deployments["rolling_update"]["max_unavailable"] == 1
    assert set(bench.ROLLING_VALUES["pod"]["lifecycle"]["upgrades"]["deployments"]["rolling_update"]) <= \
        set(deployments["rolling_update"])


def test_the_apis_watched_during_the_site_s_upgrade() -> None:
    rows = bench.endpoint_rows({"nova-api": {"zero_seconds": 0.0, "zero_spans": 0, "min_ready": 1},
                                "keystone-api": {"zero_seconds": 3.25, "zero_spans": 1, "min_ready": 0}})
    assert rows[2:] == ["| keystone-api | 3.2 s | 1 | 0 |", "| nova-api | 0.0 s | 0 | 1 |"]
