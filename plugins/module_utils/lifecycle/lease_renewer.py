# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Keep a flow's Lease renewed for as long as its playbook runs.

A playbook is not a daemon, so the flow's start leaves one behind: a
detached process (double fork, new session, no inherited pipes, so Ansible
does not wait for it) that renews the Lease every third of its duration and
gives it back the moment the playbook's process ends. It waits on a pidfd of
that process, so its end wakes it at once; where pidfds are missing it checks
at each renewal. Transient API failures are retried at the next renewal; a
Lease taken by someone else ends it.
"""

from __future__ import annotations

import os
import select
import time
from typing import Any, Callable

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow_lease import FlowLease, playbook_pid


def keep_renewed(dyn: Any, lease: Any) -> None:
    """Leave the renewer of a FlowLease behind, watching this playbook run."""
    def fresh_lease() -> Any:
        # The connections of the module's pool belong to the module process.
        dyn.client.rest_client.pool_manager.clear()
        return FlowLease(dyn, lease.namespace, lease.service, lease.holder, lease.duration)
    spawn(fresh_lease, playbook_pid(), lease.duration / 3)


def spawn(make_lease: Callable[[], Any], watch_pid: int, interval: float) -> None:
    """Start the renewer; returns at once in the calling process."""
    if os.fork() != 0:
        return
    # First child: a new session, then the grandchild is orphaned to init.
    try:
        os.setsid()
        if os.fork() != 0:
            os._exit(0)  # pylint: disable=protected-access
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        run(make_lease(), watch_pid, interval)
    finally:
        os._exit(0)  # pylint: disable=protected-access


def run(lease: Any, watch_pid: int, interval: float) -> str:
    """Renew until the watched process ends (then release) or the Lease is lost."""
    waiter = _ProcessWaiter(watch_pid)
    try:
        while True:
            if waiter.ended(interval):
                _quietly(lease.release)
                return "released"
            renewed = _quietly(lease.renew)
            if renewed is False:
                return "lost"
    finally:
        waiter.close()


def _quietly(call: Callable[[], Any]) -> Any:
    """Renewal failures that may pass are tried again at the next turn."""
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - a detached process has nowhere to report
        return None if transient.is_transient(exc) else False


class _ProcessWaiter:
    def __init__(self, pid: int) -> None:
        self.pid = pid
        try:
            self.fd = os.pidfd_open(pid)  # Linux 5.3+, Python 3.9+
        except (AttributeError, OSError):
            self.fd = -1

    def ended(self, timeout: float) -> bool:
        """Wait up to `timeout` for the process to end; True when it has."""
        if self.fd >= 0:
            readable, _w, _x = select.select([self.fd], [], [], timeout)
            return bool(readable)
        time.sleep(timeout)
        return not _alive(self.pid)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
