# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's errors: one base, LcmError, and a class per domain; each
message says what is wrong and how to fix it."""

from __future__ import annotations

from typing import Any, Dict


class LcmError(Exception):
    """Every error of the collection: bad input or an unusable cluster, said
    with what is wrong and how to fix it. A module's adapter ends the task
    on any of them; code that decides something catches a domain's class or
    one of the named cases below, never this one for a decision."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.details: Dict[str, Any] = details


class InputError(LcmError):
    """A module's or a flow's input refused: what is expected instead."""


class KubeError(LcmError):
    """The Kubernetes API refused or failed a call (kube/api_errors.py words
    it), or a Lease the run needs is held or raced."""


class PhaseError(LcmError):
    """A phase (install, test, upgrade, rollback, uninstall, traffic) could
    not be run as asked; nothing was left half-done."""


class LifecycleError(LcmError):
    """A service's lifecycle record, its dependencies or its flow refused."""


class SiteError(LcmError):
    """A site's services, their order or their charts refused."""


class PhaseFailed(PhaseError):
    """The phase ran and failed; `details` holds the Phase status."""


class PhaseGone(PhaseError):
    """The Phase, or its namespace, was deleted while the phase ran: there is
    nothing left to record the outcome on, and nothing to wait for."""


class CrdMissing(KubeError):
    """The cluster does not serve one of the collection's CRDs. Callers that
    can do without it (the UpdateStatus refresh) catch this type, never the
    message."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class ObjectNotFound(KubeError):
    """An object the task needs is not in `namespace`, which may itself be
    missing: a read of an object answers 404 for the object either way."""

    def __init__(self, message: str, namespace: str) -> None:
        super().__init__(message)
        self.namespace = namespace
