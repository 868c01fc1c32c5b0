# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Insights: what is wrong in the cluster, as far as the services' updates go.

Each producer is one module of this package with a NAME and
``produce(snapshot, settings) -> List[Insight]``; PRODUCERS lists them, and
``produce_all`` runs them all. Adding one is a file and a line here (see
docs/update-status.md, "How to add an insight producer").
"""

from __future__ import annotations

from typing import Any, Dict, List

from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import (
    backups, deployments, drift, endpoints, jobs, phases, pods, releases,
)
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.base import (
    API_AVAILABILITY, CRITICAL, DATA_LOSS_RISK, ERROR, IMPACTS, INFO, LEVELS, SERVICE_OUTAGE, UNKNOWN,
    UPDATE_SPEED, UPDATE_STALLED, WARNING, DOCS, Insight, Settings, Snapshot, insight_uid,
)

PRODUCERS: List[Any] = [pods, deployments, jobs, phases, releases, endpoints, backups, drift]

__all__ = ["API_AVAILABILITY", "CRITICAL", "DATA_LOSS_RISK", "ERROR", "IMPACTS", "INFO", "LEVELS",
           "SERVICE_OUTAGE", "UNKNOWN", "UPDATE_SPEED", "UPDATE_STALLED", "WARNING", "Insight", "PRODUCERS",
           "Settings", "Snapshot", "insight_uid", "produce_all", "sort_key"]


def produce_all(snapshot: Snapshot, settings: Settings) -> List[Insight]:
    """Every producer's insights, one per uid, most severe first. A producer
    that raises becomes an insight of its own instead of hiding the others."""
    found: Dict[str, Insight] = {}
    for producer in PRODUCERS:
        try:
            produced = producer.produce(snapshot, settings)
        except Exception as exc:  # one odd object must not hide what the other producers found
            produced = [_broken(producer.NAME, exc, snapshot)]
        for insight in produced:
            found.setdefault(insight.uid, insight)
    return sorted(found.values(), key=sort_key)


def sort_key(insight: Insight) -> tuple:
    """Most severe first, then the oldest, then by uid."""
    return (-LEVELS.index(insight.level), insight.started_at, insight.uid)


def _broken(name: str, exc: Exception, snapshot: Snapshot) -> Insight:
    return Insight(uid=insight_uid("producers", "", "Producer", name, "error"), started_at=snapshot.now,
                   service="", namespace="", resources=[], level=WARNING, type=UNKNOWN,
                   summary=f"The {name} insight producer failed: {type(exc).__name__}: {exc}",
                   description="Its insights are missing from this status; the others are complete.",
                   reference=f"{DOCS}#insight-producers")
