# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.flow_inputs: the flow playbooks' inputs checked and typed on
the controller (plugins/module_utils/lifecycle/flow_inputs.py does the work).

An action plugin, not a module: the check needs no module process, and it
reads the inputs by name from the play's variables, as the user set them
(extra-vars, a survey, host vars, a site's block vars), before any default.
"""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import flow_inputs

_ARGS = frozenset(("needs_chart", "needs_version", "defaults"))


class ActionModule(ActionBase):
    """Check each flow input on its own; fail with one line per bad input."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        args = self._task.args
        unknown = sorted(set(args) - _ARGS)
        if unknown:
            raise AnsibleActionFail(f"flow_inputs takes {', '.join(sorted(_ARGS))}, not {', '.join(unknown)}")
        try:
            needs_chart = flow_inputs.boolean(args.get("needs_chart", False))
            needs_version = flow_inputs.boolean(args.get("needs_version", False))
        except flow_inputs.Bad as exc:
            raise AnsibleActionFail(f"needs_chart and needs_version must be {exc}") from None
        defaults = args.get("defaults") or {}
        names = set(flow_inputs.INPUTS) | {"namespace"}
        # Each input as its variable holds it, templated now: a block var
        # such as the site's service: "{{ site_entry.service }}" included.
        raw = {name: self._templar.template(task_vars[name]) for name in names if name in task_vars}
        typed, errors = flow_inputs.check(flow_inputs.read(raw), needs_chart=needs_chart,
                                          needs_version=needs_version, defaults=defaults)
        result["changed"] = False
        if errors:
            result.update(failed=True, msg="\n".join(errors), errors=errors)
        else:
            result["inputs"] = typed
            result["traffic_skipped"] = flow_inputs.traffic_skipped(typed)
            result["release_drift"] = flow_inputs.release_drift(typed)
        return result
