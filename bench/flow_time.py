"""Where a flow's time goes, from the task events a callback stamps: each
task's span, the part of it that is deliberate work (the Jobs' intervals
inside it, Helm's own time in the install's helm_release task), the rest
overhead, and the tasks or modules with the most of it. Used by
bench/greenfield.py; pure arithmetic, tested in tests/tooling."""

from __future__ import annotations

import statistics
from typing import Any, Dict, List, Sequence, Tuple

Interval = Tuple[float, float]

# Stamps each task's start, result and module runs into $GREENFIELD_TASKS_FILE.
CALLBACK = r'''
import json
import os
import time

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "greenfield_tasks"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._out = open(os.environ["GREENFIELD_TASKS_FILE"], "a", encoding="utf-8")

    def _write(self, **event):
        event["t"] = time.time()
        self._out.write(json.dumps(event) + "\n")
        self._out.flush()

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._write(event="start", uuid=task._uuid, name=task.get_name(), action=task.action)

    v2_playbook_on_handler_task_start = v2_playbook_on_task_start

    def _result(self, result, status):
        task = getattr(result, "task", None) or result._task
        data = getattr(result, "result", None)
        data = data if isinstance(data, dict) else result._result
        items = data.get("results") if isinstance(data.get("results"), list) else [data]
        modules = sum(1 for i in items if isinstance(i, dict) and "invocation" in i)
        self._write(event="result", uuid=task._uuid, status=status, modules=modules)

    def v2_runner_on_ok(self, result):
        self._result(result, "changed" if result.is_changed() else "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._result(result, "failed")

    def v2_runner_on_skipped(self, result):
        self._result(result, "skipped")

    def v2_runner_on_unreachable(self, result):
        self._result(result, "unreachable")

    def v2_playbook_on_stats(self, stats):
        self._write(event="end")
'''


def merged(intervals: Sequence[Interval]) -> List[Interval]:
    """The union of closed intervals, as disjoint intervals in order."""
    out: List[Interval] = []
    for lo, hi in sorted(i for i in intervals if i[1] > i[0]):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def covered(union: Sequence[Interval], lo: float, hi: float) -> float:
    """How much of [lo, hi] the disjoint intervals cover."""
    return sum(max(0.0, min(b, hi) - max(a, lo)) for a, b in union)


def task_spans(events: Sequence[Dict[str, Any]], start: float, end: float, namespace: str) -> List[Dict[str, Any]]:
    """The callback's events as one entry per task, in order: its span runs from
    its start to the next task's start (the last to the playbook's end);
    before the first task and after the end come as entries of their own."""
    spans: List[Dict[str, Any]] = []
    by_uuid: Dict[str, Dict[str, Any]] = {}
    stop = end
    for e in events:
        if e["event"] == "start":
            if spans:
                spans[-1]["end"] = e["t"]
            task = {"name": e["name"].replace(namespace, "<namespace>"), "action": e["action"],
                    "start": e["t"], "end": e["t"], "status": "", "modules": 0}
            spans.append(task)
            by_uuid[e["uuid"]] = task
        elif e["event"] == "result" and e["uuid"] in by_uuid:
            task = by_uuid[e["uuid"]]
            task["modules"] += e["modules"]
            task["status"] = e["status"] if task["status"] in ("", "skipped", "ok") else task["status"]
        elif e["event"] == "end":
            stop = e["t"]
    if spans:
        spans[-1]["end"] = stop
    first = spans[0]["start"] if spans else stop
    head = {"name": "(start-up, before the first task)", "action": "", "start": start, "end": first,
            "status": "", "modules": 0}
    tail = {"name": "(after the last task, to the exit)", "action": "", "start": stop, "end": end,
            "status": "", "modules": 0}
    return [head] + spans + [tail]


def breakdown(spans: List[Dict[str, Any]], union: Sequence[Interval], helm: float) -> List[Dict[str, Any]]:
    """Each span with its deliberate part (jobs inside it; plain helm's time for the
    helm_release task that installed) and its overhead."""
    out = []
    for s in spans:
        length = max(0.0, s["end"] - s["start"])
        jobs = covered(union, s["start"], s["end"])
        own_helm = min(helm, length - jobs) if s["action"].endswith("helm_release") and s["status"] == "changed" else 0.0
        out.append(dict(s, span=length, deliberate=jobs + own_helm, overhead=length - jobs - own_helm))
    return out


def top(runs: List[Dict[str, Any]], key: str, n: int = 5) -> List[Tuple[str, str, float, float, float]]:
    """The n tasks (key=name) or actions (key=action) with the most overhead, each
    summed within a run, then the median over the runs: name, action, span, overhead, modules."""
    per_run: List[Dict[str, Dict[str, float]]] = []
    actions: Dict[str, str] = {}
    for r in runs:
        sums: Dict[str, Dict[str, float]] = {}
        for t in r["task_spans"]:
            label = t[key] or t["name"]
            actions.setdefault(label, t["action"])
            s = sums.setdefault(label, {"span": 0.0, "overhead": 0.0, "modules": 0.0})
            s["span"] += t["span"]
            s["overhead"] += t["overhead"]
            s["modules"] += t["modules"]
        per_run.append(sums)
    labels = {label for sums in per_run for label in sums}

    def med(label: str, field: str) -> float:
        return statistics.median(s[label][field] if label in s else 0.0 for s in per_run)
    ranked = sorted(labels, key=lambda label: -med(label, "overhead"))[:n]
    return [(label, actions[label], med(label, "span"), med(label, "overhead"), med(label, "modules"))
            for label in ranked]
