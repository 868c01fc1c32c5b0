# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a wave's objects are on the cluster now, read with one list per kind
that the wave holds many objects of, instead of one GET each.

Applying an object reads it first (phase/apply.py: is it shared, of an
earlier phase, unchanged?). A wave of 200 Jobs read them with 200 GETs, in
the dry run and again in the run, most of them answered 404: one list (in
pages) reads the same. Each object read so is handed out once, to the apply
that follows; any later read is a GET, so nothing is read stale twice. A
kind the account may not list, or a list that fails, is read by GETs as
before. Secrets are always read one by one: Helm keeps every revision of
every release in one, values and all, and listing them would cost more than
the GETs it saves.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Mapping, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import DynamicApiError, ResourceNotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.paging import read

# A list pays for itself from this many objects of a kind in a wave.
READ_AHEAD_AT = 10
NOT_LISTED = frozenset({"Secret"})

KindKey = Tuple[str, str]  # (apiVersion, kind)
Object = Dict[str, Any]


class ReadAhead:
    """Objects read by a list, until each is taken."""

    def __init__(self, dyn: Any, namespace: str) -> None:
        self.dyn, self.namespace = dyn, namespace
        # (apiVersion, kind) -> name -> the object as listed, or None: not there.
        self.held: Dict[KindKey, Dict[str, Optional[Object]]] = {}

    def read(self, objects: Iterable[Mapping[str, Any]]) -> None:
        """List each kind these objects hold READ_AHEAD_AT or more of."""
        names: Dict[KindKey, set] = {}
        for obj in objects:
            name = (obj.get("metadata") or {}).get("name")
            if name and obj.get("kind") not in NOT_LISTED:
                names.setdefault((str(obj.get("apiVersion")), str(obj.get("kind"))), set()).add(name)
        for kind, wanted in names.items():
            if len(wanted) >= READ_AHEAD_AT:
                found = self._listed(kind, wanted)
                if found is not None:
                    self.held[kind] = {name: found.get(name) for name in wanted}

    def take(self, api_version: str, kind: str, name: str) -> Tuple[bool, Optional[Object]]:
        """(True, the object or None when absent) once for an object read
        ahead; (False, None) when it is to be read by a GET."""
        held = self.held.get((api_version, kind))
        if held is None or name not in held:
            return False, None
        return True, held.pop(name)

    def _listed(self, kind: KindKey, wanted: set) -> Optional[Dict[str, Object]]:
        """The wanted objects of a kind in the namespace by name; None when
        the kind cannot be listed here (then each is read by a GET)."""
        try:
            res = self.dyn.resources.get(api_version=kind[0], kind=kind[1])
        except ResourceNotFoundError:
            return None  # the apply says so, in its words
        if not getattr(res, "namespaced", False):
            return None
        try:
            items = transient.retry(lambda: read(res, self.namespace, None, _keep(wanted)))
        except Exception as exc:  # noqa: BLE001 - the GETs meet the same failure and word it
            if isinstance(exc, DynamicApiError) or transient.is_transient(exc):
                return None
            raise
        return {item["metadata"]["name"]: item for item in items if item is not None}


def _keep(wanted: set) -> Any:
    """Only the wanted objects outlive their page."""
    def keep(item: Object) -> Optional[Object]:
        return item if (item.get("metadata") or {}).get("name") in wanted else None
    return keep
