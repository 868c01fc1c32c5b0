# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lines a wait says while it runs, worded from what it already knows.

A wait (kube/waiter.py) hands its listener the states that changed at each
watch event; WaitLines turns each change into at most one line, so progress
costs no request of its own. By default a line says what an operator waits
for: a wave starting and ending, a Job, Pod or workload changing state or
message (pods starting, a run failing and why), with the time left. The
configuration objects of a wave (Secrets, ConfigMaps, ...) are told one by one
only at DETAIL (-v); the wave's end counts them. Every line goes through the
run's redactor: a failing pod's message can quote a password.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import CURRENT, NOT_FOUND, Readiness
from ansible_collections.lcm.openstack.plugins.module_utils.progress.emitter import DETAIL, SUMMARY, emitter

Key = Tuple[str, str]
Say = Callable[[str, int], None]
# What runs, and so is worth a line at the default level; the rest at DETAIL.
RUNNING_KINDS = frozenset(("Job", "Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "CronJob"))
# How many names a wave's first line lists before "and N more".
NAMED = 4


def names(keys: Sequence[Key], limit: int = NAMED) -> str:
    shown = ", ".join(f"{k} {n}" for k, n in keys[:limit])
    return shown + (f" and {len(keys) - limit} more" if len(keys) > limit else "")


def seconds(value: float) -> str:
    return f"{max(0, int(math.ceil(value)))} s"


class WaitLines:
    """The lines of one run's waits: `subject` starts each (`keystone install`)."""

    def __init__(self, subject: str, say: Optional[Say], redact: Callable[[str], str] = str,
                 deadline: Optional[float] = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.subject, self._say, self.redact = subject, say, redact
        self.deadline, self.clock = deadline, clock
        self.where = ""  # "wave 2/3" while a phase's wave runs
        self.told: Dict[Key, Tuple[str, str]] = {}  # the state and message last said per object
        self.started = clock()

    @property
    def on(self) -> bool:
        return self._say is not None

    def say(self, text: str, level: int = SUMMARY) -> None:
        if self._say is None:
            return
        prefix = f"{self.subject} {self.where}:" if self.where else f"{self.subject}:"
        self._say(self.redact(f"{prefix} {text}"), level)

    def left(self) -> str:
        return f", {seconds(self.deadline - self.clock())} left" if self.deadline is not None else ""

    def took(self) -> str:
        return f"{max(0, int(round(self.clock() - self.started)))} s"

    def begin(self, text: str) -> None:
        """The run starts (what it is, its timeout)."""
        self.say(text)

    def wave(self, index: int, total: int, keys: Sequence[Key]) -> None:
        """A wave is applied and its wait starts."""
        self.where = f"wave {index + 1}/{total}"
        self.started = self.clock()
        self.say(f"started: {names(list(keys))}" if keys else "started")

    def changed(self, states: Mapping[Key, Readiness]) -> None:
        """The states that changed at a watch event (the waiter's on_change)."""
        if self._say is None:
            return
        for key in sorted(states, key=_order):
            self._one(key, states[key])

    def _one(self, key: Key, readiness: Readiness) -> None:
        said = (readiness.state, readiness.message)
        before = self.told.get(key)
        if said == before or (before is None and readiness.state == NOT_FOUND):
            return  # not yet seen by its watch's first list: no news
        self.told[key] = said
        level = SUMMARY if key[0] in RUNNING_KINDS else DETAIL
        text = f"{key[0]} {key[1]} {readiness.state}"
        if readiness.message and readiness.message != readiness.state:
            text += f": {readiness.message}"
        self.say(text + ("" if readiness.terminal else self.left()), level)

    def ended(self, states: Mapping[Key, Readiness], timed_out: bool = False) -> None:
        """The wave's wait returned: all Current, one Failed, or the time is up."""
        current = sum(1 for r in states.values() if r.state == CURRENT)
        took = self.took()
        if timed_out:
            self.say(f"timed out, {current}/{len(states)} object(s) Current after {took}")
        elif current == len(states):
            self.say(f"done: {current} object(s) Current in {took}")
        # a failure: its object's own line said it, and the task's result says why


def _order(key: Key) -> Any:
    return (key[0] not in RUNNING_KINDS, key)


def for_run(subject: str, redact: Callable[[str], str] = str, deadline: Optional[float] = None) -> WaitLines:
    """The lines of a run, sent to the task's channel; silent when there is none."""
    channel = emitter()
    return WaitLines(subject, channel.say if channel.active else None, redact, deadline)
