# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Listing a kind across several namespaces, in requests that do not grow with them.

A list per namespace and kind cost the UpdateStatus refresh 6 requests a
service, and a GET per service would cost a site plan one a service. So a
kind is listed once cluster-wide, keeping the namespaces wanted; where that
is denied (an account bound in its own namespaces, docs/rbac.md), namespace
by namespace. The UpdateStatus leaves a namespace it may not read as it was
(`unread`); the site plan cannot (`strict`): a record it has not read would
be a service deployed anew.
"""

from __future__ import annotations

from typing import Any, Iterable, List, Optional, Set

from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call, is_authorization_denial
from ansible_collections.lcm.openstack.plugins.module_utils.kube.paging import Item, Keep, read


def across(res: Any, namespaces: Optional[Iterable[str]], selector: Optional[str], keep: Keep,
           unread: Set[str], strict: bool = False, metadata_only: bool = False) -> List[Item]:
    """The items of `res` in `namespaces` (None: all, never per namespace),
    through `keep` (paging.read; metadata_only: their metadata alone). A
    namespace denied is added to `unread` (strict: it is an error, naming what
    to grant); one in it is not asked (its entries stay)."""
    wanted = None if namespaces is None else set(namespaces)
    with api_call("list", res.name, handled=is_authorization_denial if wanted is not None else ()):
        return [] if wanted == set() else read(res, None, selector, keep, wanted, metadata_only)
    found: List[Item] = []
    for namespace in sorted(wanted - unread):
        with api_call("list", res.name, namespace, handled=() if strict else is_authorization_denial) as denied:
            found += read(res, namespace, selector, keep, metadata_only=metadata_only)
        if denied:
            unread.add(namespace)
    return found
