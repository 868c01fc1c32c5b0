# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a server-side dry run of a phase cannot check, and why.

A dry run persists nothing, so an object that depends on one an earlier wave
of the same phase creates is refused for its absence, not for itself. Two
such refusals are known (phase/apply.py decides what to do with them): a
RoleBinding to a Role the phase creates, and a Pod whose ServiceAccount it
creates. `planned` holds the (kind, name) pairs the dry run is to create.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Set, Tuple

from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_reason, is_authorization_denial


def planned_role(planned: Set[Tuple[str, str]], obj: Dict[str, Any], exc: Any) -> str:
    """The Role of a RoleBinding that the apiserver could not find, when
    the dry run is to create it. An account without `bind` may bind only a
    Role whose rules it holds, which the apiserver checks by reading the
    Role: in a dry run it is not there yet."""
    if obj.get("kind") != "RoleBinding" or getattr(exc, "status", None) != 404:
        return ""
    ref = obj.get("roleRef") or {}
    return str(ref.get("name")) if ref.get("kind") == "Role" and ("Role", ref.get("name")) in planned else ""


def planned_account(planned: Set[Tuple[str, str]], obj: Dict[str, Any], exc: Any) -> Optional[str]:
    """The ServiceAccount of a Pod that admission could not find, when the
    dry run is to create it: the refusal says nothing about the Pod itself."""
    if obj.get("kind") != "Pod" or getattr(exc, "status", None) != 403:
        return None
    spec = obj.get("spec") or {}
    account = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    if ("ServiceAccount", account) not in planned or is_authorization_denial(exc):
        return None
    return account if "service account" in api_reason(exc) else None
