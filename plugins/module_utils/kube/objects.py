# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One object: reading it (what it is, or None when it does not exist),
writing it by server-side apply, and showing it in a diff.

Every record the collection keeps (Phase, ServiceLifecycle, UpdateStatus,
Lease) and every object a traffic move reads is read this way, so that the
three answers are told apart once: the object, not found (None), and any
other API error, worded by api_errors.api_error with the verb and the resource
(a 403 names the permission to grant). The read is idempotent, so a
transient failure is tried again (common/transient.py).

Every object the collection owns fields of (a phase's objects, a traffic
backend's selector or weight, a ServiceLifecycle's spec, the UpdateStatus) is
written by one server-side apply under a field manager of the collection,
taking over the fields it sets (force): sending the same intent again, after
a broken connection, gives the same result.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.common import compat
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call, api_reason
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import FIELD_MANAGER
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import mask_secret
from ansible_collections.lcm.openstack.plugins.module_utils.kube.plain import plain


def get_or_none(res: Any, name: str, namespace: Optional[str] = None) -> Optional[Dict[str, Any]]:
    """The object `name` of the resource `res` as a dict, or None when it does not exist."""
    with api_call("get", getattr(res, "name", "") or str(getattr(res, "kind", "objects")), namespace,
                  handled=lambda exc: isinstance(exc, compat.NotFoundError)):
        return transient.retry(lambda: res.get(name=name, namespace=namespace).to_dict())
    return None


def server_side_apply(res: Any, body: Dict[str, Any], namespace: Optional[str] = None,
                      manager: str = FIELD_MANAGER, dry_run: bool = False) -> Dict[str, Any]:
    """Apply `body` under `manager` (see the module docstring); the object as
    the apiserver returns it. API errors are raised as they are, for a
    caller that words them itself (phase/apply.py tells a dry run's
    admission quirks apart); `applied` words them for everyone else."""
    kwargs = {"dry_run": "All"} if dry_run else {}
    return transient.retry(lambda: res.server_side_apply(
        body=body, name=body["metadata"]["name"], namespace=namespace, field_manager=manager,
        force_conflicts=True, serializer=plain, **kwargs).to_dict())


def applied(res: Any, body: Dict[str, Any], namespace: Optional[str] = None, manager: str = FIELD_MANAGER,
            dry_run: bool = False, what: str = "") -> Dict[str, Any]:
    """server_side_apply, an error worded: a refused object (400, 422) with the
    apiserver's reason, anything else by api_errors.api_error."""
    with api_call("patch", what or getattr(res, "name", "") or "objects", namespace, handled=(400, 422)) as refused:
        return server_side_apply(res, body, namespace, manager, dry_run)
    raise KubeError(f"the apiserver refused {body['kind']} {body['metadata']['name']}: "
                    f"{api_reason(refused.error)}") from refused.error


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
