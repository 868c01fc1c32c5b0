# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading a Helm release's history (`helm history -o json`, oldest first):
its current revision as the modules return it, which revision a rollback
goes back to, and whether an earlier operation left it pending."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

History = List[Dict[str, Any]]
DEPLOYED = ("deployed", "superseded")


def summary(name: str, namespace: str, history: History) -> Dict[str, Any]:
    """The release's current revision, as the modules return it."""
    if not history:
        return {}
    last = history[-1]
    return {"name": name, "namespace": namespace, "revision": last.get("revision"),
            "chart": last.get("chart"), "app_version": last.get("app_version"),
            "status": last.get("status"), "updated": last.get("updated"),
            "description": last.get("description", "")}


def history_entries(history: History) -> List[Dict[str, Any]]:
    return [{k: h.get(k) for k in ("revision", "status", "chart", "app_version", "description", "updated")}
            for h in history]


def previous_deployed(history: History) -> Optional[int]:
    """The revision the service ran before the current one: the latest earlier
    deployed revision that a rollback did not abandon, and that the current
    revision is not itself a rollback to. After 1 -> 2 -> 3, with 3 rolled
    back to 2 (revision 4), this is 1, not the abandoned 3. None when there
    is none."""
    current = history[-1]
    abandoned, same = set(), {current["revision"], rollback_source(current)}
    for h in history:
        source = rollback_source(h)
        if source:
            abandoned.update(r["revision"] for r in history if source < r["revision"] < h["revision"])
    for h in reversed(history[:-1]):
        if h.get("status") in DEPLOYED and h["revision"] not in same and h["revision"] not in abandoned:
            return int(h["revision"])
    return None


def rollback_source(entry: Dict[str, Any]) -> Optional[int]:
    """The revision a `helm rollback` revision returned to, from its description."""
    text = str(entry.get("description") or "")
    if text.startswith("Rollback to "):
        try:
            return int(text[len("Rollback to "):].split()[0])
        except (ValueError, IndexError):
            return None
    return None


def stuck(name: str, namespace: str, history: History) -> str:
    """For a release an earlier operation left pending-*: what it is and the
    command that clears it ('' when it is not pending)."""
    if not history or not str(history[-1].get("status", "")).startswith("pending-"):
        return ""
    last = history[-1]
    deployed = [h["revision"] for h in history if h.get("status") in DEPLOYED]
    fix = (f"`helm rollback {name} {deployed[-1]} -n {namespace}`" if deployed
           else f"`helm uninstall {name} -n {namespace}`")
    return (f"release {name} is {last['status']} at revision {last['revision']}: an earlier "
            f"operation did not finish (or is still running). Nothing was changed. Once no other "
            f"operation runs on it, clear it with {fix}, then run again")
