#!/usr/bin/python
# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# The work is done on the controller by the action plugin of the same name
# (plugins/action/flow_steps.py); this file carries its documentation.

DOCUMENTATION = r"""
module: flow_steps
short_description: Decide the next steps of a flow, each with its reason
version_added: 0.1.0
author:
  - lcm.openstack developers (@lcm-openstack)
description:
  - Takes what a flow playbook read (the service's C(ServiceLifecycle) record,
    the flow's inputs, what Helm says of the release) and returns the steps
    the flow runs, in order, each with its reason, and the steps it leaves
    out, with theirs. The flow playbooks run the steps named in RV(run) and
    decide nothing themselves.
  - C(greenfield) deploys a service that is not there (no record, no state yet,
    C(Removed), no Helm release, or a greenfield flow that did not succeed), and
    does nothing for one that is there.
  - C(update) does nothing when the service is C(Operational) at the version
    asked for and Helm would not change the release, refuses a service with no
    Helm release, and otherwise drains, upgrades, rolls the traffic out and
    tests. A re-run of the same update that had rolled the traffic out does not
    drain again. With O(undo), after a failed upgrade, rollout or test, it rolls
    back to the revision the flow started from.
  - C(rollback) does nothing after a rollback that succeeded when no
    C(to_revision) is given; otherwise it drains, rolls back, rolls the traffic
    out and tests. A re-run of the same rollback that had rolled the traffic out
    after its rollback does not drain again.
  - C(remove) does nothing for a service that is C(Removed) or has neither a
    record nor a Helm release; otherwise it drains and uninstalls.
  - Without traffic (traffic_backend V(none)) the traffic steps are left out.
  - A decision that needs Helm's word and was not given it returns the one step
    C(read_release); the playbook reads the release and asks again with O(release).
  - Runs on the controller only, with no module process; changes nothing.
options:
  flow:
    description: The flow.
    type: str
    required: true
    choices: [greenfield, update, rollback, remove]
  inputs:
    description: The flow's inputs as M(lcm.openstack.flow_inputs) returned them (its registered result).
    type: dict
    required: true
  record:
    description: The service's C(ServiceLifecycle) as M(lcm.openstack.phase_info) returns it
      (one of its RV(lcm.openstack.phase_info#module:lifecycles)); empty when there is none.
    type: dict
    default: {}
  release:
    description:
      - What Helm says of the release, as registered. For C(greenfield) and C(update), the
        result of M(lcm.openstack.helm_release) in check mode (its C(operation) and the
        deployed C(status.revision)); for C(remove), the result of M(lcm.openstack.helm_release_info).
      - A skipped read says nothing. Left out, a decision that needs it returns C(read_release).
    type: dict
  undo:
    description:
      - The flow's steps failed; return the steps that undo them. For C(greenfield), whose
        install or test failed, an uninstall; for C(update), whose upgrade, rollout or test
        failed, a rollback to the revision O(record) says the flow started from.
    type: bool
    default: false
  failed:
    description:
      - A step of the flow failed and nothing put it right; return whether the flow
        ends C(Failed) (the step C(end)). It does, unless the run failed before the
        flow started or the flow's undo ended it already.
      - Takes C(started) (whether the flow started) and C(ended) (whether its undo ended it).
        Not with O(undo).
    type: dict
  backup_ref:
    description: For an C(update)'s O(undo), the backup its upgrade took; the rollback restores
      the database only when there is one and restore_database is set.
    type: str
    default: ''
  strategy:
    description:
      - How an C(update) moves the service, over the flow input C(update_strategy).
      - C(rolling) checks, backs up and expands the database while the old release runs, rolls the
        pods while the traffic flows, then (once no pod of the old release is left) runs the online
        migrations and the contract, and tests; it needs a project that supports rolling upgrades.
      - C(drain) checks, drains, upgrades (the chart's db-sync as the chart defines it), rolls the
        traffic out and tests.
      - Not given, the input's, and without that C(rolling) where the project (by the chart's name)
        supports rolling upgrades, C(drain) otherwise.
    type: str
    choices: [drain, rolling]
attributes:
  action:
    description: Runs on the controller as an action plugin, with no module process.
    support: full
  check_mode:
    support: full
    details: It only reads its arguments; it runs in check mode as it does otherwise.
  diff_mode:
    support: N/A
    details: It changes nothing, so there is nothing to diff.
  platform:
    description: The controller.
    support: full
    platforms: all
extends_documentation_fragment:
  - lcm.openstack.attributes
seealso:
  - module: lcm.openstack.flow_inputs
    description: Checks the inputs this takes.
  - module: lcm.openstack.phase_info
    description: Reads the record this takes.
  - name: The flow tables
    link: https://github.com/lcm-openstack/lcm.openstack/blob/main/docs/design.md#the-flow-tables
    description: Where the decisions live and how the playbooks run them.
"""

EXAMPLES = r"""
- name: Read the service's lifecycle record
  lcm.openstack.phase_info:
    namespace: openstack
    service: keystone
  register: flow_before

- name: Decide
  lcm.openstack.flow_steps:
    flow: remove
    inputs: "{{ flow_inputs }}"
    record: "{{ flow_before.lifecycles | first | default({}) }}"
  register: flow_steps

- name: Uninstall
  ansible.builtin.include_role:
    name: lcm.openstack.uninstall
  when: "'uninstall' in flow_steps.run"
"""

RETURN = r"""
flow:
  description: The flow decided on.
  returned: always
  type: str
  sample: update
run:
  description: The steps to run, in order. Phase types (C(trafficdrain), C(install), C(upgrade),
    C(rollback), C(trafficrollout), C(test), C(uninstall)) and C(read_release), C(nothing),
    C(refuse), C(find_backup), C(start), C(end).
  returned: always
  type: list
  elements: str
  sample: [start, upgrade, trafficrollout, test, end]
steps:
  description: Every step, run or left out, each with its reason in one sentence.
  returned: always
  type: list
  elements: dict
  contains:
    step:
      description: The step.
      type: str
    run:
      description: Whether it runs.
      type: bool
    reason:
      description: Why it runs, or why it is left out.
      type: str
  sample:
    - step: trafficdrain
      run: false
      reason: >-
        this update had rolled the traffic out to the new version already:
        draining it again would only cut the service off
message:
  description: What a C(nothing) or C(refuse) says; empty otherwise.
  returned: always
  type: str
  sample: keystone runs 2025.2 and is Operational, with the same chart and values.
planned:
  description: The phase types the flow's start records as planned.
  returned: always
  type: list
  elements: str
  sample: [trafficdrain, upgrade, trafficrollout, test]
from_revision:
  description: The Helm revision an update starts from (0 otherwise).
  returned: always
  type: int
  sample: 3
rollback:
  description: Where a rollback returns the service; empty without one.
  returned: always
  type: dict
  contains:
    revision:
      description: The Helm revision; 0 for the previous deployed one.
      type: int
    restore:
      description: Whether the database is restored.
      type: bool
    version:
      description: The version the rollback is recorded at; empty for the revision's own.
      type: str
traffic_backend:
  description: The traffic backend the flow's traffic steps check (C(remove)'s uninstall
    checks the Service's own selector when the flow takes no traffic).
  returned: always
  type: str
  sample: service_selector
strategy:
  description: The strategy an C(update) runs (C(rolling) or C(drain)); its reason is the start step's.
  returned: always
  type: str
  sample: rolling
jobs:
  description:
    - The Jobs of an update's C(check), C(expand) (the upgrade phase of a rolling update) and
      C(contract) phases, from the collection's table of OpenStack projects and the flow input
      C(upgrade_commands); each with C(step), C(name), C(command), C(warning_exit_codes),
      C(repeat_exit_codes) and C(attempts), as the phase module takes them.
  returned: always
  type: dict
  sample: {check: [{step: check, name: check, command: [keystone-status, upgrade, check],
           warning_exit_codes: [1], repeat_exit_codes: [], attempts: 1}]}
"""
