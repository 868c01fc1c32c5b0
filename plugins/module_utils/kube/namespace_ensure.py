# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A flow's namespace, made at its start when it is not there
(lcm.openstack.service_lifecycle's create_namespace), so that the flow needs
no module run of its own for it: a module process costs most of a second
before it does anything."""

from __future__ import annotations

from typing import Any

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import ApiException, ConflictError, NotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call

# What ensure() found: the namespace made, there already, or not readable by
# these credentials (taken to exist: an account bound only by RoleBindings in
# the namespace may not read namespaces, and its RoleBindings prove it is there).
CREATED, PRESENT, UNREADABLE = "created", "present", "unreadable"


def ensure(dyn: Any, namespace: str, dry_run: bool = False) -> str:
    """The namespace, made when it is not there: CREATED, PRESENT or
    UNREADABLE. Anything else that goes wrong is an error naming the namespace."""
    namespaces = dyn.resources.get(api_version="v1", kind="Namespace")
    with api_call("get", "namespaces", namespace, caught=ApiException, handled=(NotFoundError, 403)) as refused:
        transient.retry(lambda: namespaces.get(name=namespace))
        return PRESENT
    if not isinstance(refused.error, NotFoundError):
        return UNREADABLE
    if dry_run:
        return CREATED
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    # Sent again after a blip that cut the answer, it finds it made: 409.
    with api_call("create", "namespaces", namespace, caught=ApiException, handled=(ConflictError,)) as made:
        transient.retry(lambda: namespaces.create(body=body))
    return PRESENT if made else CREATED
