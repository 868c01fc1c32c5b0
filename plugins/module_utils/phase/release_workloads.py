# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The release's own workloads a phase waits for, as its last wave (install)
or its first after the config objects (test) (RELEASE_WORKLOADS, by phase type): those the rendered chart holds, of the
workload kinds, that the deployed release runs. Read with one GET each, as
the apply path reads them; never applied by the phase (Helm owns them)."""

from __future__ import annotations

import fnmatch
from typing import Any, List, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.common.model import (
    RELEASE_WORKLOADS, RELEASE_WORKLOADS_FIRST, WORKLOAD_KINDS)
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import Rendered
from ansible_collections.lcm.openstack.plugins.module_utils.phase import selection
from ansible_collections.lcm.openstack.plugins.module_utils.phase.apply import Applier
from ansible_collections.lcm.openstack.plugins.module_utils.phase.ownership import helm_release_of

FIRST_WAVE = (-(10 ** 5),)  # after the config objects' wave, before every other


def release_workloads(dyn: Any, namespace: str, phase_type: str, release: str, deployed: Optional[Any],
                      rendered: List[Rendered]) -> List[Rendered]:
    """The workloads of RELEASE_WORKLOADS that the release runs, in the wave the type waits for them."""
    globs = RELEASE_WORKLOADS.get(phase_type, ())
    if not globs or deployed is None:
        return []
    reader = Applier(dyn, namespace, dry_run=True)
    out = []
    for r in rendered:
        if r.kind in WORKLOAD_KINDS and any(fnmatch.fnmatchcase(r.source, g) for g in globs):
            live = reader.get(r.obj["apiVersion"], r.kind, r.name)
            if live is not None and helm_release_of(live) == release:
                r.wave = FIRST_WAVE if phase_type in RELEASE_WORKLOADS_FIRST else selection.LAST_WAVE
                out.append(r)
    return out
