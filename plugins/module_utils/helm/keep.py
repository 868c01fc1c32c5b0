# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a Helm release leaves behind, and how the next install of it copes.

Helm never deletes an object annotated `helm.sh/resource-policy: keep`.
openstack-helm marks its key Secrets so (keystone's fernet and credential
keys): they are pre-install hooks, and the data they hold is what the
service's database was written with. After an uninstall they stay, and the
next install of the same release fails, because Helm creates hooks and never
adopts them (the `meta.helm.sh/release-name` adoption is for ordinary
objects only).

The rule here: without a purge the kept objects are the service's data and
are adopted by the next install (it runs without hooks when every install
hook it would run is such a kept object); with a purge (the operator drops
the database) they are deleted with the release.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Sequence, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common import compat
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import HelmError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import answered

KEEP_ANNOTATION = "helm.sh/resource-policy"
HOOK_ANNOTATION = "helm.sh/hook"
INSTALL_EVENTS = {"pre-install", "post-install"}
DELETE_EVENTS = {"pre-delete", "post-delete"}


@dataclass(frozen=True)
class Ref:
    api_version: str
    kind: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind}/{self.name}"


def ref(obj: Dict[str, Any]) -> Ref:
    return Ref(str(obj.get("apiVersion", "")), str(obj.get("kind", "")),
               str((obj.get("metadata") or {}).get("name", "")))


def _annotations(obj: Dict[str, Any]) -> Dict[str, Any]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def is_kept(obj: Dict[str, Any]) -> bool:
    return str(_annotations(obj).get(KEEP_ANNOTATION, "")).strip() == "keep"


def hook_events(obj: Dict[str, Any]) -> Set[str]:
    return {e.strip() for e in str(_annotations(obj).get(HOOK_ANNOTATION, "")).split(",") if e.strip()}


def kept(objects: Iterable[Dict[str, Any]]) -> List[Ref]:
    """The objects Helm leaves behind on uninstall, in manifest order."""
    out: List[Ref] = []
    for obj in objects:
        if is_kept(obj) and ref(obj) not in out:
            out.append(ref(obj))
    return out


def delete_hooks(objects: Iterable[Dict[str, Any]]) -> List[Ref]:
    """The pre-/post-delete hooks, which a `--no-hooks` uninstall leaves running."""
    return [ref(o) for o in objects if hook_events(o) & DELETE_EVENTS and not is_kept(o)]


def plan_install(objects: Sequence[Dict[str, Any]], existing: Set[Ref]) -> Tuple[bool, List[Ref]]:
    """Whether a first install runs without hooks, and the kept objects it adopts.

    `objects` is the chart's render with hooks, `existing` the objects of it
    that the namespace holds already. Helm would fail creating an install hook
    that exists; when every install hook is a kept object of an earlier
    release, installing without hooks adopts them. A kept hook that exists
    beside hooks that must still run cannot be adopted: that is an error that
    names both, before anything changes.
    """
    hooks = [o for o in objects if hook_events(o) & INSTALL_EVENTS]
    found = [ref(o) for o in hooks if is_kept(o) and ref(o) in existing]
    if not found:
        return False, []
    others = [ref(o) for o in hooks if ref(o) not in found]
    if others:
        raise HelmError(
            f"{', '.join(map(str, found))} exist already (kept by an earlier install of this release, "
            f"{KEEP_ANNOTATION}: keep), and Helm creates install hooks, never adopts them; the install "
            f"hooks {', '.join(map(str, others))} must still run, so installing without hooks is no way "
            "out. Nothing was changed. Delete the kept objects if their data is not wanted (removing the "
            "service with a purge does that), or switch the other hooks off in the values")
    return True, found


def existing(dyn: Any, namespace: str, refs: Iterable[Ref]) -> Set[Ref]:
    """Those of `refs` that exist in the namespace."""
    out: Set[Ref] = set()
    for r in refs:
        try:
            dyn.resources.get(api_version=r.api_version, kind=r.kind).get(name=r.name, namespace=namespace)
        except compat.NotFoundError:
            continue
        out.add(r)
    return out


def delete(dyn: Any, namespace: str, refs: Iterable[Ref]) -> List[Ref]:
    """Delete each object (its pods with it, in the background); return those that were there."""
    gone: List[Ref] = []
    for r in refs:
        with answered() as refused:
            dyn.resources.get(api_version=r.api_version, kind=r.kind).delete(
                name=r.name, namespace=namespace, body={"propagationPolicy": "Background"})
        if isinstance(refused.error, compat.NotFoundError):
            continue
        if refused:
            raise HelmError(f"cannot delete {r} in {namespace}: {getattr(refused.error, 'reason', refused.error)}") \
                from refused.error
        gone.append(r)
    return gone
