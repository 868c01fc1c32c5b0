# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a running phase has lost its reason to wait: its Phase, or its
namespace, deleted under it.

Asked only when an object the phase waits for is deleted (kube/waiter.py's
on_gone): two reads at that moment, no polling. Without it, a namespace
deleted while a phase waits left the module waiting out its timeout, its
Lease renewals failing, with nothing left to record an outcome on.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import ApiException, NotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import answered


def reason(dyn: Any, phases: Any, namespace: str, name: str, key: Tuple[str, str]) -> Optional[str]:
    """Why the wait is over (the Phase or the namespace deleted), or None to go on."""
    what = f"{key[0]} {key[1]}"
    phase = None  # not told (any other refusal): the namespace may say
    with answered(caught=ApiException) as refused:
        phase = phases.get(name=name, namespace=namespace).to_dict()
    if isinstance(refused.error, NotFoundError):
        return f"the Phase {name} was deleted while it waited ({what} was deleted too); nothing is left to wait for"
    if phase is not None and (phase.get("metadata") or {}).get("deletionTimestamp"):
        return f"the Phase {name} is being deleted while it waited ({what} was deleted); nothing is left to wait for"
    with answered(caught=ApiException) as refused:
        ns = dyn.resources.get(api_version="v1", kind="Namespace").get(name=namespace).to_dict()
    if isinstance(refused.error, NotFoundError):
        return f"namespace {namespace} was deleted while the phase {name} waited; nothing is left to wait for"
    if refused:
        return None  # credentials that may not read namespaces: go on, as before
    if (ns.get("metadata") or {}).get("deletionTimestamp") or (ns.get("status") or {}).get("phase") == "Terminating":
        return (f"namespace {namespace} is being deleted while the phase {name} waited ({what} was deleted); "
                "nothing is left to wait for")
    return None


def asker(dyn: Any, phases: Any, namespace: str, name: str) -> Callable[[Tuple[str, str]], Optional[str]]:
    """What kube/waiter.py's on_gone asks when an object the phase waits for
    is deleted under it (or fails: a namespace deletion takes the pods
    first). A namespace deletion takes the Jobs first or the Phase first, in
    no set order; either way nothing is left to wait for, nor to record the
    outcome on. Else the wait goes on (a Job deleted by hand fails or times
    out as before)."""
    return lambda key: reason(dyn, phases, namespace, name, key)
