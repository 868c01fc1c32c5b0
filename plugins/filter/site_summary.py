# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lcm.openstack.site_summary: the table that ends a site run."""

from __future__ import annotations

from typing import Any, Dict

from ansible_collections.lcm.openstack.plugins.module_utils.site.report import summary_lines

DOCUMENTATION = r"""
name: site_summary
short_description: The table that ends a site run
version_added: 0.1.0
author:
  - lcm.openstack developers (@lcm-openstack)
description:
  - Turns the outcome of each service of a site run (playbooks/site.yml,
    playbooks/site_remove.yml) into the lines of one table, in dependency
    order - level, service, flow, result, versions, duration, what it waited
    for - with a line of totals under it.
options:
  _input:
    description:
      - One mapping per service, with the keys service, level, flow, duration, waited and
        waited_for, and what the run saw of its flow - started (whether a flow started),
        failure (why it failed, empty when it did not), ended (the records the calls that end
        a flow returned) and current_version and target_version - from which its result
        (Succeeded, RolledBack, Failed, Nothing to do, ...) and versions are decided.
      - A mapping that carries result, versions and message already is laid out as it is.
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: Summary
  ansible.builtin.debug:
    msg: "{{ results | lcm.openstack.site_summary }}"
"""

RETURN = r"""
_value:
  description: The table's lines.
  type: list
  elements: str
"""


class FilterModule:
    """The site run's summary table."""

    def filters(self) -> Dict[str, Any]:
        return {"site_summary": summary_lines}
