#!/usr/bin/python
# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: update_status
short_description: Keep the UpdateStatus singleton and report how the updates go
version_added: 0.1.0
author:
  - lcm.openstack developers (@lcm-openstack)
description:
  - Computes the status of every OpenStack service that has a C(ServiceLifecycle)
    (its assessment, current phase, versions, completion, estimated completion and
    phases) and insights derived from the cluster (pods not Ready or crash-looping,
    Deployments not Available, failed or slow Jobs, failed or overdue Phases, Helm
    releases stuck in C(pending-*), Operational services without endpoints, upgrades
    without a database backup, objects of a release at rest that drifted from its
    deployed revision).
  - Writes it to the cluster-scoped C(UpdateStatus) named C(cluster) with server-side
    apply, only when something other than the time changed; an insight keeps its
    C(startedAt) while it stays active and goes when it is no longer produced.
  - Returns the status and RV(report), a text report in the manner of
    C(oc adm upgrade status).
  - Needs the CRDs that the C(lcm.openstack.crds) role installs, and the ClusterRole
    C(lcm-openstack-update-status) it installs, bound with a ClusterRoleBinding. The
    objects of each namespace with a service are read with the rights the
    credentials have there; a namespace they may not read keeps the entries it had
    (docs/rbac.md).
  - Drift is read here only, not by the refresh each phase makes; a release whose
    drift could not be read keeps the drift insights it had, with a warning.
  - The estimate and the assessment rules are in C(docs/update-status.md).
options:
  details:
    description:
      - How much the report shows. V(none), the summary and the health table;
        V(phases), a table of the phases too; V(health), each insight's description
        and reference; V(all), both.
    type: str
    choices: [none, phases, health, all]
    default: none
  pod_unready_minutes:
    description: Minutes a pod may stay not Ready before it is an insight.
    type: int
    default: 5
  job_expected_seconds:
    description:
      - Seconds a Job is expected to run, unless its annotation
        C(lifecycle.openstack.org/expected-duration) says otherwise; longer is an insight.
    type: int
    default: 600
  stall_margin_seconds:
    description: Seconds past its estimate after which a Progressing-Slow update is Stalled.
    type: int
    default: 600
requirements:
  - kubernetes >= 29.0.0
  - PyYAML >= 6.0

attributes:
  check_mode:
    support: full
    details: The status and the report are computed; nothing is written.
  diff_mode:
    support: none

seealso:
  - module: lcm.openstack.phase_info
    description: Lists Phases and ServiceLifecycle records.
  - module: lcm.openstack.service_lifecycle
    description: Keeps the ServiceLifecycle records the status is computed from.
  - name: Update status
    link: https://github.com/lcm-openstack/lcm.openstack/blob/main/docs/update-status.md
    description: The assessment rules, the estimate and the insights.
  - name: Permissions
    link: https://github.com/lcm-openstack/lcm.openstack/blob/main/docs/rbac.md
    description: The ClusterRole the status is read with.

extends_documentation_fragment:
  - lcm.openstack.attributes
  - lcm.openstack.attributes.action_group
  - lcm.openstack.attributes.platform
  - kubernetes.core.k8s_auth_options
notes:
  - Supports check mode (computes and reports, writes nothing). The status is the
    module's only write; there is nothing to diff beyond RV(update_status).
"""

EXAMPLES = r"""
- name: Refresh the update status and print the report
  lcm.openstack.update_status:
    details: all
  register: status

- name: Show it
  ansible.builtin.debug:
    msg: "{{ status.report_lines }}"

- name: Fail when a service is Stalled
  ansible.builtin.assert:
    that: status.update_status.services | selectattr('assessment', 'equalto', 'Stalled') | list | length == 0
"""

RETURN = r"""
update_status:
  description: The status of the UpdateStatus singleton, as written (Kubernetes field names).
  returned: always
  type: dict
  contains:
    conditions:
      description: The C(Updating) condition.
      type: list
      elements: dict
    services:
      description: One entry per ServiceLifecycle.
      type: list
      elements: dict
      sample:
        - name: keystone
          namespace: openstack
          assessment: Progressing
          currentPhase: upgrade
          versions: {previous: "2025.1", target: "2025.2"}
          completion: 25
    insights:
      description: What is wrong, each with its scope, impact and remediation.
      type: list
      elements: dict
report:
  description: The report for humans.
  returned: always
  type: str
  sample: No service is updating.
report_lines:
  description: RV(report), line by line, for C(ansible.builtin.debug).
  returned: always
  type: list
  elements: str
"""

from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import auth_argument_spec
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.update_status import run_update_status
from ansible_collections.lcm.openstack.plugins.module_utils.updatestatus.report import DETAILS


def argument_spec():
    spec = dict(
        details=dict(type="str", default="none", choices=list(DETAILS)),
        pod_unready_minutes=dict(type="int", default=5),
        job_expected_seconds=dict(type="int", default=600),
        stall_margin_seconds=dict(type="int", default=600),
    )
    spec.update(auth_argument_spec())
    return spec


def main():
    module = AnsibleK8SModule(argument_spec=argument_spec(), supports_check_mode=True)
    run_update_status(module)


if __name__ == "__main__":
    main()
