# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One list of a kind, read page by page.

In pages, so that no response holds a large cluster's pods (or Helm's
Secrets, values and all) whole: only what the caller keeps of an item
outlives its page. Used by the UpdateStatus refresh (a kind across the
services' namespaces) and by a phase reading a wave ahead (its objects of a
kind in one list instead of a GET each).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Set

from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import answered
from ansible_collections.lcm.openstack.plugins.module_utils.kube.plain import plain

PAGE = 500
Item = Dict[str, Any]
Keep = Callable[[Item], Item]


# The apiserver's metadata-only form of a list (what `kubectl get --show-kind`
# uses for tables, and controllers' metadata informers): each item is its
# metadata alone, so a list of Helm's release Secrets does not carry every
# revision's manifest and values (up to 1 MiB each) to read their labels.
METADATA_ONLY = {"Accept": "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"}


def read(res: Any, namespace: Optional[str], selector: Optional[str], keep: Keep,
         wanted: Optional[Set[str]] = None, metadata_only: bool = False) -> List[Item]:
    """One list, every page: its items in `wanted` namespaces (None: all) through
    `keep`; with metadata_only, each item is {"metadata": ...} alone."""
    extra = {"header_params": dict(METADATA_ONLY)} if metadata_only else {}
    kept: List[Item] = []
    token, restarted = None, False
    while True:
        with answered(() if restarted else (410,)) as gone:
            # As parsed JSON (kube/plain.py): a ResourceInstance built and turned
            # back into a dict, field by field, cost most of a refresh's CPU.
            page = res.get(namespace=namespace, label_selector=selector, limit=PAGE, _continue=token,
                           serializer=plain, **extra).to_dict()
        if gone:
            # Gone: the token outlived etcd's history of the list (compacted every
            # 5 minutes). Start over, once, dropping what was read: nothing twice.
            kept, token, restarted = [], None, True
            continue
        kept += [keep({"metadata": item.get("metadata") or {}} if metadata_only else item)
                 for item in page.get("items") or []
                 if wanted is None or (item.get("metadata") or {}).get("namespace") in wanted]
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return kept
