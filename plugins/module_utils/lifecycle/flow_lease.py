# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One flow per service at a time, enforced in the cluster with a Lease.

A flow takes the coordination.k8s.io Lease `lcm-flow-<service>` in the
service's namespace when it starts and gives it back when it ends. Its holder
is the playbook run (kube/lease.py), so every module call of one run is the same
holder and any other run is not. While the run lives, a small process left
behind by the start renews the Lease (lifecycle/lease_renewer.py); when the playbook
exits, however it exits, that process sees it (a pidfd, no polling) and
gives the Lease back. If the host itself is lost, the Lease expires
`duration` seconds after its last renewal and the next flow takes it over,
which the Lease records (an annotation and spec.leaseTransitions).

A second flow on a held service is refused before it changes anything, with
the holder, its flow and since when.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.lease import (
    ANNOTATION_TAKEN_OVER, DURATION, Holder, Lease, Outcome, holder_identity, playbook_pid,
)
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import FLOWS, LABEL_SERVICE

__all__ = ["ANNOTATION_FLOW", "ANNOTATION_TAKEN_OVER", "DURATION", "FlowLease", "Outcome", "holder_identity",
           "lease_name", "playbook_pid"]

ANNOTATION_FLOW = "lifecycle.openstack.org/flow"


def lease_name(service: str) -> str:
    return f"lcm-flow-{service}"


class FlowLease(Lease):
    def __init__(self, dyn: Any, namespace: str, service: str, holder: str, duration: int = DURATION) -> None:
        super().__init__(dyn, namespace, lease_name(service), holder, duration, purpose_key=ANNOTATION_FLOW,
                         labels={LABEL_SERVICE: service})
        self.service = service

    def what(self, purpose: str) -> str:
        """A flow's name, or what a run outside any flow holds it for ("install phase")."""
        return f"{purpose} flow" if purpose in FLOWS else purpose

    def label(self) -> str:
        return f"{self.service}: flow lease {self.name}"

    def refusal(self, held: Holder, now: datetime) -> KubeError:
        return KubeError(
            f"{self.service} is held by another {self.what(held.purpose)}: "
            f"{held.identity}, since {held.since}, renewed {held.renewed_ago(now)}s ago "
            f"(Lease {self.name} in {self.namespace}). One run at a time per service: wait for it to end; "
            f"if that run is gone, the lease is free {held.free_in(now)}s from now")

    def raced(self) -> KubeError:
        return KubeError(f"{self.service}: another run changed the flow lease {self.name} at the same "
                         "moment; it holds the service now. Wait for it to end")
