# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The results of a release's tests (`helm test`), read from the release's
status: one entry a test hook, with the log tail of a test Pod that failed
(masked), so that a failed test says why without a second command.
"""

from __future__ import annotations

from typing import Any, Dict, List

from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm
from ansible_collections.lcm.openstack.plugins.module_utils.kube import diagnose


def results(dyn: Any, helm: Helm, release: str, namespace: str) -> List[Dict[str, Any]]:
    """Each test hook of the release's last run: its phase and times, and a failed Pod's log tail."""
    status = helm.status(release, namespace) or {}
    out = []
    for hook in status.get("hooks") or []:
        if not {"test", "test-success"} & set(hook.get("events") or []):
            continue
        run = hook.get("last_run") or {}
        entry = {"name": hook.get("name"), "phase": run.get("phase", ""),
                 "started_at": run.get("started_at"), "completed_at": run.get("completed_at")}
        if run.get("phase") == "Failed" and dyn is not None and hook.get("kind") == "Pod":
            pod = {"kind": "Pod", "metadata": {"name": hook["name"]}}
            try:
                pod = dyn.resources.get(api_version="v1", kind="Pod").get(
                    name=hook["name"], namespace=namespace).to_dict()
            except Exception:  # noqa: BLE001 - the pod may have been cleaned up
                pass
            entry["log_tail"] = helm.redactor.redact(
                diagnose.log_tail(dyn, namespace, pod))
        out.append(entry)
    return out
