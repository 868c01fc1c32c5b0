# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which Deployments of a release would have no ready pod for a moment while
they roll: what a rolling update (no drain) says before it starts.

A Deployment rolls by its own strategy: ``Recreate`` stops every old pod
first; ``RollingUpdate`` may take ``maxUnavailable`` pods away at once
(openstack-helm's default is 1, with one API replica), so its Service
can be left without an endpoint until a new pod is Ready. Nothing is
changed here: the warning names the values that roll it without a gap.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, List, Mapping

VALUES_HINT = ("pod.lifecycle.upgrades.deployments.rolling_update.max_unavailable: 0 (or more replicas than it, "
               "pod.replicas)")


def _count(value: Any, replicas: int) -> int:
    """maxUnavailable as pods: an integer, or a percentage of the replicas (rounded down, as the controller does)."""
    text = str(value).strip()
    if text.endswith("%"):
        return math.floor(replicas * float(text[:-1]) / 100)
    return int(text)


def gaps(objects: Iterable[Mapping[str, Any]]) -> List[str]:
    """One warning per Deployment that can reach zero ready pods while it rolls."""
    out = []
    for obj in objects:
        if obj.get("kind") != "Deployment":
            continue
        name = (obj.get("metadata") or {}).get("name", "")
        spec = obj.get("spec") or {}
        replicas = int(spec.get("replicas", 1) or 0)
        if replicas < 1:
            continue
        strategy = spec.get("strategy") or {}
        if strategy.get("type") == "Recreate":
            out.append(f"Deployment {name} rolls by Recreate: every old pod goes before a new one is Ready, so its "
                       "Service has no endpoint for a while during this rolling update")
            continue
        unavailable = _count((strategy.get("rollingUpdate") or {}).get("maxUnavailable", "25%"), replicas)
        if unavailable >= replicas:
            out.append(f"Deployment {name} has {replicas} replica(s) and may take {unavailable} away at once: its "
                       f"Service can be left without a ready endpoint while it rolls; set {VALUES_HINT}")
    return out
