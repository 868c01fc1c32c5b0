# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Errors the phase engine raises: each message says what is wrong and how to fix it."""

from __future__ import annotations

import json
import re
from typing import Any, Dict, Optional

# The apiserver's own words for a refusal: ... cannot create resource "jobs" in API group "batch" ...
_FORBIDDEN = re.compile(r'cannot (?P<verb>[a-z]+) resource "(?P<resource>[^"]+)"'
                        r'(?: in API group "(?P<group>[^"]*)")?')


class PhaseError(Exception):
    """Bad input or an unusable cluster; nothing was left half-done."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.details: Dict[str, Any] = details


class PhaseFailed(PhaseError):
    """The phase ran and failed; `details` holds the Phase status."""


def api_error(exc: Any, verb: str, what: str, namespace: Optional[str] = None) -> PhaseError:
    """A readable error for a failed API call (kubernetes ApiException or DynamicApiError)."""
    status = getattr(exc, "status", None)
    where = f" in namespace {namespace}" if namespace else ""
    if status == 403:
        found = _FORBIDDEN.search(_message(exc))
        group = ""
        if found:
            verb, what = found.group("verb"), found.group("resource")
            group = f" (API group '{found.group('group')}')" if found.group("group") else ""
        return PhaseError(
            f"forbidden: the credentials in use may not {verb} {what}{where}. Grant the verb "
            f"'{verb}' on '{what}'{group}; the ClusterRole lcm-openstack-phase of the "
            "lcm.openstack.crds role has every rule the modules need")
    if status == 401:
        return PhaseError("unauthorized: the cluster refused the credentials; check kubeconfig, "
                          "api_key or the K8S_AUTH_* variables")
    return PhaseError(f"could not {verb} {what}{where}: HTTP {status}: {_message(exc)}")


def _message(exc: Any) -> str:
    """The apiserver's message out of a Status body, else the exception's text."""
    body = getattr(exc, "body", None)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        return str(json.loads(body)["message"])
    except (TypeError, ValueError, KeyError):
        return str(body or exc)
