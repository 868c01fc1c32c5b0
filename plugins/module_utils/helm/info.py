# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What lcm.openstack.helm_release_info returns: status, history, values and
manifest of releases, with values under credential keys and Secret data masked."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm
from ansible_collections.lcm.openstack.plugins.module_utils.helm.history import history_entries, summary
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import masked_manifest, parse_manifest


def release_info(helm: Helm, namespace: str, name: Optional[str] = None,
                 all_values: bool = False) -> List[Dict[str, Any]]:
    """Status, history, values and manifest of one release, or of every release
    of the namespace. Values under credential keys and Secret data are masked."""
    helm.check_version()
    if name:
        names = [name]
    else:
        listed = helm.run(["list", "--namespace", namespace, "--output", "json", "--max", "0"]
                          + (["--all"] if helm.major == 3 else [])).stdout
        names = sorted(r["name"] for r in (json.loads(listed or "[]") or []))
    out = []
    for release in names:
        history = helm.history(release, namespace)
        if not history:
            continue
        values = helm.get_values(release, namespace, all_values=all_values)
        helm.redactor.add_values(values)
        manifest = helm.get_manifest(release, namespace) if history[-1].get("status") != "uninstalled" else ""
        helm.redactor.add_objects(r.obj for r in parse_manifest(manifest))
        out.append({"status": summary(release, namespace, history), "history": history_entries(history),
                    "release_values": helm.redactor.mask_values(values),
                    "manifest": helm.redactor.redact(masked_manifest(manifest))})
    return out
