# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A phase run outside any flow holds its service as a flow does.

One run at a time per service: a flow holds the Lease `lcm-flow-<service>`
from its start to its end (lifecycle/flow_lease.py). A phase run by itself (a role on
its own, `ansible -m lcm.openstack.phase`, a playbook of the operator's)
takes the same Lease for its playbook run, so two such runs started together
do not both drive one Phase, and neither runs while a flow of another run
holds the service. Inside a flow, or after an earlier phase of the same run,
the run holds it already and nothing is taken. The Lease is kept renewed
until the playbook ends and given back then (lifecycle/lease_renewer.py), as a flow's.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import lease_renewer
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow_lease import FlowLease, holder_identity


def hold(dyn: Any, namespace: str, service: str, purpose: str) -> str:
    """Take the service for this playbook run, or raise naming who has it.
    Returns what was done ('' when this run held it already)."""
    lease = FlowLease(dyn, namespace, service, holder_identity())
    read = lease.read()  # once: what decides here is what acquire() starts from
    held = lease.live_holder(as_read=read)
    if held is not None and held.identity == lease.holder:
        return ""  # its flow, or an earlier phase of this run
    taken = lease.acquire(purpose, as_read=read)
    lease_renewer.keep_renewed(dyn, lease)
    return taken.message
