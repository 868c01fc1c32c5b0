# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a wait knows: the latest object and readiness of each target, and the
pods of its Jobs, as the watches report them (kube/waiter.py).

Apart from the watches so that it is tested without threads or a cluster:
given what a list or a watch event said, it decides whether anything changed,
and a Job's pods can fail it before the Job says so (kube/failures.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.kube.failures import FailurePolicy, JOB_NAME_LABEL, judge, pods_of_job, unschedulable
from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import FAILED, Readiness, assess

Key = Tuple[str, str]  # (kind, name)


@dataclass(frozen=True)
class Target:
    api_version: str
    kind: str
    name: str
    labelled: bool = True  # carries the phase label (else: watched by name)

    @property
    def key(self) -> Key:
        return (self.kind, self.name)


@dataclass
class WaitResult:
    states: Dict[Key, Readiness]
    objects: Dict[Key, Dict[str, Any]]
    timed_out: bool = False
    failed: List[Key] = field(default_factory=list)
    # The pods behind each Job, as last seen: what a failure message quotes.
    pods: Dict[Key, List[Dict[str, Any]]] = field(default_factory=dict)
    # Transient breaks of the watches, each followed by a new list: "Job: <why>".
    breaks: List[str] = field(default_factory=list)

    @property
    def pending(self) -> List[Key]:
        return [k for k, r in self.states.items() if not r.terminal]


class Tracker:
    """The latest object and readiness of each target, and the pods of its Jobs."""

    def __init__(self, targets: Sequence[Target], policy: FailurePolicy = FailurePolicy(),
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.wanted = {t.key: t for t in targets}
        self.policy, self.clock = policy, clock
        self.objects: Dict[Key, Dict[str, Any]] = {}
        self.states: Dict[Key, Readiness] = {k: assess(None) for k in self.wanted}
        # Kept as the states change, so that a wait decides without looking at
        # every target at every event (a phase of N Jobs hears O(N) events).
        self.open = sum(1 for r in self.states.values() if not r.terminal)
        self.failures = sum(1 for r in self.states.values() if r.state == FAILED)
        # The states that changed since changes() was last called; at first, all.
        self._changed: Dict[Key, Readiness] = dict(self.states)
        self.pods: Dict[str, Dict[str, Dict[str, Any]]] = {}  # job name -> pod name -> pod
        # target -> pod name -> when this wait first saw the pod unschedulable;
        # only targets that have such a pod, so next_check() looks at those alone.
        self.unscheduled: Dict[Key, Dict[str, float]] = {}
        self.breaks: List[str] = []  # the watches' transient breaks, each resumed

    def seen(self, w: Any, items: List[Dict[str, Any]], gone: bool = False,
             full_list: bool = False) -> bool:
        if getattr(w, "job_pods", False):
            return self._pods_seen(items, gone, full_list)
        changed = False
        present = set()
        for obj in items:
            key = (w.res.kind, obj["metadata"]["name"])
            present.add(key)
            if key in self.wanted:
                obj.setdefault("kind", w.res.kind)
                obj.setdefault("apiVersion", w.res.group_version)
                changed |= self._set(key, None if gone else obj)
        if full_list:  # what a (re-)list does not return is gone
            for key in w.covers - present:
                changed |= self._set(key, None)
        return changed

    def _pods_seen(self, items: List[Dict[str, Any]], gone: bool, full_list: bool) -> bool:
        touched = set(self.pods) if full_list else set()
        if full_list:
            self.pods = {}
        for pod in items:
            job = ((pod.get("metadata") or {}).get("labels") or {}).get(JOB_NAME_LABEL)
            if not job:
                continue
            touched.add(job)
            bucket = self.pods.setdefault(job, {})
            if gone:
                bucket.pop(pod["metadata"]["name"], None)
            else:
                bucket[pod["metadata"]["name"]] = pod
        changed = False
        for job in sorted(touched):
            if ("Job", job) in self.wanted:
                changed |= self._reassess(("Job", job))
        return changed

    def _set(self, key: Key, obj: Optional[Dict[str, Any]]) -> bool:
        if obj is None:
            self.objects.pop(key, None)
        else:
            self.objects[key] = obj
        return self._reassess(key)

    def pods_of(self, key: Key) -> List[Dict[str, Any]]:
        """The pods a target runs: a Job's own pods, or a bare Pod itself."""
        obj = self.objects.get(key)
        if obj is None:
            return []
        if key[0] == "Pod":
            return [obj]
        if key[0] == "Job":
            return pods_of_job(obj, self.pods.get(key[1], {}).values())
        return []

    def _reassess(self, key: Key) -> bool:
        obj, pods = self.objects.get(key), self.pods_of(key)
        now = self.clock()
        before = self.unscheduled.get(key, {})
        since = {p["metadata"]["name"]: before.get(p["metadata"]["name"], now)
                 for p in pods if unschedulable(p) is not None}
        if since:
            self.unscheduled[key] = since
        else:
            self.unscheduled.pop(key, None)
        new = judge(assess(obj), obj if key[0] == "Job" else None, pods, self.policy,
                    lambda p: now - since.get(p["metadata"]["name"], now))
        old = self.states[key]
        if old == new:
            return False
        self.states[key] = self._changed[key] = new
        self.open += (not new.terminal) - (not old.terminal)
        self.failures += (new.state == FAILED) - (old.state == FAILED)
        return True

    def decided(self, fail_fast: bool) -> bool:
        """Every target is Current or Failed, or (fail_fast) one is Failed."""
        return self.open == 0 or (fail_fast and self.failures > 0)

    def changes(self) -> Dict[Key, Readiness]:
        """The states that changed since the last call (the first call: all of
        them), so a listener keeps up with O(changes) work, not O(targets)."""
        changed, self._changed = self._changed, {}
        return changed

    def next_check(self) -> Optional[float]:
        """When (on the clock) the grace of an unschedulable pod ends, if any does."""
        ends = [t + self.policy.unschedulable_grace for key, pods in self.unscheduled.items()
                if not self.states[key].terminal for t in pods.values()]
        return min(ends) if ends else None

    def tick(self) -> bool:
        """Look again at the targets with unschedulable pods: their grace may be over."""
        changed = False
        for key in list(self.unscheduled):
            changed |= self._reassess(key)
        return changed

    def result(self, timed_out: bool = False) -> WaitResult:
        failed = [k for k, r in self.states.items() if r.state == FAILED]
        pods = {k: self.pods_of(k) for k in self.wanted if k[0] == "Job"}
        return WaitResult(dict(self.states), dict(self.objects), timed_out, failed, pods, list(self.breaks))
