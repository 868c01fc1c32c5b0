# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Helm upgrade or rollback whose connection to the apiserver broke, run again.

Helm retries none of its requests. A connection reset while it writes the
release record leaves the revision `pending-upgrade` after the objects were
already updated; one while it updates the objects leaves it `failed`. Either
way the operation says nothing about the release: reported as a failure, a
flow would roll a good upgrade back. So when Helm's own words say the
connection broke (cli.connection_lost), the revision it left is made one
Helm acts on again (a pending one recorded failed, as Helm itself records an
operation that fails: helm/storage.mark_failed) and the same command runs
again. It applies the same manifest, so the objects are not changed twice.

Only under the release's Lease (helm/lease.py): no other run works on the
release, so a pending revision is this run's own, and its Helm process has
exited.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.helm import storage
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Result, connection_lost

# Changing subcommands that are the same when run again on a failed revision.
REPEATABLE = frozenset({"upgrade", "rollback"})
ATTEMPTS = 3


def again(result: Result, history: Callable[[], List[Dict[str, Any]]], dyn: Any, release: str,
          namespace: str, redact: Callable[[str], str] = str, of: Optional[str] = storage.SECRET) -> Optional[str]:
    """Why `result` (a failed Helm run) may run again, or None when it may
    not: not a repeatable subcommand, not a broken connection, or a release
    left in a state that running again would not fix. `redact` masks what
    Helm printed before it is written anywhere; `of` is the kind Helm keeps
    the release in (storage.kind: None for a driver only Helm reaches, whose
    pending revision is then left as Helm left it)."""
    subcommand = result.command[1] if len(result.command) > 1 else ""
    if result.rc == 0 or subcommand not in REPEATABLE or dyn is None or not connection_lost(result.stderr):
        return None
    entries = history()
    last = entries[-1] if entries else {}
    status, revision = str(last.get("status") or ""), int(last.get("revision") or 0)
    reason = last_line(redact(result.stderr))
    if status in storage.PENDING:
        described = (f"{subcommand} interrupted: Helm lost its connection to the apiserver ({reason}); "
                     "run again by lcm.openstack")
        if not storage.mark_failed(dyn, namespace, release, revision, described, of):
            return None
        return f"revision {revision} was left {status} and is recorded failed"
    if status == "failed":
        return f"revision {revision} failed"
    return None


def last_line(text: str, limit: int = 200) -> str:
    line = (text or "").strip().splitlines()[-1:] or [""]
    out = line[0].removeprefix("Error: ")
    return out if len(out) <= limit else out[:limit - 3] + "..."
