# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jobs that failed, and Jobs that run longer than they are expected to.

A Job is expected to finish within Settings.job_expected_seconds, or within
the seconds its annotation lifecycle.openstack.org/expected-duration gives.
Jobs of a Phase of an earlier flow are history and not looked at.
"""

from __future__ import annotations

from typing import Any, List, Mapping

from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.base import (
    ERROR, UPDATE_SPEED, UPDATE_STALLED, WARNING, Insight, Settings, Snapshot, annotations, condition,
    first_time, name_of, new_insight,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import duration, parse_time, seconds
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.scope import Scope
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import GROUP

NAME = "jobs"
EXPECTED_DURATION = f"{GROUP}/expected-duration"


def produce(snapshot: Snapshot, settings: Settings) -> List[Insight]:
    scope = Scope(snapshot)
    out = []
    for svc, job in scope.in_service(snapshot.jobs):
        if not scope.of_current_phase(job):
            continue
        name = name_of(job)
        failed = condition(job, "Failed")
        if failed is not None and failed.get("status") == "True":
            said = ": ".join(str(p) for p in (failed.get("reason"), failed.get("message")) if p)
            out.append(new_insight(
                NAME, "failed", svc.name, svc.namespace, "Job", name,
                started_at=first_time(failed.get("lastTransitionTime"), (job.get("status") or {}).get("startTime"))
                or snapshot.now,
                level=ERROR, impact=UPDATE_STALLED, summary=f"Job {name} failed: {said or 'Failed'}",
                description=_counts(job), reference=f"kubectl logs job/{name} -n {svc.namespace}"))
            continue
        complete = condition(job, "Complete")
        started = parse_time((job.get("status") or {}).get("startTime"))
        if (complete is not None and complete.get("status") == "True") or started is None:
            continue
        expected = expected_seconds(job, settings)
        if seconds(snapshot.now - started) > expected:
            out.append(new_insight(
                NAME, "slow", svc.name, svc.namespace, "Job", name, started_at=started, level=WARNING,
                impact=UPDATE_SPEED, summary=f"Job {name} runs longer than the {duration(expected)} expected of it",
                description=f"{_counts(job)}. Expected within {expected}s ({EXPECTED_DURATION} "
                            "on the Job, or the default).",
                reference=f"kubectl describe job {name} -n {svc.namespace}"))
    return out


def expected_seconds(job: Mapping[str, Any], settings: Settings) -> int:
    """The Job's annotation when it is a positive number of seconds, else the default."""
    try:
        value = int(str(annotations(job).get(EXPECTED_DURATION, "")).strip())
    except ValueError:
        return settings.job_expected_seconds
    return value if value > 0 else settings.job_expected_seconds


def _counts(job: Mapping[str, Any]) -> str:
    status = job.get("status") or {}
    return (f"{status.get('active', 0)} active, {status.get('succeeded', 0)} succeeded, "
            f"{status.get('failed', 0)} failed pod(s)")
