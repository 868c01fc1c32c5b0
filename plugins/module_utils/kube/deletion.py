# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Delete an object and see it go, by watch.

A Phase re-run from scratch, a Failed Phase's Jobs created anew, an object
released from a Phase: each deletes and must know the object is gone before
it goes on (a Foreground delete is gone only once its dependents are). The
watch starts from a list's resourceVersion; a 410 or a broken connection
lists again, so a blip never fails the delete.
"""

from __future__ import annotations

import time
from typing import Any, Dict, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import ApiException, NotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call


def delete_and_wait(dyn: Any, res: Any, name: str, namespace: str, propagation: str,
                    timeout: float, hint: str = "it may carry a finalizer",
                    grace_seconds: Optional[int] = None) -> bool:
    """Delete an object and watch until it is gone. Foreground propagation
    returns only once its dependents are gone too. Returns False when there was
    nothing to delete.

    The watch starts from the resourceVersion of a list, not from the object's
    own: an object created long ago has a resourceVersion the apiserver may no
    longer serve (410 Expired). A 410 during the wait lists again."""
    selector = f"metadata.name={name}"
    with api_call("delete", res.name, namespace, handled=(NotFoundError,)) as gone:
        listed = res.get(namespace=namespace, field_selector=selector).to_dict()
        if not listed.get("items"):
            return False
        body: Dict[str, Any] = {"propagationPolicy": propagation}
        if grace_seconds is not None:
            body["gracePeriodSeconds"] = grace_seconds
        res.delete(name=name, namespace=namespace, body=body)
    if gone:
        return False
    deadline = time.monotonic() + timeout
    version = listed["metadata"]["resourceVersion"]
    breaks = 0
    while time.monotonic() < deadline:
        try:
            with api_call("watch", res.name, namespace, caught=ApiException,
                          handled=lambda exc: exc.status == 410 or transient.is_transient(exc)):
                for event in dyn.watch(res, namespace=namespace, field_selector=selector, resource_version=version,
                                       timeout=max(1, int(deadline - time.monotonic()))):
                    if event["type"] == "DELETED":
                        return True
                breaks = 0
        except Exception as exc:  # noqa: BLE001 - a watch cut off mid-stream lists again, like a 410
            if not transient.is_transient(exc):
                raise
            breaks += 1
            time.sleep(min(transient.backoff(breaks), max(0.0, deadline - time.monotonic())))
        with api_call("list", res.name, namespace):  # the watch ended or expired: where is it now?
            listed = res.get(namespace=namespace, field_selector=selector).to_dict()
        if not listed.get("items"):
            return True
        version = listed["metadata"]["resourceVersion"]
    raise KubeError(f"{res.kind} {name} was not deleted within {timeout:.0f}s; {hint}")
