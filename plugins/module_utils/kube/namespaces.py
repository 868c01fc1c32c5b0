# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether the namespace a task was pointed at exists.

A write into a namespace that does not exist answers 404 with a Status naming
the namespace (api_errors.api_error says so). A read does not: it answers 404 for
the object, as if only the object were missing. So where a task fails because
an object it reads is not there (errors.ObjectNotFound), the namespace is
asked about once, then: no request of a task that works pays for it.
"""

from __future__ import annotations

from typing import Any, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import ApiException, NotFoundError, ResourceNotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import answered, namespace_missing


def missing(dyn: Any, namespace: str) -> Optional[KubeError]:
    """The error for `namespace` when it does not exist; None when it does or
    that cannot be told (an account bound only in its namespaces may not read
    namespaces, docs/rbac.md)."""
    with answered(caught=(ApiException, ResourceNotFoundError)) as refused:
        dyn.resources.get(api_version="v1", kind="Namespace").get(name=namespace)
    return namespace_missing(namespace) if isinstance(refused.error, NotFoundError) else None
