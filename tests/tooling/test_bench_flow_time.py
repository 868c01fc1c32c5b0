"""bench/flow_time.py, the greenfield bench's arithmetic: the union of the Jobs' intervals, and each
task's span split into the Jobs' part, Helm's and the rest."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_flow_time", ROOT / "bench" / "flow_time.py")
flow_time = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(flow_time)


def test_jobs_of_one_wave_count_once_and_the_gaps_between_waves_not_at_all() -> None:
    union = flow_time.merged([(10.0, 12.0), (10.5, 13.0), (15.0, 16.0), (11.0, 11.5), (20.0, 20.0)])
    assert union == [(10.0, 13.0), (15.0, 16.0)]
    assert flow_time.covered(union, 0.0, 100.0) == 4.0
    assert flow_time.covered(union, 12.0, 15.5) == 1.5


def test_each_task_spans_to_the_next_start_and_start_up_and_exit_are_tasks_of_their_own() -> None:
    events = [
        {"event": "start", "uuid": "a", "name": "Create the namespace gf-1", "action": "kubernetes.core.k8s", "t": 101.0},
        {"event": "result", "uuid": "a", "status": "changed", "modules": 1, "t": 102.0},
        {"event": "start", "uuid": "b", "name": "Install", "action": "lcm.openstack.helm_release", "t": 103.0},
        {"event": "result", "uuid": "b", "status": "changed", "modules": 1, "t": 106.0},
        {"event": "start", "uuid": "c", "name": "Run the install phase", "action": "lcm.openstack.phase", "t": 106.5},
        {"event": "result", "uuid": "c", "status": "changed", "modules": 1, "t": 116.0},
        {"event": "end", "t": 116.5},
    ]
    spans = flow_time.task_spans(events, 100.0, 117.0, "gf-1")
    assert [s["name"] for s in spans] == ["(start-up, before the first task)", "Create the namespace <namespace>",
                                          "Install", "Run the install phase", "(after the last task, to the exit)"]
    assert [s["end"] - s["start"] for s in spans] == [1.0, 2.0, 3.5, 10.0, 0.5]

    tasks = flow_time.breakdown(spans, [(108.0, 110.0), (111.0, 115.0)], helm=1.25)
    assert [t["deliberate"] for t in tasks] == [0.0, 0.0, 1.25, 6.0, 0.0]
    assert [t["overhead"] for t in tasks] == [1.0, 2.0, 2.25, 4.0, 0.5]
    assert sum(t["modules"] for t in tasks) == 3


def test_helm_is_not_taken_off_a_task_for_more_than_it_lasted() -> None:
    spans = [{"name": "Install", "action": "lcm.openstack.helm_release", "status": "changed", "modules": 1,
              "start": 0.0, "end": 0.5}]
    (task,) = flow_time.breakdown(spans, [], helm=2.0)
    assert task["deliberate"] == pytest.approx(0.5) and task["overhead"] == pytest.approx(0.0)
