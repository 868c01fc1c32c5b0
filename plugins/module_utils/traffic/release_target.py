# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The traffic target of a request that names none, read from the deployed
release (traffic/target.py chooses it), and a step with nothing to route
recorded on the running flow.

The release is read as the phase engine reads it (helm/storage.py): from
Helm's storage record with the module's own credentials, which holds the
manifest (`helm get manifest`), the user's values and the chart's, merged as
`helm get values --all` merges them; through the Helm CLI only for the sql
driver, whose records only Helm reaches.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Mapping, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.helm import storage
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, find_helm, merge_values
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import parse_manifest
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.record import Lifecycle
from ansible_collections.lcm.openstack.plugins.module_utils.traffic import target
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.request import TrafficRequest


def resolve(dyn: Any, req: TrafficRequest, env: Optional[Mapping[str, str]] = None) -> target.Target:
    """The object `req` moves, from the release's deployed revision; the
    request is given its name (a Target with no name: nothing to route)."""
    env = os.environ if env is None else env
    of = storage.kind(env)
    if of is None:
        helm = Helm(find_helm(None, env), env=dict(env))
        deployed = storage.deployed_by_helm(helm, req.namespace, req.release, with_manifest=True)
    else:
        deployed = storage.deployed(dyn, req.namespace, req.release, of, with_manifest=True)
    if deployed is None:
        raise PhaseError(f"release {req.release} has no deployed revision in namespace {req.namespace} to read "
                         f"the traffic target from; deploy it first, or name the {target.KIND[req.backend]} with "
                         f"the flow input {target.FLOW_INPUT} (the traffic module's {target.OPTION[req.backend]})")
    objects = [r.obj for r in parse_manifest(deployed.manifest)]
    chosen = target.choose(req.backend, req.service, req.release, objects,
                           merge_values(deployed.defaults, deployed.values))
    if not chosen.nothing:
        setattr(req, target.OPTION[req.backend], chosen.name)
    return chosen


def skipped(dyn: Any, req: TrafficRequest, chosen: target.Target, check_mode: bool) -> Dict[str, Any]:
    """The result of a move with nothing to route: the traffic did not move
    (changed=false) and `skipped` says why; the service's running flow notes
    the step as skipped, with the reason, where it stands among its Phases.
    Without a running flow there is nothing to note, and no record is made."""
    lifecycle = Lifecycle(dyn, req.namespace, req.service, req.release)
    if lifecycle.running_flow():
        lifecycle.update(lambda status: flow.skip(status, req.phase_type, chosen.why), dry_run=check_mode)
    return {"changed": False, "phase": None, "backend": req.backend, "before": {}, "after": {}, "steps_done": [],
            "message": f"{req.phase_type} skipped: {chosen.why}", "skipped": chosen.why,
            "target": target.summary(chosen)}
