# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Listing a kind across the services' namespaces, in requests that do not grow with them.

A list per namespace and kind cost the UpdateStatus refresh 6 requests a
service. So a kind is listed once cluster-wide, keeping the services'
namespaces; where that is denied (an account bound in its own namespaces,
docs/rbac.md), namespace by namespace.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional, Set

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import DynamicApiError
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import api_error, is_authorization_denial
from ansible_collections.lcm.openstack.plugins.module_utils.kube.plain import plain

# In pages, so no response holds a large cluster's pods (or Helm Secrets,
# values and all) whole: only what is kept outlives its page.
PAGE = 500
Item = Dict[str, Any]
Keep = Callable[[Item], Item]


def across(res: Any, namespaces: Optional[Iterable[str]], selector: Optional[str], keep: Keep,
           unread: Set[str]) -> List[Item]:
    """The items of `res` in `namespaces` (None: all, never per namespace),
    through `keep`. A namespace denied is added to `unread`; one in it is
    not asked (its entries stay)."""
    wanted = None if namespaces is None else set(namespaces)
    try:
        return [] if wanted == set() else read(res, None, selector, keep, wanted)
    except DynamicApiError as exc:
        if wanted is None or not is_authorization_denial(exc):
            raise api_error(exc, "list", res.name) from exc
    found: List[Item] = []
    for namespace in sorted(wanted - unread):
        try:
            found += read(res, namespace, selector, keep)
        except DynamicApiError as exc:
            if not is_authorization_denial(exc):
                raise api_error(exc, "list", res.name, namespace) from exc
            unread.add(namespace)
    return found


def read(res: Any, namespace: Optional[str], selector: Optional[str], keep: Keep,
         wanted: Optional[Set[str]] = None) -> List[Item]:
    """One list, every page: its items in `wanted` namespaces (None: all) through `keep`."""
    kept: List[Item] = []
    token, restarted = None, False
    while True:
        try:
            # As parsed JSON (kube/plain.py): a ResourceInstance built and turned
            # back into a dict, field by field, cost most of a refresh's CPU.
            page = res.get(namespace=namespace, label_selector=selector, limit=PAGE, _continue=token,
                           serializer=plain).to_dict()
        except DynamicApiError as exc:
            if exc.status != 410 or restarted:
                raise
            # Gone: the token outlived etcd's history of the list (compacted every
            # 5 minutes). Start over, once, dropping what was read: nothing twice.
            kept, token, restarted = [], None, True
            continue
        kept += [keep(item) for item in page.get("items") or []
                 if wanted is None or (item.get("metadata") or {}).get("namespace") in wanted]
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return kept
