# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a release's objects in the cluster are what its manifest sets.

The manifest is the deployed revision's, as Helm stored it. The live
objects are read with one list a kind for every release asked about at once
(kube/across.py: cluster-wide, keeping the namespaces wanted; namespace by
namespace where that is denied), never a GET an object. Each object is
compared locally for the fields its manifest sets (drift/fields.py); an
object that differs there is then applied to the apiserver as a dry run
(server-side apply, `dryRun=All`, under a field manager of its own that
takes every field the manifest sets) and the object it would become is
compared with the one there: the apiserver decides, with its defaults, units
and list merge keys, so `cpu: 0.1` against `100m` is not drift and a
replica count edited by hand is. Nothing is written.

Helm's own records (Secrets and ConfigMaps labelled owner=helm) are never
listed here: they hold every revision's values and manifest.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common import compat
from ansible_collections.lcm.openstack.plugins.module_utils.drift import fields
from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import ObjectDrift
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import parse_manifest
from ansible_collections.lcm.openstack.plugins.module_utils.kube.across import across
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import answered, api_reason, is_authorization_denial
from ansible_collections.lcm.openstack.plugins.module_utils.kube.objects import server_side_apply
from ansible_collections.lcm.openstack.plugins.module_utils.kube.paging import read

# The field manager of the dry runs: never the owner of anything, nothing is written.
DRY_RUN_MANAGER = "lcm-openstack-drift"
# Requests in flight at once: the lists, then the dry runs.
WORKERS = 8
_RECORD_KINDS = ("Secret", "ConfigMap")

Key = Tuple[str, str]  # (namespace, release)
Kind = Tuple[str, str]  # (apiVersion, kind)


class Release:
    """One release to compare: its namespace, its manifest, the fields it ignores."""

    def __init__(self, namespace: str, manifest: str, rules: Sequence[fields.Rule] = ()) -> None:
        self.namespace, self.rules = namespace, list(rules)
        self.objects = [r.obj for r in parse_manifest(manifest)
                        if r.obj.get("kind") and (r.obj.get("metadata") or {}).get("name")]


def drifted(dyn: Any, releases: Mapping[Key, Release]) -> Tuple[Dict[Key, List[ObjectDrift]], Dict[Key, str]]:
    """Each release's objects that drifted, and why a release could not be
    compared (a kind it may not list in its namespace)."""
    resources, namespaced = _resources(dyn, releases)
    unread: Dict[Kind, Set[str]] = {}
    live = _listed(dyn, resources, namespaced, releases, unread)
    candidates: List[Tuple[Key, Dict[str, Any], Optional[Dict[str, Any]], List[str]]] = []
    out: Dict[Key, List[ObjectDrift]] = {key: [] for key in releases}
    skipped: Dict[Key, str] = {}
    for key, rel in releases.items():
        for obj in rel.objects:
            kind = (str(obj.get("apiVersion")), str(obj["kind"]))
            if kind not in resources:
                continue
            ns = (obj["metadata"].get("namespace") or rel.namespace) if namespaced[kind] else ""
            if ns in unread.get(kind, set()):
                skipped[key] = f"{kind[1]} may not be listed " + (f"in namespace {ns}" if ns else "cluster-wide")
                continue
            found = live.get((kind, ns, obj["metadata"]["name"]))
            differs = ["(missing)"] if found is None else fields.set_by(obj, found)
            differs = [p for p in differs if not fields.ignored(kind[1], obj["metadata"]["name"], p, rel.rules)]
            if differs:
                candidates.append((key, obj, found, differs))
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        confirmed = list(pool.map(
            lambda c: _confirm(resources[(str(c[1].get("apiVersion")), c[1]["kind"])], c[1], c[2], c[3], releases[c[0]]),
            candidates))
    for (key, _obj, _found, _differs), drift in zip(candidates, confirmed):
        if drift is not None:
            out[key].append(drift)
    return out, skipped


def _resources(dyn: Any, releases: Mapping[Key, Release]) -> Tuple[Dict[Kind, Any], Dict[Kind, bool]]:
    """The API resource of each kind the manifests hold (a kind the cluster no
    longer serves is left out: its objects cannot be there either)."""
    resources: Dict[Kind, Any] = {}
    for rel in releases.values():
        for obj in rel.objects:
            kind = (str(obj.get("apiVersion")), str(obj["kind"]))
            if kind in resources:
                continue
            with answered(lambda exc: True, caught=compat.ResourceNotFoundError) as unknown:
                resources[kind] = dyn.resources.get(api_version=kind[0], kind=kind[1])
            if unknown:
                resources.pop(kind, None)
    return resources, {k: bool(getattr(r, "namespaced", True)) for k, r in resources.items()}


def _listed(dyn: Any, resources: Mapping[Kind, Any], namespaced: Mapping[Kind, bool],
            releases: Mapping[Key, Release], unread: Dict[Kind, Set[str]]) -> Dict[Tuple[Kind, str, str], Dict[str, Any]]:
    del dyn  # the resources carry their client
    wanted: Dict[Kind, Set[str]] = {}
    for rel in releases.values():
        for obj in rel.objects:
            kind = (str(obj.get("apiVersion")), str(obj["kind"]))
            if kind in resources:
                wanted.setdefault(kind, set()).add(obj["metadata"].get("namespace") or rel.namespace)

    def one(kind: Kind) -> List[Dict[str, Any]]:
        unread[kind] = set()
        selector = "owner!=helm" if kind[1] in _RECORD_KINDS else None
        if namespaced[kind]:
            return across(resources[kind], sorted(wanted[kind]), selector, lambda item: item, unread[kind])
        # A cluster-scoped kind (nova's ClusterRoles) an account bound in its namespaces may not list.
        with answered(is_authorization_denial):
            return read(resources[kind], None, selector, lambda item: item)
        unread[kind].add("")
        return []

    kinds = sorted(wanted)
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        lists = list(pool.map(one, kinds))
    return {(kind, (i.get("metadata") or {}).get("namespace") or "", i["metadata"]["name"]): i
            for kind, items in zip(kinds, lists) for i in items}


def _confirm(res: Any, obj: Dict[str, Any], found: Optional[Dict[str, Any]], differs: List[str],
             rel: Release) -> Optional[ObjectDrift]:
    """The object's drift as the apiserver sees it (None: none); a missing object is drift as it is."""
    meta = obj["metadata"]
    ns = (meta.get("namespace") or rel.namespace) if getattr(res, "namespaced", True) else ""
    if found is None:
        return ObjectDrift(obj["kind"], meta["name"], ns, missing=True)
    body = fields.desired_form(obj)
    body["metadata"] = dict(meta, **({"namespace": ns} if ns else {}))
    with answered() as refused:
        after = server_side_apply(res, body, ns or None, manager=DRY_RUN_MANAGER, dry_run=True)
    if refused:
        # The dry run was refused (no patch permission): the local comparison is the answer, and says so.
        note = f"(unconfirmed: the dry run was refused, {api_reason(refused.error)})"
        return ObjectDrift(obj["kind"], meta["name"], ns, fields=differs + [note])
    paths = [p for p in fields.between(found, after) if not fields.ignored(obj["kind"], meta["name"], p, rel.rules)]
    if not paths:
        return None
    return ObjectDrift(obj["kind"], meta["name"], ns, fields=paths, was={p: fields.at(found, p) for p in paths},
                       wanted={p: fields.at(after, p) for p in paths})
