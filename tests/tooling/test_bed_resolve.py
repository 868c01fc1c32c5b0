"""Which cluster the tests use, and when the bed is started or stopped."""

from __future__ import annotations

from typing import List

import pytest

from support import bed


class Scripts:
    """Records the bed scripts run, and answers with the given exit codes."""

    def __init__(self, **codes: int) -> None:
        self.codes = codes
        self.calls: List[str] = []

    def __call__(self, script: str) -> int:
        self.calls.append(script)
        return self.codes.get(script, 0)


def test_kubeconfig_from_the_environment_is_used_as_is() -> None:
    run = Scripts()
    c = bed.resolve({"KUBECONFIG": "/etc/prod.kubeconfig"}, run, state_dir="/s")
    assert c == bed.Cluster("/etc/prod.kubeconfig", is_bed=False, started_here=False)
    assert run.calls == []


def test_kubeconfig_of_the_bed_in_the_environment_counts_as_the_bed() -> None:
    c = bed.resolve({"KUBECONFIG": "/s/kubeconfig"}, Scripts(), state_dir="/s")
    assert c.is_bed and not c.started_here


def test_a_running_bed_is_reused_and_not_stopped() -> None:
    run = Scripts(status=0)
    c = bed.resolve({}, run, state_dir="/s")
    assert c == bed.Cluster("/s/kubeconfig", is_bed=True, started_here=False)
    bed.release(c, {}, run)
    assert run.calls == ["status"]


def test_a_stopped_bed_is_started_and_stopped_afterwards() -> None:
    run = Scripts(status=1, up=0)
    c = bed.resolve({}, run, state_dir="/s")
    assert c.started_here
    bed.release(c, {}, run)
    assert run.calls == ["status", "up", "down"]


def test_bed_keep_leaves_a_started_bed_running() -> None:
    run = Scripts(status=1)
    c = bed.resolve({}, run, state_dir="/s")
    bed.release(c, {"BED_KEEP": "1"}, run)
    assert run.calls == ["status", "up"]


def test_a_failed_start_says_how_to_use_another_cluster() -> None:
    with pytest.raises(RuntimeError, match="KUBECONFIG"):
        bed.resolve({}, Scripts(status=1, up=2), state_dir="/s")
