#!/usr/bin/python
# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: site_plan
short_description: Plan the flows of a whole site before anything changes
version_added: 0.1.0
author:
  - lcm.openstack developers (@lcm-openstack)
description:
  - Takes the services of a site (the hosts of group C(openstack_services)) and
    returns, per service, the flow a run of the site would start (C(greenfield),
    C(update) or C(nothing); C(remove) or C(nothing) for O(action=remove)) with
    its reason, the levels the flows can run in (dependencies first; dependents
    first for a removal), and the critical path.
  - Changes nothing. The inventory is checked whole before anything is read from
    the cluster. Each mistake fails the task with one line naming the fix. The
    mistakes are a service listed twice in a namespace, a service that depends
    on itself, a dependency that is not in the site, a malformed dependency, a
    cycle (named, C(a -> b -> c -> a)), a minimum version the site does not deploy.
  - The flow of each service is decided from its C(ServiceLifecycle) record,
    the way the flow playbooks decide. A C(greenfield) deploys a service with no
    record, one whose record has no state yet or says C(Removed), and resumes a
    greenfield flow that did not succeed. An C(update) resumes an update or
    rollback flow that is C(Running) or C(Failed), brings back a service that is
    not C(Operational), and moves to another version. Anything else is C(nothing).
    A release that is not what is asked, or whose objects drifted, is read from the release
    itself (O(read_releases)).
  - An update from one OpenStack release (C(YYYY.1) or C(YYYY.2)) to another must be
    one OpenStack supports, N to N+1 or SLURP to SLURP (C(2025.1) to C(2026.1)). Any
    other jump, and any move back, fails the task before anything is read from a
    release, naming each such service, what it runs now and the releases to pass through.
    Versions that are not OpenStack releases (a database's, a node agent's) are not
    checked, and the reason says so.
  - The records are read with one list for a site in one namespace, or one
    cluster-wide list (one list per namespace where the credentials may not list
    cluster-wide). Without the C(ServiceLifecycle) CRD nothing was deployed yet,
    and every service is C(greenfield).
options:
  services:
    description:
      - The services of the site, one entry a host of group C(openstack_services).
      - Each entry takes C(service) (required), C(namespace) (default C(openstack)),
        C(release) (default the service), C(version) (the version it deploys; required
        for O(action=deploy); quote it, YAML reads C(2025.10) as C(2025.1)),
        C(depends_on) and C(expected_duration).
      - C(depends_on) is a list of dependencies, each C(name), C(name>=min_version) or
        C(namespace/name>=min_version); without a namespace the dependency is in the
        service's namespace. Versions compare run by run, numbers as integers
        (C(2025.1 < 2025.2 < 2026.1), C(10.6 < 11)).
      - C(expected_duration) is how many seconds a flow on the service takes (default
        60), the service's weight on the critical path.
      - C(chart), C(chart_version), C(values) and C(values_files) are what the service's
        flow installs. With O(from_charts), each chart is rendered (C(helm template), all at
        once) and the order its pods declare (kubernetes-entrypoint's C(DEPENDENCY_SERVICE),
        C(DEPENDENCY_JOBS), C(DEPENDENCY_DAEMONSET), C(DEPENDENCY_POD_JSON)) becomes
        dependencies between the services that render those objects. C(depends_on) is then
        optional, to add an order the charts do not state or a minimum version.
      - Services whose pods wait for each other both ways (nova and neutron) are planned
        side by side (C(together_with)); their flows start together and the init containers
        order the pods. A cycle of pods, a dependency that no service renders and the
        cluster does not have, and a C(depends_on) against the pods' order are errors.
      - C(drift) (C(correct), C(report) or C(ignore)) and C(drift_ignore) are the service's drift policy
        (see O(read_releases)).
      - Other keys are ignored. Only C(service), C(namespace), C(release), C(version),
        C(depends_on) and C(expected_duration) are returned in the module's arguments
        (values hold passwords).
    type: list
    elements: dict
    required: true
  action:
    description:
      - C(deploy) plans greenfield and update flows to each service's version;
        C(remove) plans removals, dependents first.
    type: str
    choices: [deploy, remove]
    default: deploy
  from_charts:
    description:
      - Render each service's chart and add the dependencies its pods declare (see O(services)).
      - V(false) orders the site by C(depends_on) alone.
    type: bool
    default: true
  binary_path:
    description:
      - The helm binary that renders the charts; default C(HELM_BIN), then C(helm) on the C(PATH).
    type: path
  external:
    description:
      - A dependency on a service that is not in O(services) is deployed by another
        run of the same site (another AWX job slice). It is reported with
        C(external=true), neither ordered nor checked. Otherwise it is an error.
    type: bool
    default: false
  read_releases:
    description:
      - Read each release the ServiceLifecycle records leave as they are (Operational at the version asked),
        and plan what differs (see RV(services[].drift)). The chart and values asked for are compared with the
        deployed revision's (Helm's record, one list for the site's namespaces); a difference plans an
        C(update) at the same version, naming the keys or the chart's files.
      - The release's objects are compared with its manifest, for the fields it sets (one list a kind, then a
        server-side dry run of each object that differs, nothing written). What drifted is planned by the
        service's C(drift) policy, C(correct) (a C(reconcile), the update flow applying the release again),
        C(report) (the default, named in the reason, the flow C(nothing)) or C(ignore) (not read); its
        C(drift_ignore) lists fields left out, each C(path), C(Kind:path) or C(Kind/name:path)
        (C(Deployment:spec.replicas) for a Deployment an HPA scales).
      - V(false) plans from the records alone, by version.
    type: bool
    default: true
  in_run:
    description:
      - The services this run runs, by name; the others of O(services) (left out by C(--limit))
        are there as dependencies only. A removal waits for its dependents among them
        (C(removed_with)). Default, every service of O(services).
    type: list
    elements: str
requirements:
  - kubernetes >= 29.0.0
  - PyYAML >= 6.0

seealso:
  - module: lcm.openstack.service_lifecycle
    description: Keeps the ServiceLifecycle record the plan is decided from.
  - name: A whole site
    link: https://github.com/lcm-openstack/lcm.openstack/blob/main/docs/site.md
    description: How playbooks/site.yml runs the flows of a site in levels.
  - name: A whole site, in the README
    link: https://github.com/lcm-openstack/lcm.openstack/blob/main/README.md#a-whole-site
    description: The example site and its output.

attributes:
  check_mode:
    support: full
    details: The module only reads. In check mode it reports C(changed) when the plan has a flow to run.
  diff_mode:
    support: full
    details: Per service, the values keys, the chart and the objects' fields that differ, as they are and as asked.

extends_documentation_fragment:
  - lcm.openstack.attributes
  - lcm.openstack.attributes.action_group
  - lcm.openstack.attributes.platform
  - kubernetes.core.k8s_auth_options
notes:
  - Supports check mode; the module never changes anything, in check mode or not. In check mode it reports
    C(changed) when the plan has a flow to run, and with C(--diff) shows, per service, the values keys,
    the chart and the objects' fields that differ (credentials and Secret data masked).
"""

EXAMPLES = r"""
- name: Each service of the site, as the plan takes it
  ansible.builtin.set_fact:
    site_services: >-
      {{ site_services | default([]) + [{
           'service': hostvars[item].service | default(item),
           'namespace': hostvars[item].namespace | default('openstack'),
           'release': hostvars[item].release | default(''),
           'version': hostvars[item].version | default(''),
           'depends_on': hostvars[item].depends_on | default([]),
           'expected_duration': hostvars[item].expected_duration | default(60)}] }}
  loop: "{{ groups['openstack_services'] }}"

- name: Plan the site
  lcm.openstack.site_plan:
    services: "{{ site_services }}"
  register: site

- name: Show it
  ansible.builtin.debug:
    msg: "{{ site.summary.splitlines() }}"

- name: Plan what removing these services takes
  lcm.openstack.site_plan:
    action: remove
    services:
      - {service: mariadb, namespace: openstack}
      - {service: keystone, namespace: openstack, depends_on: [mariadb]}
      - {service: placement, namespace: openstack, depends_on: [keystone]}
"""

RETURN = r"""
services:
  description: One entry a service, in plan order (level, then name; highest level first for a removal).
  returned: always
  type: list
  elements: dict
  contains:
    service:
      description: The service; C(namespace/service) when two namespaces of the site have one of that name.
      type: str
    namespace:
      description: Its namespace.
      type: str
    release:
      description: Its Helm release.
      type: str
    level:
      description: 0 without dependencies in the site, else one more than its highest dependency.
      type: int
    flow:
      description:
        - C(greenfield), C(update), C(reconcile), C(remove) or C(nothing).
        - C(reconcile) applies the release again at its version through the update flow, for a service
          whose objects drifted and whose policy is C(drift=correct).
      type: str
    reason:
      description: Why, in one short sentence; for an update, then its strategy and why.
      type: str
    strategy:
      description:
        - For an update, how it moves the service (C(rolling) or C(drain), the host var C(update_strategy),
          by default C(rolling) where the chart's project supports rolling upgrades); '' for any other flow.
        - A strategy the service cannot run (C(rolling) for a project that does not support it) refuses the
          plan before anything is read or written.
      type: str
    current_version:
      description: The version its ServiceLifecycle records ('' without one).
      type: str
    target_version:
      description: The version the site asks for.
      type: str
    state:
      description: The state its ServiceLifecycle records ('' without one).
      type: str
    release_path:
      description:
        - For an update from a recorded version, the upgrade path checked, with C(checked)
          (false when either version is not an OpenStack release), C(supported) and C(reason);
          null for a service deployed anew, removed or left alone.
      type: dict
    depends_on:
      description:
        - Its dependencies, each with C(service), C(namespace), C(min_version) ('' for none), C(external),
          C(derived) (its chart's pods wait for that service's objects) and C(reasons) (a few of those waits).
      type: list
      elements: dict
    wait_for:
      description:
        - The dependencies its flow waits for, as C(depends_on) takes them, before it starts
          (a removal waits for C(dependents) instead); none of the services deployed beside it.
        - Each as declared; the version the run brings it to is in C(wait_at).
      type: list
      elements: str
    wait_at:
      description:
        - The version this run brings each of C(wait_for) to, keyed as C(wait_for) names it, for
          those the run deploys or updates. Its flow waits for each there with its flow ended
          (C(service_lifecycle)'s O(lcm.openstack.service_lifecycle#module:site.dependency_versions)),
          so that a release upgrade goes in order; the plan's AFTER column shows it as C(keystone>=2026.1).
      type: dict
    together_with:
      description: The services whose pods and its own wait for each other both ways; their flows run side by side.
      type: list
      elements: str
    provided:
      description:
        - What its pods wait for that a service deployed beside it creates, each with C(kind),
          C(namespace), C(name) and C(service). Its phases wait for these rather than refuse them.
      type: list
      elements: dict
    dependents:
      description: The services of the site that depend on it.
      type: list
      elements: str
    expected_duration:
      description: Seconds a flow on it takes, as given (default 60).
      type: int
    drift:
      description:
        - How its release differs, for a service the records leave as they are (null otherwise, or
          without O(read_releases)). C(values), the dotted keys that differ; C(chart), what differs of
          the chart (its version, or the files of a chart on disk); C(objects), each object that drifted
          with C(kind), C(name), C(namespace), C(fields) and C(missing); C(policy); C(unread), why the
          release was not compared ('' when it was). No value is ever shown.
      type: dict
    removed_with:
      description:
        - For a C(remove), the services its removal waits for until each is Removed (service_lifecycle's
          O(lcm.openstack.service_lifecycle#module:removed_with)) - its C(dependents) that this run removes too
          (O(in_run)), or C(*) (every one) with O(external=true); empty for any other flow.
      type: list
      elements: str
  sample:
    - service: keystone
      namespace: openstack
      release: keystone
      level: 1
      flow: update
      reason: "version 2025.1 -> 2026.1 (SLURP -> SLURP); rolling: keystone supports rolling upgrades"
      strategy: rolling
      current_version: "2025.1"
      target_version: "2026.1"
      state: Operational
      release_path:
        checked: true
        supported: true
        reason: 2025.1 -> 2026.1 is a supported upgrade (SLURP -> SLURP)
      depends_on:
        - {service: mariadb, namespace: openstack, min_version: "10.6", external: false, derived: true,
           reasons: ["Job keystone-db-init waits for Service openstack/mariadb (DEPENDENCY_SERVICE)"]}
      wait_for: [mariadb>=10.6]
      wait_at: {mariadb: "10.6"}
      together_with: []
      provided: []
      dependents: [placement]
      expected_duration: 300
      removed_with: []
      drift: null
levels:
  description: The services of each level, level 0 first (for a removal the highest level first); a level's flows can run together.
  returned: always
  type: list
  elements: list
  sample: [[mariadb, memcached, rabbitmq], [keystone], [placement]]
critical_path:
  description:
    - The heaviest chain of services that wait on each other, in the order their flows run,
      and its C(duration), the sum of their expected durations; a service with nothing to do weighs 0.
  returned: always
  type: dict
  contains:
    services:
      description: The chain, trimmed of services with nothing to do at either end; empty when nothing is to be done.
      type: list
      elements: str
    duration:
      description: Seconds.
      type: int
  sample: {services: [keystone, placement], duration: 480}
summary:
  description: The plan as a few lines of text, for a playbook to print.
  returned: always
  type: str
  sample: |-
    site plan (deploy): 5 service(s) in 3 level(s); update 2, nothing 3; critical path keystone -> placement (8m00s)
    LEVEL  SERVICE    FLOW     VERSION           REASON
    0      mariadb    nothing  10.6              Operational at 10.6
"""

from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import auth_argument_spec
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.site_plan import run_site_plan
from ansible_collections.lcm.openstack.plugins.module_utils.site.model import ACTIONS


def argument_spec():
    spec = dict(
        services=dict(type="list", elements="dict", required=True),
        action=dict(type="str", choices=list(ACTIONS), default="deploy"),
        external=dict(type="bool", default=False),
        in_run=dict(type="list", elements="str"),
        read_releases=dict(type="bool", default=True),
        from_charts=dict(type="bool", default=True),
        binary_path=dict(type="path"),
    )
    spec.update(auth_argument_spec())
    return spec


def main():
    module = AnsibleK8SModule(argument_spec=argument_spec(), supports_check_mode=True)
    run_site_plan(module)


if __name__ == "__main__":
    main()
