# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift of the releases at rest, for the drift insight (insights/drift.py).

Given to the keeper by the update_status module (never by the phase
engine's refresh, which stays cheap): for the services at rest in the
namespaces read, the deployed revisions' records, one list for those
namespaces and the kind Helm keeps them in (drift/records.py; the kind is
that of the release's records the keeper listed), then their objects, one
list a kind, and an apiserver dry run for each object that differs locally
(drift/live.py). Every drift is read: the ServiceLifecycle records no drift
policy, and no `drift_ignore`.

A failure leaves drift unread with a warning, and the refresh goes on; so
does a release with a kind that may not be listed. An unread release keeps
the drift insights it had.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import ObjectDrift
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights import Snapshot, drift
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.insights.scope import Scope

Key = Tuple[str, str]  # (namespace, release)


def read(dyn: Any, snapshot: Snapshot) -> Tuple[Optional[Dict[Key, List[ObjectDrift]]], List[str]]:
    """(namespace, release) -> its drifted objects, for each release at rest
    compared (one with no deployed revision: none), and the warnings; None
    when drift could not be read at all."""
    # Imported when read: the module starts loading no more than kubernetes.core.k8s (test_payloads).
    from ansible_collections.lcm.openstack.plugins.module_utils.drift import live, records

    scope = Scope(snapshot)
    at_rest = [svc for svc in scope.services if drift.at_rest(svc) and svc.namespace not in snapshot.unread]
    wanted = {(svc.namespace, svc.release) for svc in at_rest}
    stored: Dict[str, Set[str]] = {}  # the kind Helm keeps the records in (Secret, ConfigMap) -> namespaces
    for svc in at_rest:
        for record in scope.releases_of(svc)[-1:]:
            stored.setdefault(str(record.get("kind") or "Secret"), set()).add(svc.namespace)
    try:
        deployed: Dict[Key, Dict[str, Any]] = {}
        for of, namespaces in sorted(stored.items()):
            deployed.update(records.deployed(dyn, namespaces, of))
        compared = {key: live.Release(key[0], rec["manifest"]) for key, rec in deployed.items() if key in wanted}
        found, skipped = live.drifted(dyn, compared) if compared else ({}, {})
    except Exception as exc:  # drift comes on top of the status: reading it must not lose the rest
        return None, [f"drift was not read, its insights stay as they were: {exc}"]
    warnings = [f"the drift of release {release} in {namespace} was not read ({why}): its insights stay as they were"
                for (namespace, release), why in sorted(skipped.items())]
    return {key: found.get(key, []) for key in sorted(wanted) if key not in skipped}, warnings
