"""plugins/module_utils/progress/lines.py: the lines a wait says, from the changes it already knows.

The cases live in fixtures/progress/lines.yaml: a sequence of steps (the run
begins, a wave starts, states change, a wave's wait ends) at given times, and
the lines expected, with their level."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import Readiness
from ansible_collections.lcm.openstack.plugins.module_utils.progress import lines as progress_lines
from ansible_collections.lcm.openstack.plugins.module_utils.progress.emitter import ENV
from ansible_collections.lcm.openstack.plugins.module_utils.progress.lines import WaitLines
from support.paths import UNIT_FIXTURES

CASES = yaml.safe_load((UNIT_FIXTURES / "progress" / "lines.yaml").read_text())


def _states(rows: List[List[str]]) -> Dict[Tuple[str, str], Readiness]:
    return {(kind, name): Readiness(state, message) for kind, name, state, message in rows}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_lines_of_a_sequence(case: Dict[str, Any]) -> None:
    said: List[List[Any]] = []
    clock = Clock()
    secret = case.get("redact")

    def redact(text: str) -> str:
        return text.replace(secret, "********") if secret else text
    lines = WaitLines(case["subject"], lambda text, level: said.append([level, text]), redact,
                      case.get("deadline"), clock)
    for step in case["steps"]:
        clock.now = step["at"]
        if "begin" in step:
            lines.begin(step["begin"])
        if "wave" in step:
            wave = step["wave"]
            lines.wave(wave["index"], wave["total"], [tuple(k) for k in wave["keys"]])
        if "changed" in step:
            lines.changed(_states(step["changed"]))
        if "ended" in step:
            lines.ended(_states(step["ended"]["states"]), step["ended"].get("timed_out", False))
    assert said == case["expect"]


def test_without_a_channel_nothing_is_said_and_nothing_is_worded() -> None:
    worded: List[str] = []

    def redact(text: str) -> str:
        worded.append(text)
        return text
    lines = WaitLines("svc install", None, redact, 10.0)
    assert not lines.on
    lines.begin("Phase x")
    lines.wave(0, 1, [("Job", "a")])
    lines.changed({("Job", "a"): Readiness("InProgress", "0/1 succeeded, 1 active")})
    lines.ended({("Job", "a"): Readiness("Current", "1/1 succeeded")})
    assert worded == []


def test_for_run_speaks_only_when_the_task_opened_a_channel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert not progress_lines.for_run("svc install").on
    monkeypatch.setenv(ENV, "/nonexistent/lcm-progress/s")
    lines = progress_lines.for_run("svc install")
    assert lines.on
    lines.begin("Phase x")  # nobody listens there: the channel turns itself off, nothing fails
    assert not progress_lines.emitter().active


def test_seconds_round_up_and_never_go_below_zero() -> None:
    assert [progress_lines.seconds(v) for v in (0.2, 1.0, 599.01, -3)] == ["1 s", "1 s", "600 s", "0 s"]
