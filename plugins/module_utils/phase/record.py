# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Phase run's record, from started to ended: once for every kind of phase.

A phase (phase/runner.py) and a traffic move (traffic/runner.py) record their run the same
way, and every way out of it must leave a Phase that tells the truth:

- started: the ServiceLifecycle exists and names the Phase as current, the
  Phase is Running; the UpdateStatus shows it once the work is under way (the
  first wave applied, or the traffic setting chosen), so the refresh, which
  reads every service's objects, does not hold back the first Job;
- the work raises PhaseFailed (it recorded its own failure): passed on;
- any other LcmError (common/errors.py): the Phase is Failed with its message, its Jobs stopped;
- SIGTERM or SIGINT (common/interrupt.py): the Phase stays Running, its Jobs go
  on, and it says so; a re-run attaches to it;
- anything else (an API call that broke for good, a bug): the Phase is
  Failed saying so; if even that cannot be written (the apiserver is gone),
  it stays Running and the error says a re-run attaches to it;
- ended (Succeeded or Failed): the ServiceLifecycle history has the outcome,
  and the UpdateStatus is refreshed again (after a success, unless the
  caller ends the flow next in the same process and refreshes it then,
  once for both: lifecycle/flow_end.py).

Every failure leaves as PhaseFailed with `changed` true (the Phase was
written) and the caller's details (what it applied, the Phase summary).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Collection, Dict, Iterator, List

from ansible_collections.lcm.openstack.plugins.module_utils.common import interrupt, transient
from ansible_collections.lcm.openstack.plugins.module_utils.crds.phase import Phase, phase_status
from ansible_collections.lcm.openstack.plugins.module_utils.common.compat import NotFoundError
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError, PhaseError, PhaseFailed, PhaseGone
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_call
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.record import Lifecycle
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import (
    FAILED, LABEL_SERVICE, LABEL_SPEC_HASH, PENDING, RUNNING, SUCCEEDED,
)
from ansible_collections.lcm.openstack.plugins.module_utils.phase.status import StatusWriter
from ansible_collections.lcm.openstack.plugins.module_utils.phase.stop import stop_jobs


def create(phases: Any, body: Phase, service: str) -> Phase:
    """Create the Phase, and on 409 say who won: the create is the only check
    that cannot race (a read before it could be outdated by the time it lands)."""
    namespace, name = body["metadata"]["namespace"], body["metadata"]["name"]
    with api_call("create", "phases", namespace, handled=(409,)):
        return phases.create(body=body, namespace=namespace).to_dict()
    try:
        other = phases.get(name=name, namespace=namespace).to_dict()
    except NotFoundError:
        other = {}
    if _ours(other, body):
        return other  # our create, sent again after a blip, had landed the first time
    state = phase_status(other).get("state", PENDING)
    raise PhaseError(
        f"another run created Phase {name} for {service} at the same moment ({state}); "
        "it runs the phase now. Wait for that run to end; a re-run then finds its outcome")


def _ours(other: Phase, body: Phase) -> bool:
    """A Phase of the same spec that nobody has started: the one this run
    created. (No other run can be creating it: the run holds its service's
    Lease, lifecycle/service_hold.py.)"""
    labels, wanted = (other.get("metadata") or {}).get("labels") or {}, body["metadata"].get("labels") or {}
    spec_hash = wanted.get(LABEL_SPEC_HASH)
    return bool(other) and not phase_status(other).get("state") and spec_hash is not None and \
        labels.get(LABEL_SPEC_HASH) == spec_hash


def refuse_concurrent(phases: Any, namespace: str, service: str, allowed: Collection[str], doing: str) -> None:
    """One phase at a time per service, traffic phases included: another
    Running Phase of it (but those in `allowed`: this one, the rollout a
    check runs inside) refuses `doing`."""
    with api_call("list", "phases", namespace):
        items = phases.get(namespace=namespace, label_selector=f"{LABEL_SERVICE}={service}").to_dict()
    for other in items.get("items") or []:
        if other["metadata"]["name"] not in allowed and phase_status(other).get("state") == RUNNING:
            raise PhaseError(
                f"Phase {other['metadata']['name']} ({other['spec']['type']}) is Running for "
                f"{service}; wait for it to end, or delete it, before {doing}")


def _refreshed(dyn: Any, warnings: List[str]) -> None:
    """The UpdateStatus follows the record: refreshed when the run starts (it
    shows the phase as current while it runs) and when it ends, in this
    process; the roles and flows run no refresh of their own."""
    # Imported here: the phase and traffic modules load the keeper only once a run writes (test_payloads).
    from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.keeper import refresh

    warning = refresh(dyn)
    if warning:
        warnings.append(warning)


@contextlib.contextmanager
def recorded(dyn: Any, writer: StatusWriter, lifecycle: Lifecycle,
             details: Callable[[], Dict[str, Any]], warnings: List[str],
             refresh_if_succeeded: bool = True) -> Iterator[StatusWriter]:
    """Mark the run started everywhere it shows (the ServiceLifecycle names
    the Phase, the Phase is Running, the UpdateStatus shows it once the work
    is under way), then the block does the phase's work; whatever leaves it, the record ends true
    (see the module docstring). `details` gives what a PhaseFailed carries
    besides the message, read after the failure was recorded; a refresh of
    the UpdateStatus that failed is added to `warnings`. Without
    `refresh_if_succeeded`, a run that succeeds leaves the end's refresh to
    the caller (a Failed one is refreshed here: the caller goes no further)."""
    lifecycle.ensure()
    writer.start()
    lifecycle.phase_started(writer.phase)
    writer.when_under_way(lambda: _refreshed(dyn, warnings))
    name = writer.phase["metadata"]["name"]
    try:
        with interrupt.stopped_by_signal():
            try:
                yield writer
            except PhaseFailed:
                raise
            except PhaseGone as exc:  # nothing left to write the outcome on
                raise PhaseFailed(str(exc), **details()) from exc
            except LcmError as exc:
                writer.fail_with(exc, stop_jobs(dyn, writer.phase))
                raise PhaseFailed(str(exc), **details()) from exc
            except interrupt.Interrupted as exc:
                raise PhaseFailed(_interrupted(writer, name, exc.signal), **details()) from None
            except Exception as exc:  # an API call or a bug: never leave the Phase Running behind
                raise PhaseFailed(_unexpected(dyn, writer, name, exc), **details()) from exc
    finally:
        writer.when_under_way(None)  # not under way yet: the end's refresh says it all
        state = phase_status(writer.phase).get("state")
        if state in (SUCCEEDED, FAILED):
            lifecycle.phase_ended(writer.phase)
            if state == FAILED or refresh_if_succeeded:
                _refreshed(dyn, warnings)


def _interrupted(writer: StatusWriter, name: str, signal: str) -> str:
    # Left Running on purpose: its Jobs go on, and a re-run attaches to it.
    message = (f"interrupted by {signal}: the Phase {name} stays Running and its Jobs go on; "
               "run the same phase again to attach to it, or delete it (state: absent) to stop them")
    try:
        writer.note(message)
    except Exception:  # noqa: BLE001 - the interruption is what the user must see
        message += " (the note could not be written on the Phase)"
    return message


def _unexpected(dyn: Any, writer: StatusWriter, name: str, exc: Exception) -> str:
    message = f"the phase stopped on an unexpected error: {type(exc).__name__}: {exc}"
    if transient.is_transient(exc):
        message = (f"the apiserver could not be reached for {int(transient.RETRY_SECONDS)}s "
                   f"({transient.describe(exc)})")
    try:
        writer.fail_with(PhaseError(message), stop_jobs(dyn, writer.phase))
    except Exception as again:  # noqa: BLE001 - the record cannot be written either
        message += (f"; the Phase {name} could not be marked Failed ({transient.describe(again)}) "
                    "and stays Running: a re-run with the same inputs attaches to it")
    return writer.redactor.redact(message)
