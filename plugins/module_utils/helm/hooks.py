# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hook Jobs that the phases run instead of Helm.

The flows install and upgrade a release with every `manifests.job_*` switch
of its chart off (helm/chart_jobs.py): the phases run those jobs, in the
order the chart declares. A chart may still render a hook Job that no such
switch gates (mariadb's exporter user job sits under
`manifests.monitoring.prometheus`; any chart may gate a job on another value,
or on none). Helm runs a hook and waits for it before it is done; the
phases start only after Helm is done; and that Job's init container may wait
for jobs the release left to a phase. Nothing can move until Helm's timeout.

So when such a Job is left, Helm runs without hooks, and the install phase
takes every install hook of the render (phase/selection.py), ordered by what
each pod declares, so no Job waits for one that only runs later. A chart
whose jobs are all switched off keeps its hooks as they are.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, template_args
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import parse_manifest

HOOK_ANNOTATION = "helm.sh/hook"
RUN_KINDS = ("Job", "Pod")
EVENTS = {"install": {"pre-install", "post-install"}, "upgrade": {"pre-upgrade", "post-upgrade"}}
TEST_EVENTS = {"test", "test-success", "test-failure"}


def events(obj: Dict[str, Any]) -> List[str]:
    """The hook events an object is annotated with ([] for an ordinary object)."""
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(HOOK_ANNOTATION) or ""
    return [e.strip() for e in str(value).split(",") if e.strip()]


def left_to_phases(objects: Sequence[Dict[str, Any]], operation: str) -> List[str]:
    """The hook Jobs and Pods (tests aside) Helm would run at `operation`
    ("install" or "upgrade"), as "Job <name>"."""
    wanted = EVENTS.get(operation, set())
    return [f"{o.get('kind')} {(o.get('metadata') or {}).get('name', '')}" for o in objects
            if o.get("kind") in RUN_KINDS and wanted & set(events(o)) and not TEST_EVENTS & set(events(o))]


def rendered(helm: Helm, req: Any, value_args: List[str],
             meanwhile: Optional[Callable[[], Any]] = None) -> List[Dict[str, Any]]:
    """The release's chart rendered with its hooks (tests left out); `meanwhile`
    runs while Helm renders (making the cluster client)."""
    (render,) = helm.run_together(
        [template_args(req.name, req.chart, req.namespace, req.chart_version, value_args, ["--skip-tests"])],
        meanwhile=meanwhile)
    if render.rc != 0:
        raise helm.error(render)
    return [r.obj for r in parse_manifest(render.stdout)]


TIMED_OUT = "timed out waiting for the condition"


def explain_timeout(exc: Exception, dyn: Any, namespace: str, objects: Sequence[Dict[str, Any]],
                    operation: str) -> None:
    """Add to Helm's `timed out waiting for the condition` what it waited for:
    each hook Job of `operation` that has not completed, what its pods are
    doing, and what their init container waits for."""
    why = _not_complete(dyn, namespace, objects, operation)
    if why:
        exc.args = (f"{exc} (Helm waited for its hooks: {why})",)


def _not_complete(dyn: Any, namespace: str, objects: Sequence[Dict[str, Any]], operation: str) -> str:
    from ansible_collections.lcm.openstack.plugins.module_utils.common import compat  # pylint: disable=import-outside-toplevel
    from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import answered  # pylint: disable=import-outside-toplevel
    from ansible_collections.lcm.openstack.plugins.module_utils.kube.diagnose import pods_of  # pylint: disable=import-outside-toplevel
    from ansible_collections.lcm.openstack.plugins.module_utils.kube.readiness import explain_pod  # pylint: disable=import-outside-toplevel
    from ansible_collections.lcm.openstack.plugins.module_utils.kube.entrypoint import declared  # pylint: disable=import-outside-toplevel

    jobs = dyn.resources.get(api_version="batch/v1", kind="Job")
    said: List[str] = []
    for obj in objects:
        if obj.get("kind") != "Job" or not set(events(obj)) & EVENTS.get(operation, set()):
            continue
        name = (obj.get("metadata") or {}).get("name", "")
        with answered(caught=compat.ApiException) as unread:
            live = jobs.get(name=name, namespace=namespace).to_dict()
        if unread:
            continue
        if (live.get("status") or {}).get("succeeded"):
            continue
        pods = "; ".join(f"pod {(p.get('metadata') or {}).get('name')} {explain_pod(p)}"
                         for p in pods_of(dyn, namespace, live)) or "no pod yet"
        waits = ", ".join(d.describe() for d in declared(obj))
        said.append(f"Job {name} not complete: {pods}" + (f"; its init container waits for {waits}" if waits else ""))
    return "; ".join(said)
