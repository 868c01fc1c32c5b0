# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading one object: what it is, or None when it does not exist; and an
object as a diff shows it.

Every record the collection keeps (Phase, ServiceLifecycle, UpdateStatus,
Lease) and every object a traffic move reads is read this way, so that the
three answers are told apart once: the object, not found (None), and any
other API error, worded by errors.api_error with the verb and the resource
(a 403 names the permission to grant). The read is idempotent, so a
transient failure is tried again (common/transient.py).
"""

from __future__ import annotations

import copy
from typing import Any, Dict, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import DynamicApiError, NotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import api_error
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import mask_secret


def get_or_none(res: Any, name: str, namespace: Optional[str] = None) -> Optional[Dict[str, Any]]:
    """The object `name` of the resource `res` as a dict, or None when it does not exist."""
    try:
        return transient.retry(lambda: res.get(name=name, namespace=namespace).to_dict())
    except NotFoundError:
        return None
    except DynamicApiError as exc:
        raise api_error(exc, "get", getattr(res, "name", "") or str(getattr(res, "kind", "objects")),
                        namespace) from exc


_VOLATILE_META = ("managedFields", "resourceVersion", "generation", "uid", "creationTimestamp")


def comparable(obj: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """An object as a diff shows it: no server bookkeeping, Secret data masked."""
    if obj is None:
        return None
    out = copy.deepcopy(obj)
    meta = out.get("metadata") or {}
    for key in _VOLATILE_META:
        meta.pop(key, None)
    (meta.get("annotations") or {}).pop("kubectl.kubernetes.io/last-applied-configuration", None)
    out.pop("status", None)
    return mask_secret(out)
