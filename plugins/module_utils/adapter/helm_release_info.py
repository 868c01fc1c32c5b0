# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.helm_release_info: status, history, values and manifest of releases."""

from __future__ import annotations

from typing import Any

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import mask
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.connection import reported
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.helm import helm_cli
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError
from ansible_collections.lcm.openstack.plugins.module_utils.helm.info import release_info


@reported
def run_helm_release_info(module: Any) -> None:
    helm, redactor = helm_cli(module)
    try:
        releases = release_info(helm, module.params["namespace"], module.params.get("name"),
                                module.params.get("get_all_values", False))
    except LcmError as exc:
        mask(module, redactor)
        module.fail_json(msg=redactor.redact(str(exc)), **redactor.redact_deep(dict(exc.details)))
    mask(module, redactor)
    module.exit_json(changed=False, releases=releases)
