# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deployed revision of many releases, in one list a namespace.

Helm labels each release record (helm/storage.py) owner=helm, name, status
and version; the records of the deployed revisions are listed with that
selector, one list for the namespaces wanted (kube/across.py), and each is
decoded as it is read: only its chart, values and manifest are kept, never
the raw record. Helm keeps only its latest successful revision `deployed`;
should two be labelled so, the higher wins, as Helm decides.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.helm.storage import SECRET, decode
from ansible_collections.lcm.openstack.plugins.module_utils.kube.across import across

Key = Tuple[str, str]  # (namespace, release)
SELECTOR = "owner=helm,status=deployed"


def deployed(dyn: Any, namespaces: Iterable[str], of: str = SECRET) -> Dict[Key, Dict[str, Any]]:
    """(namespace, release) -> {revision, chart, config, manifest} of its deployed revision."""
    wanted = sorted(set(namespaces))
    if not wanted:
        return {}
    res = dyn.resources.get(api_version="v1", kind=of)
    unread: Set[str] = set()
    items = across(res, wanted, SELECTOR, lambda item: _kept(item, of), unread, strict=True)
    out: Dict[Key, Dict[str, Any]] = {}
    for item in items:
        key = (item["namespace"], item["name"])
        if key not in out or item["revision"] > out[key]["revision"]:
            out[key] = item
    return out


def _kept(item: Dict[str, Any], of: str) -> Dict[str, Any]:
    meta = item.get("metadata") or {}
    record = decode((item.get("data") or {}).get("release", ""), of)
    return {"namespace": meta.get("namespace") or "", "name": (meta.get("labels") or {}).get("name") or record.get("name"),
            "revision": int(record.get("version") or 0), "chart": record.get("chart") or {},
            "config": record.get("config") or {}, "manifest": record.get("manifest") or ""}
