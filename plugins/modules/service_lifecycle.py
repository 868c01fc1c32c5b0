#!/usr/bin/python
# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: service_lifecycle
short_description: Keep the ServiceLifecycle record of an OpenStack service
version_added: 0.1.0
author:
  - lcm.openstack developers (@lcm-openstack)
description:
  - Creates the C(ServiceLifecycle) record of a service, sets the services it
    depends on, sets its state, and starts or ends the record of a flow
    (greenfield, update, rollback, remove).
  - The phase modules update the record as each phase starts and ends; this
    module sets what only a flow knows, such as C(Removed) after a failed
    greenfield or C(Failed) when a rollback could not restore the service.
  - Starting a flow that is still C(Running) with the same name and target
    version (an earlier run was interrupted) continues its record.
  - Returns C(report), the table of the flow's phases with their result and
    duration, which the flow playbooks print at their end.
  - One flow per service at a time. Starting a flow takes the C(coordination.k8s.io)
    Lease C(lcm-flow-<service>) for the playbook run (its host and ansible-playbook's
    process id), and leaves behind a small process that renews it and gives it back
    when the playbook ends; ending the flow gives it back. A flow started while another
    run holds the Lease is refused before anything changes, naming the holder, its
    flow and since when. A Lease not renewed for 60 seconds (its holder's host is
    gone) is taken over, and the Lease records from whom.
  - Needs the CRDs that the C(lcm.openstack.crds) role installs.
options:
  namespace:
    description: The namespace of the service.
    type: str
    required: true
  depends_on:
    description:
      - Services that must be C(Operational) before a flow of this one starts.
        Left unchanged when not given.
      - Each is C(name), C(name>=min_version) or C(namespace/name>=min_version)
        (also C(namespace/name)); without a namespace, the service's own. With a
        minimum, the dependency's C(currentVersion) must be that version or newer,
        numbers compared as integers (V(2025.1) < V(2025.2) < V(2026.1), V(1.9) <
        V(1.10)). The record keeps the elements as given.
    type: list
    elements: str
  require_dependencies:
    description:
      - When a flow starts, check the services of O(depends_on) (or of the record's
        list) first; fail, or with O(dependency_timeout) wait, while one is not
        C(Operational) at its minimum version.
    type: bool
    default: true
  dependency_timeout:
    description:
      - Seconds a flow start waits for its dependencies, so that the services of a
        whole site can run their flows at once (one host a service, the C(free)
        strategy, several processes or AWX slices) and still start in order.
      - V(0) does not wait; a dependency not met fails the start at once, naming
        each and what it is instead.
      - Above 0, the dependencies' records are listed once and watched (no polling)
        until all are met, or the timeout, which fails naming each dependency not
        met and why. A dependency that is C(Failed) or C(Removed) with no flow
        running on it fails the start at once, with its flow's message (see
        O(dependencies_since)).
      - While it waits, the service's own ServiceLifecycle shows what for, in the
        condition C(DependenciesReady), V(False) with a message such as
        C(waiting for keystone (Installing\), mariadb (no ServiceLifecycle in openstack\)),
        set V(True) when the flow starts.
      - The flow Lease is taken, and kept renewed, before the wait.
      - In check mode nothing is waited for; RV(waited_for) says what would be.
    type: int
    default: 0
  create_namespace:
    description:
      - For the start of a flow, make O(namespace) first when it is not there (the greenfield
        flow sets it), so that no task of its own is needed for it.
      - Credentials that may not read namespaces (an account bound only by RoleBindings in
        the namespace, C(docs/rbac.md)) take it to exist; RV(namespace) says so.
    type: bool
    default: false
  removed_with:
    description:
      - For the start of a C(remove) flow, the services that depend on this one and that the
        same run removes too (a site's removal, C(playbooks/site_remove.yml)).
      - A remove flow does not start while a service of its namespace that depends on it is
        C(Operational) or has a flow running; it fails at once naming them, unless they are
        listed here. Those listed are waited for, by watch, until C(Removed), for up to
        O(dependency_timeout) (V(0) - they must be Removed already); one whose own removal
        fails fails this start at once. O(require_dependencies=false) skips all of this.
      - V(*) stands for every service that depends on it (a slice of a site's removal,
        whose other slices remove the rest).
    type: list
    elements: str
    default: []
  site:
    description:
      - The site the service belongs to, as C(playbooks/site.yml) runs it (docs/site.md). It is
        recorded on the ServiceLifecycle as the label C(lifecycle.openstack.org/site) and
        annotations, from which the UpdateStatus reports the site's progress and ETA.
      - Left as they are when not given; a site without O(site.run) keeps the run recorded.
    type: dict
    suboptions:
      name:
        description: The site's name.
        type: str
        required: true
      level:
        description: The service's level in the site's dependency graph (0 depends on nothing of the site).
        type: int
        default: 0
      run:
        description: When the site run that runs this service's flow began, such as V(2026-01-31T12:00:00Z).
        type: str
      expected_duration:
        description: Seconds the service's flow is expected to take, for the site's ETA.
        type: int
        default: 60
      provided:
        description:
          - What the service's pods wait for that a flow of the same site run creates beside it,
            each with C(kind), C(namespace), C(name) and C(service) (C(site_plan)'s C(provided)).
          - Recorded as the annotation C(lifecycle.openstack.org/site-provided). The service's
            phases read it and wait for those objects instead of refusing them as missing.
        type: list
        elements: dict
        default: []
      dependency_versions:
        description:
          - The version this site run brings each dependency to, keyed as O(depends_on) names it
            (C(site_plan)'s C(wait_at)), for example V(keystone) at V(2026.1).
          - A flow's start waits for each such dependency at that version with its flow ended, not
            merely C(Operational) at the version it ran before, so that a site's release upgrade goes
            in order; one whose update the run rolled back fails the start at once.
          - Not recorded; the record keeps O(depends_on) as declared.
        type: dict
        default: {}
  dependencies_since:
    description:
      - A timestamp such as V(2026-01-31T12:00:00Z), written as a record's
        C(startedAt). A dependency that became C(Failed) or C(Removed) before it
        (its last flow or phase completed earlier) is waited for, not given up on.
      - A site run passes its own start, since a service it removed earlier is one
        it is about to deploy again. Once such a dependency fails again after this
        time, the start fails at once.
      - Without it, any C(Failed) or C(Removed) dependency fails a start at once.
    type: str
  lifecycle_state:
    description: Set the state of the service.
    type: str
    choices: [Planning, Installing, Testing, Operational, Draining, Upgrading, RollingBack, Removing, Removed, Failed]
  reason:
    description: Why; recorded as the flow's message when it ends.
    type: str
  flow:
    description: Start or end the record of a flow.
    type: dict
    suboptions:
      name:
        description: The flow.
        type: str
        required: true
        choices: [greenfield, update, rollback, remove]
      action:
        description: Start the flow, or end it with O(flow.result).
        type: str
        required: true
        choices: [start, end]
      planned:
        description: The phase types the flow plans to run, in order.
        type: list
        elements: str
      target_version:
        description: The version the flow moves the service to.
        type: str
      from_revision:
        description:
          - The Helm release revision the service ran when the flow started, for
            an automatic rollback to return to. Kept when an interrupted flow is
            continued.
        type: int
      result:
        description: How the flow ended; required with O(flow.action=end).
        type: str
        choices: [Succeeded, Failed, RolledBack]
      traffic_skipped:
        description:
          - With O(flow.action=start), why the flow takes no traffic step (V(traffic_backend none),
            as M(lcm.openstack.flow_inputs) returns it); empty, it takes them.
          - The traffic phase types (C(trafficdrain), C(trafficrollout)) leave O(flow.planned) and
            are recorded as skipped, with this reason, where they stood; the flow's summary
            shows them.
        type: str
requirements:
  - kubernetes >= 29.0.0
  - PyYAML >= 6.0

attributes:
  check_mode:
    support: full
    details: The flow's Lease is not taken and no dependency is waited for; the record returned is what it would become.
  diff_mode:
    support: full
    details: The record (state, versions, flow), before and after, without its list of phases.

seealso:
  - module: lcm.openstack.phase
    description: Runs one lifecycle phase; it updates the record as the phase starts and ends.
  - module: lcm.openstack.phase_info
    description: Lists Phases and ServiceLifecycle records.
  - module: lcm.openstack.traffic
    description: Its O(lcm.openstack.traffic#module:end_flow) ends a flow as O(flow.action=end) does, in the run of the rollout that is the flow's last step.
  - module: lcm.openstack.site_plan
    description: Plans the flows of a whole site from the records.
  - name: The flows
    link: https://github.com/lcm-openstack/lcm.openstack/blob/main/README.md#the-flows
    description: Greenfield, update, rollback and remove, and the table they end with.
  - name: Running the flows from AWX
    link: https://github.com/lcm-openstack/lcm.openstack/blob/main/docs/awx.md
    description: Job templates, surveys and credentials for the flows.

extends_documentation_fragment:
  - lcm.openstack.attributes
  - lcm.openstack.attributes.action_group
  - lcm.openstack.attributes.platform
  - lcm.openstack.service
  - kubernetes.core.k8s_auth_options
notes:
  - Supports check mode and diff mode.
"""

EXAMPLES = r"""
- name: Start an update of glance, which needs keystone Operational
  lcm.openstack.service_lifecycle:
    service: glance
    namespace: openstack
    depends_on: [keystone]
    flow:
      name: update
      action: start
      planned: [trafficdrain, upgrade, test, trafficrollout]
      target_version: "2025.2"

- name: In a site run, start glance's greenfield once keystone 2025.1 or newer is Operational
  lcm.openstack.service_lifecycle:
    service: glance
    namespace: openstack
    depends_on: ["keystone>=2025.1", "infra/mariadb"]
    dependency_timeout: 1800
    dependencies_since: "{{ site_started_at }}"
    flow:
      name: greenfield
      action: start
      target_version: "2025.1"

- name: The update failed and was rolled back
  lcm.openstack.service_lifecycle:
    service: glance
    namespace: openstack
    lifecycle_state: Operational
    reason: rolled back to revision 3 because the test phase failed
    flow:
      name: update
      action: end
      result: RolledBack
  register: glance_flow

- name: Print the flow's summary
  ansible.builtin.debug:
    msg: "{{ glance_flow.report }}"
"""

RETURN = r"""
lifecycle:
  description: The record after the change.
  returned: always
  type: dict
  contains:
    state:
      description: The service's state.
      type: str
      sample: Operational
    current_version:
      description: The version the service runs.
      type: str
      sample: "2025.2"
    previous_version:
      description: The version before it.
      type: str
      sample: "2025.1"
    depends_on:
      description: The services this one depends on.
      type: list
      elements: str
    flow:
      description:
        - The flow record, with C(phases), one entry per Phase (phase, result, duration_seconds, name).
        - C(skipped), one entry per step the flow did not take (phase, reason).
      type: dict
lease:
  description: What happened to the service's flow Lease, when a flow started or ended.
  returned: when O(flow.action) is given, outside check mode
  type: str
  sample: "keystone: flow lease lcm-flow-keystone taken by awx-job-42/1187"
namespace:
  description:
    - What a flow's start found of O(namespace) with O(create_namespace) - V(created) (in
      check mode - would be), V(present), or V(unreadable) (the credentials may not read
      namespaces; it is taken to exist).
  returned: when a flow starts with O(create_namespace)
  type: str
  sample: created
waited:
  description:
    - Seconds the flow start waited for its dependencies (rounded to 0.1); V(0.0) when
      they were met at once, and in check mode.
  returned: when a flow starts with O(require_dependencies)
  type: float
  sample: 42.3
waited_for:
  description:
    - The dependencies that were not met when the wait began (C(namespace/name) for one
      in another namespace); in check mode, those a start would wait for.
  returned: when a flow starts with O(require_dependencies)
  type: list
  elements: str
  sample: [keystone, mariadb]
report:
  description: The flow's phases as a table, for humans.
  returned: always
  type: str
  sample: |-
    keystone (openstack): update flow Succeeded, 2025.1 -> 2025.2; service Operational
    PHASE           RESULT     DURATION  PHASE RESOURCE
    trafficdrain    Succeeded  1s        keystone-trafficdrain-0a1b2c3d
    upgrade         Succeeded  9s        keystone-upgrade-4e5f6a7b
"""

from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import (
    auth_argument_spec, service_argument_spec,
)
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.service_lifecycle import run_service_lifecycle
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow import FLOW_ACTIONS, FLOW_RESULTS, FLOWS, SERVICE_STATES


def argument_spec():
    spec = dict(
        namespace=dict(type="str", required=True),
        depends_on=dict(type="list", elements="str"),
        require_dependencies=dict(type="bool", default=True),
        dependency_timeout=dict(type="int", default=0),
        dependencies_since=dict(type="str"),
        removed_with=dict(type="list", elements="str", default=[]),
        create_namespace=dict(type="bool", default=False),
        site=dict(type="dict", options=dict(
            name=dict(type="str", required=True),
            level=dict(type="int", default=0),
            run=dict(type="str"),
            expected_duration=dict(type="int", default=60),
            provided=dict(type="list", elements="dict", default=[]),
            dependency_versions=dict(type="dict", default={}),
        )),
        lifecycle_state=dict(type="str", choices=list(SERVICE_STATES)),
        reason=dict(type="str"),
        flow=dict(type="dict", options=dict(
            name=dict(type="str", required=True, choices=list(FLOWS)),
            action=dict(type="str", required=True, choices=list(FLOW_ACTIONS)),
            planned=dict(type="list", elements="str"),
            target_version=dict(type="str"),
            from_revision=dict(type="int"),
            result=dict(type="str", choices=list(FLOW_RESULTS)),
            traffic_skipped=dict(type="str"),
        )),
    )
    spec.update(service_argument_spec())
    spec.update(auth_argument_spec())
    return spec


def main():
    module = AnsibleK8SModule(argument_spec=argument_spec(), supports_check_mode=True)
    run_service_lifecycle(module)


if __name__ == "__main__":
    main()
