"""plugins/module_utils/lifecycle/lease_renewer.py: renew while the playbook lives, give
the Lease back the moment it ends."""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import List

from urllib3.exceptions import ProtocolError

from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import lease_renewer


class _Lease:
    def __init__(self, renewals: List[object]) -> None:
        self.renewals = list(renewals)  # what each renew() does: True, False, or an exception
        self.calls: List[str] = []

    def renew(self) -> bool:
        self.calls.append("renew")
        outcome = self.renewals.pop(0) if self.renewals else True
        if isinstance(outcome, Exception):
            raise outcome  # pylint: disable=raising-bad-type
        return bool(outcome)

    def release(self) -> bool:
        self.calls.append("release")
        return True


def test_the_lease_is_given_back_when_the_playbook_ends() -> None:
    playbook = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    lease = _Lease([True, ProtocolError("Connection aborted."), True])
    outcome: List[str] = []
    renewer = threading.Thread(target=lambda: outcome.append(lease_renewer.run(lease, playbook.pid, 0.05)))
    renewer.start()
    while lease.calls.count("renew") < 4:  # renewed through a transient failure
        threading.Event().wait(0.01)
    playbook.stdin.close()  # the playbook ends
    playbook.wait()
    renewer.join(timeout=30)
    assert outcome == ["released"]
    assert lease.calls[-1] == "release" and lease.calls.count("release") == 1


def test_a_lease_taken_by_someone_else_ends_the_renewer_without_releasing() -> None:
    playbook = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        lease = _Lease([True, False])
        assert lease_renewer.run(lease, playbook.pid, 0.01) == "lost"
        assert lease.calls == ["renew", "renew"]
    finally:
        playbook.stdin.close()
        playbook.wait()
