#!/usr/bin/python
# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# The work is done on the controller by the action plugin of the same name
# (plugins/action/flow_inputs.py); this file carries its documentation.

DOCUMENTATION = r"""
module: flow_inputs
short_description: Check and type the inputs of a flow playbook
version_added: 0.1.0
author:
  - lcm.openstack developers (@lcm-openstack)
description:
  - Reads the flow playbooks' inputs by name from the play's variables
    (extra-vars, an AWX survey, host vars) - service, release,
    openstack_namespace (or namespace), chart, chart_version, values,
    values_files, version, phase_timeout, traffic_backend, traffic_target,
    traffic_mode, backup_database, backup_databases, restore_database, purge_database,
    allow_missing_steps, to_revision, backup_ref, depends_on,
    dependency_timeout, phase_templates, phase_selection - checks each one
    and returns them typed.
  - A bad input fails the task with one line naming it, the value given
    (never for values, which may hold passwords), what is expected and an
    example. Every bad input is reported, one per line.
  - An input left out or empty takes its default; a malformed one never does.
  - V(none) for traffic_backend says the service takes no traffic (a node agent
    such as openvswitch); RV(traffic_skipped) then says why the flows run no
    traffic step.
  - Runs on the controller only, with no module process; changes nothing.
options:
  needs_chart:
    description: chart is required.
    type: bool
    default: false
  needs_version:
    description: version is required.
    type: bool
    default: false
  defaults:
    description: Defaults that replace the documented ones for inputs left out,
      by input name (a site run waits 3600 s for dependencies by default).
    type: dict
    default: {}
attributes:
  action:
    description: Runs on the controller as an action plugin, with no module process.
    support: full
  check_mode:
    support: full
    details: It only reads the play's variables; it runs in check mode as it does otherwise.
  diff_mode:
    support: N/A
    details: It changes nothing, so there is nothing to diff.
  platform:
    description: The controller, where the play's variables are.
    support: full
    platforms: all
extends_documentation_fragment:
  - lcm.openstack.attributes
seealso:
  - module: lcm.openstack.service_lifecycle
    description: Starts the flow once the inputs hold.
  - module: lcm.openstack.site_plan
    description: Plans a whole site, each service's inputs checked by this first.
  - name: The flows' inputs in an AWX survey
    link: https://github.com/lcm-openstack/lcm.openstack/blob/main/docs/awx.md
    description: Each input, its type and an example.
"""

EXAMPLES = r"""
- name: Check the flow's inputs
  lcm.openstack.flow_inputs:
    needs_chart: true
    needs_version: true
  register: flow_inputs
"""

RETURN = r"""
inputs:
  description: Every input, typed, defaults filled in; release defaults to
    service, to_revision is null when not given.
  returned: success
  type: dict
  sample:
    service: keystone
    release: keystone
    openstack_namespace: openstack
    phase_timeout: 600
    to_revision: null
    values: {}
traffic_skipped:
  description:
    - Why the flow takes no traffic step (traffic_backend V(none)); empty when it takes them.
    - The flows leave out their traffic steps on it, and their start records each as
      skipped with this reason.
  returned: success
  type: str
  sample: traffic_backend none
release_drift:
  description:
    - What the flow's Helm release reads of the drift of its objects (M(lcm.openstack.helm_release)'s
      O(lcm.openstack.helm_release#module:drift)) - V(correct) with the input C(drift=correct), which
      applies a drifted release again; V(ignore) otherwise (a drift is reported by the site plan and
      the UpdateStatus, not by each flow).
  returned: success
  type: str
  sample: ignore
errors:
  description: One line per bad input.
  returned: failure
  type: list
  elements: str
  sample:
    - "traffic_backend: got 'istio', expected one of service_selector, ingress_canary, openshift_route, none (for example -e traffic_backend=ingress_canary)"
"""
