# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.flow_steps: a flow's next steps on the controller
(plugins/module_utils/adapter/flow_steps.py; plugins/module_utils/flows/ decides).

An action plugin, not a module: the decision reads only what the playbook
read already (the record, Helm's preview), and needs no module process.
"""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.flow_steps import BadArguments, flow_steps


class ActionModule(ActionBase):
    """The Plan of a flow: which steps run, each with its reason."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        try:
            plan = flow_steps(self._task.args)
        except BadArguments as exc:
            raise AnsibleActionFail(str(exc)) from None
        result.update(changed=False, **plan)
        return result
