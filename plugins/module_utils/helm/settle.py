# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait, by watch, until a release's objects are ready (kube/waiter.py), as
`helm --wait` would, but naming every object that is not and why
(kube/diagnose.py) when the time is up or one of them fails.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List

from ansible_collections.lcm.openstack.plugins.module_utils.helm import closed
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.history import history_entries, summary
from ansible_collections.lcm.openstack.plugins.module_utils.helm.render import parse_manifest
from ansible_collections.lcm.openstack.plugins.module_utils.kube import diagnose
from ansible_collections.lcm.openstack.plugins.module_utils.kube.tracker import Target
from ansible_collections.lcm.openstack.plugins.module_utils.kube.waiter import wait_for


def command_lines(helm: Helm, req: Any, args: List[str]) -> Any:
    """The progress lines of a changing Helm command, started now: Helm runs
    in its own process, so what it does is not watched; whether it waits is said.
    (Imported here: a run that changes nothing loads none of it.)"""
    from ansible_collections.lcm.openstack.plugins.module_utils.progress.lines import for_run  # pylint: disable=import-outside-toplevel
    lines = for_run(f"{req.name}", helm.redactor.redact)
    waits = bool(req.atomic or req.helm_wait)
    lines.begin(f"helm {args[0]} started, timeout {req.timeout} s" + (", Helm waits for the objects" if waits else ""))
    return lines


def wait_for_release(dyn: Any, helm: Helm, req: Any, history: List[Dict[str, Any]]) -> None:
    """Return once every namespaced object of the release's manifest is ready;
    raise naming those that are not."""
    if not req.wait or req.helm_wait or req.atomic or dyn is None:
        return
    objects = [r for r in parse_manifest(helm.get_manifest(req.name, req.namespace))
               if (r.obj.get("metadata") or {}).get("namespace") in (None, req.namespace)]
    later = closed.left_to_the_test([r.obj for r in objects], req.namespace,
                                    closed.closed_services(dyn, req.namespace))
    targets = []
    for r in objects:
        res = dyn.resources.get(api_version=r.obj["apiVersion"], kind=r.kind)
        if res.namespaced and (r.kind, r.name) not in later:
            targets.append(Target(r.obj["apiVersion"], r.kind, r.name))
    from ansible_collections.lcm.openstack.plugins.module_utils.progress.lines import for_run  # pylint: disable=import-outside-toplevel
    lines = for_run(f"{req.name} revision {history[-1]['revision']}", helm.redactor.redact,
                    time.monotonic() + req.timeout)
    lines.begin(f"waiting for {len(targets)} object(s), timeout {req.timeout} s")
    for why in later.values():
        lines.say(why)
    result = wait_for(dyn, req.namespace, targets, None, req.timeout, on_change=lines.changed if lines.on else None)
    lines.ended(result.states, result.timed_out)
    if result.timed_out or result.failed:
        keys = result.failed or result.pending
        why = "; ".join(diagnose.why(dyn, req.namespace, k, result.states[k], result.objects.get(k))
                        for k in keys)
        verdict = "failed" if result.failed else f"is not ready after {req.timeout}s"
        raise HelmError(helm.redactor.redact(f"release {req.name} revision {history[-1]['revision']} {verdict}: {why}"),
                        status=summary(req.name, req.namespace, history),
                        history=history_entries(history))
