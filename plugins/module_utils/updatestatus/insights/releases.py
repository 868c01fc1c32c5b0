# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helm releases whose latest revision is pending-install, pending-upgrade or
pending-rollback for longer than Settings.release_pending_minutes: an
operation that did not finish, and that blocks every later one. Read from the
labels of Helm's release records (never their data): Secrets, or ConfigMaps
with HELM_DRIVER=configmap. The revision's age is that of its modifiedAt
label, else of the record.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.base import (
    CRITICAL, DOCS, UPDATE_STALLED, Insight, Settings, Snapshot, first_time, labels, name_of, new_insight,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import epoch, seconds
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.scope import Scope, revision

NAME = "releases"


def produce(snapshot: Snapshot, settings: Settings) -> List[Insight]:
    scope = Scope(snapshot)
    out = []
    for svc in scope.services:
        secrets = scope.releases_of(svc)
        if not secrets:
            continue
        latest = secrets[-1]
        state = str(labels(latest).get("status") or "")
        if not state.startswith("pending-"):
            continue
        since = epoch(labels(latest).get("modifiedAt")) \
            or first_time((latest.get("metadata") or {}).get("creationTimestamp")) or snapshot.now
        if seconds(snapshot.now - since) <= settings.release_pending_minutes * 60:
            continue  # Helm may still be at work
        rev = revision(latest)
        back = _last_deployed(secrets[:-1])
        if back is not None:
            fix = (f"Once no other Helm operation runs on it, clear it with "
                   f"`helm rollback {svc.release} {back} -n {svc.namespace}`, then run the flow again.")
        else:
            fix = (f"No earlier revision was deployed: once no other Helm operation runs on it, remove it with "
                   f"`helm uninstall {svc.release} -n {svc.namespace}`, then run the flow again.")
        out.append(new_insight(
            NAME, "pending", svc.name, svc.namespace, str(latest.get("kind") or "Secret"), name_of(latest),
            started_at=since,
            level=CRITICAL, impact=UPDATE_STALLED,
            summary=f"Helm release {svc.release} is {state} at revision {rev}",
            description=f"An earlier Helm operation did not finish, or is still running; Helm refuses any other "
                        f"until it is cleared. {fix}",
            reference=f"{DOCS}#releases"))
    return out


def _last_deployed(earlier: List[Mapping[str, Any]]) -> Optional[int]:
    """The newest earlier revision that was deployed (now deployed or superseded)."""
    for state in ("deployed", "superseded"):
        found = [revision(s) for s in earlier if labels(s).get("status") == state]
        if found:
            return max(found)
    return None
