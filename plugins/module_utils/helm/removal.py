# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`helm uninstall` that always ends, and what it leaves behind.

Helm marks a release `uninstalling` before it runs the pre-delete hooks; a
hook that never finishes (openstack-helm's credential-cleanup Job retrying
against a database that is gone) holds the uninstall until its timeout and
leaves the release `uninstalling` for good. Here the uninstall has a timeout,
and an uninstall that stopped in its hooks (or found the release
`uninstalling` from an earlier run) is retried with `--no-hooks`; the hook
Jobs it abandoned are deleted, and the result says so.

Kept objects (helm/keep.py) are listed; with `purge` they are deleted.
"""

from __future__ import annotations

from typing import Any, Dict, List

from ansible_collections.lcm.openstack.plugins.module_utils.helm import keep as release_keep
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import parse_manifest

UNINSTALLING = "uninstalling"
# Seconds the helm process may run past its own --timeout before it is stopped.
MARGIN = 60


def uninstall(helm: Helm, name: str, namespace: str, timeout: int, keep_history: bool, wait: bool,
              purge: bool, dyn: Any, status: str) -> Dict[str, Any]:
    """Uninstall the release; returns commands, kept, purged, hooks_skipped and a message."""
    objects = _objects(helm, name, namespace)
    kept = release_keep.kept(objects)
    out: Dict[str, Any] = {"commands": [], "kept": [], "purged": [], "hooks_skipped": False, "msg": ""}
    base = ["uninstall", name, "--namespace", namespace, "--timeout", f"{timeout}s"]
    if keep_history:
        base.append("--keep-history")
    if wait:
        base += helm.flag("wait")
    why = ""
    if status == UNINSTALLING:
        why = "an earlier uninstall stopped in its hooks (the release was left uninstalling)"
    else:
        first = _attempt(helm, base, timeout, out)
        if first is not None:
            after = helm.history(name, namespace)
            if not after or after[-1].get("status") != UNINSTALLING:
                raise first
            why = f"helm uninstall stopped in its delete hooks ({' '.join(str(first).split())})"
    if why:
        retry = _attempt(helm, base + ["--no-hooks"], timeout, out)
        if retry is not None:
            raise HelmError(f"{why}; the retry with --no-hooks failed too: {retry}", **retry.details)
        abandoned = release_keep.delete(dyn, namespace, release_keep.delete_hooks(objects)) if dyn else []
        out["hooks_skipped"] = True
        out["msg"] = (f"{why}; uninstalled with --no-hooks"
                      + (f" and deleted the hooks it left: {', '.join(map(str, abandoned))}" if abandoned else ""))
    if purge and kept and dyn is not None:
        out["purged"] = [str(r) for r in release_keep.delete(dyn, namespace, kept)]
    else:
        out["kept"] = [str(r) for r in kept]
    return out


def _attempt(helm: Helm, args: List[str], timeout: int, out: Dict[str, Any]) -> Any:
    """Run one uninstall; the HelmError it ended with, or None."""
    try:
        result = helm.run(args, check=False, timeout=timeout + MARGIN)
    except HelmError as exc:  # the helm process itself outlived its timeout
        out["commands"].append(str(exc.details.get("command", "")))
        return exc
    out["commands"].append(" ".join(result.command))
    return helm.error(result) if result.rc != 0 else None


def _objects(helm: Helm, name: str, namespace: str) -> List[Dict[str, Any]]:
    """The release's objects and hooks, as its last revision recorded them."""
    text = helm.get_manifest(name, namespace) + "\n---\n" + helm.get_hooks(name, namespace)
    return [r.obj for r in parse_manifest(text)]
