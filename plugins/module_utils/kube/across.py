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

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import DynamicApiError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_error, is_authorization_denial
from ansible_collections.lcm.openstack.plugins.module_utils.kube.paging import Item, Keep, read


def across(res: Any, namespaces: Optional[Iterable[str]], selector: Optional[str], keep: Keep,
           unread: Set[str], strict: bool = False, metadata_only: bool = False) -> List[Item]:
    """The items of `res` in `namespaces` (None: all, never per namespace),
    through `keep` (paging.read; metadata_only: their metadata alone). A
    namespace denied is added to `unread` (strict: it is an error, naming what
    to grant); one in it is not asked (its entries stay)."""
    wanted = None if namespaces is None else set(namespaces)
    try:
        return [] if wanted == set() else read(res, None, selector, keep, wanted, metadata_only)
    except DynamicApiError as exc:
        if wanted is None or not is_authorization_denial(exc):
            raise api_error(exc, "list", res.name) from exc
    found: List[Item] = []
    for namespace in sorted(wanted - unread):
        try:
            found += read(res, namespace, selector, keep, metadata_only=metadata_only)
        except DynamicApiError as exc:
            if strict or not is_authorization_denial(exc):
                raise api_error(exc, "list", res.name, namespace) from exc
            unread.add(namespace)
    return found
