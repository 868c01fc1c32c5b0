#!/usr/bin/python
# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: helm_release
short_description: Install, upgrade, roll back, test or uninstall a Helm release, with Helm 3 or Helm 4
version_added: 0.1.0
author:
  - lcm.openstack developers (@lcm-openstack)
description:
  - Brings one Helm release, the home of one OpenStack service, to a state.
    V(present) installs it, or upgrades it when the chart, the chart version, the
    values or the rendered manifest differ from the deployed revision (no helm-diff
    plugin needed); V(absent) uninstalls it; V(rolledback) returns it to a revision;
    V(tested) runs C(helm test).
  - The Helm CLI is called with argument lists, never through a shell; values are
    passed in private temporary files.
  - After an install, upgrade or rollback, the objects of the release manifest are
    waited on by watch (kstatus rules), and a timeout names every object that is not
    ready and why. O(helm_wait=true) uses Helm's own wait instead.
  - Strings from O(secret_values), values under keys matching O(secret_key_pattern),
    and the data of the chart's Secrets never appear in output, diffs, returned values
    or error messages.
  - One Helm operation per release at a time. Around each Helm command that changes
    the release (install, upgrade, rollback, uninstall; never in check mode), the
    module holds the C(coordination.k8s.io) Lease C(lcm-helm-<name>) in O(namespace)
    for the playbook run, and gives it back when the command ends. A second run on
    the release at the same time fails before it changes anything, naming the holder,
    its operation and since when. Calls of one playbook run are one holder. The Lease
    lasts O(timeout) plus 60 seconds and is renewed while Helm runs, so the Lease of
    a run that was killed expires on its own and is taken over (with a warning).
    Needs get, create and update on C(leases) in O(namespace) (the ClusterRole
    C(lcm-openstack-phase) of the C(lcm.openstack.crds) role).
  - A release stuck in C(pending-*) that no live run holds is reported with the command
    that clears it; it is not cleared silently. One that another live run holds is
    reported as running, naming its holder.
  - A first install finds the objects an earlier install of the release left behind
    (C(helm.sh/resource-policy=keep)). Helm never adopts a hook, so when every install
    hook of the chart is such a kept object, the release is installed without hooks
    and the objects are adopted (RV(adopted)); a kept hook beside hooks that must still
    run is an error that names both, before anything changes.
  - An uninstall that stops in its delete hooks (a hook Job that never finishes holds
    it until O(timeout), and Helm leaves the release C(uninstalling)), or that finds the
    release C(uninstalling) from an earlier run, is retried with C(--no-hooks); the
    hook Jobs it abandoned are deleted, and RV(hooks_skipped) and RV(msg) say so.
options:
  name:
    description: The release name.
    type: str
    required: true
    aliases: [release_name]
  namespace:
    description: The release namespace.
    type: str
    required: true
    aliases: [release_namespace]
  state:
    description:
      - V(present) installs or upgrades. V(absent) uninstalls. V(rolledback) rolls back
        to O(revision), by default the revision the service ran before the current one
        (skipping revisions an earlier rollback abandoned). V(tested) runs the
        chart's tests; the release does not change, so C(changed) is false.
    type: str
    choices: [present, absent, rolledback, tested]
    default: present
  chart:
    description: A chart directory or archive, C(repo/chart) after C(helm repo add), or an C(oci://) reference. Required for V(present).
    type: str
    aliases: [chart_ref]
  chart_version:
    description: The chart version, for repository and OCI charts.
    type: str
  values:
    description: Values, applied after O(values_files).
    type: dict
    default: {}
  secret_values:
    description:
      - Values that are credentials, merged over O(values). Every string in them is
        masked wherever the module prints or returns anything.
    type: dict
    default: {}
  values_files:
    description: Values files, applied in order.
    type: list
    elements: path
    default: []
  set_values:
    description: Values given as C(--set)-style strings.
    type: list
    elements: dict
    default: []
    suboptions:
      value:
        description: C(key=value).
        type: str
        required: true
      value_type:
        description: Which C(--set) flag carries it.
        type: str
        choices: [raw, string, json, file, literal]
        default: raw
  create_namespace:
    description: Create the namespace when installing.
    type: bool
    default: false
  atomic:
    description:
      - Roll back a failed upgrade. C(--atomic) on Helm 3, C(--rollback-on-failure) on
        Helm 4; both make Helm wait, since its rollback follows from its own wait.
    type: bool
    default: false
  wait:
    description: Wait for the release's objects to be ready (or, for V(absent), deleted).
    type: bool
    default: true
  helm_wait:
    description: Let Helm wait (C(--wait)) instead of the collection's watcher.
    type: bool
    default: false
  timeout:
    description: Seconds for Helm's operations and for the wait.
    type: int
    default: 300
  force:
    description: Replace objects that cannot be patched. C(--force) on Helm 3, C(--force-replace) on Helm 4.
    type: bool
    default: false
  reset_values:
    description: Upgrade from the chart's default values, forgetting the release's previous ones.
    type: bool
    default: false
  reuse_values:
    description: Upgrade with the release's previous values, merged with the ones given.
    type: bool
    default: false
  history_max:
    description: Revisions to keep.
    type: int
  description:
    description: A description for the new revision.
    type: str
  revision:
    description:
      - The revision to roll back to.
      - Default, the revision before the current one that a rollback did not abandon
        (after 1, 2, 3 and a rollback of 3 to 2, that is 1).
    type: int
  server_side:
    description:
      - Helm 4 only. V(true) applies the release's objects with server-side apply
        (Helm 4's default for a new release); V(false) merges them on the client
        (C(--server-side=false)), as Helm 3 does.
      - The flow roles set V(false). The traffic roles own the C(track) key of the
        service's Service selector, and a selector is one atomic field for
        server-side apply, so Helm 4's server-side upgrade would fail with a
        conflict on C(.spec.selector).
      - Left unset, Helm decides (C(auto) for upgrades). V(true) with Helm 3 is an error.
    type: bool
  keep_history:
    description: Keep the release history when uninstalling.
    type: bool
    default: false
  disable_jobs:
    description:
      - Install or upgrade the release with every job of the chart switched off, so
        that phases (M(lcm.openstack.phase)) run them. The switches are read from the
        chart itself (C(helm show values)). Every key under C(manifests) whose name
        starts with C(job_) (the openstack-helm convention) is set to V(false) over
        O(values) and O(values_files).
      - The keys switched off are returned as RV(disabled_jobs).
    type: bool
    default: false
  drift:
    description:
      - What a release found as asked (same chart, values and manifest) does when its objects in the
        cluster are not what its manifest sets (a Deployment edited by hand, an object deleted).
      - V(ignore) reads nothing. V(report) compares them, for the fields the manifest sets (one list a kind,
        then a server-side dry run of each object that differs; nothing written), and returns what drifted
        as RV(drift). V(correct) does the same and upgrades the release when something drifted, which
        applies its manifest again.
      - Only with O(state=present).
    type: str
    choices: [ignore, report, correct]
    default: ignore
  drift_ignore:
    description:
      - Fields O(drift) leaves out, each C(path), C(Kind:path) or C(Kind/name:path) (C(spec.replicas),
        C(Deployment/keystone-api:spec.replicas)); a path covers the fields under it.
    type: list
    elements: str
  purge_kept:
    description:
      - With O(state=absent), also delete the objects Helm keeps on uninstall
        (annotated C(helm.sh/resource-policy=keep), such as openstack-helm's fernet and
        credential key Secrets). Their data belongs to the service's database, so purge
        them when the database is dropped.
      - Without it they stay (RV(kept)), and the next install of the release adopts them.
    type: bool
    default: false
requirements:
  - helm 3.8 or newer, or helm 4
  - kubernetes >= 29.0.0
  - PyYAML >= 6.0

attributes:
  check_mode:
    support: full
    details: With O(state=tested), check mode runs no test and returns no test results.
  diff_mode:
    support: partial
    details:
      - With O(state=present), the release's manifest as deployed and as rendered, Secret data masked.
      - The other states return no diff.

seealso:
  - module: lcm.openstack.helm_release_info
    description: Reads the status, history, values and manifest of releases.
  - module: lcm.openstack.phase
    description: Runs a phase's Jobs under a Phase record, beside the release.
  - name: Design of lcm.openstack
    link: https://github.com/lcm-openstack/lcm.openstack/blob/main/docs/design.md
    description: How phases share objects with the Helm release, and waiting by watch.
  - name: Permissions
    link: https://github.com/lcm-openstack/lcm.openstack/blob/main/docs/rbac.md
    description: What the credentials need, the Leases included.

extends_documentation_fragment:
  - lcm.openstack.attributes
  - lcm.openstack.attributes.action_group
  - lcm.openstack.attributes.platform
  - lcm.openstack.helm
  - kubernetes.core.helm_common_options
notes:
  - Check mode changes nothing and returns the operation that would run; diff mode
    shows the rendered manifest against the deployed one, with Secret data masked.
  - The release is read where Helm keeps it, by C(HELM_DRIVER) in the environment
    (set it with the task's C(environment)). Unset, C(secret) or C(secrets) and
    C(configmap) or C(configmaps) are read from the cluster in one request; with
    C(sql) Helm is asked (C(helm history), C(helm get)); C(memory), which keeps
    nothing between two Helm processes, and names Helm does not know are refused.
"""

EXAMPLES = r"""
- name: Install or upgrade keystone
  lcm.openstack.helm_release:
    name: keystone
    namespace: openstack
    chart: /srv/charts/keystone
    values_files: [/srv/values/keystone.yaml]
    secret_values:
      endpoints:
        identity:
          auth:
            admin:
              password: "{{ keystone_admin_password }}"
    atomic: true

- name: Roll keystone back to its first revision
  lcm.openstack.helm_release:
    name: keystone
    namespace: openstack
    state: rolledback
    revision: 1

- name: Run keystone's chart tests
  lcm.openstack.helm_release:
    name: keystone
    namespace: openstack
    state: tested
  register: keystone_tests
"""

RETURN = r"""
operation:
  description: What ran, or in check mode would run.
  returned: always
  type: str
  sample: upgrade
status:
  description: The release's current revision.
  returned: always
  type: dict
  sample:
    name: keystone
    namespace: openstack
    revision: 3
    chart: keystone-0.3.1
    app_version: "2025.1"
    status: deployed
    updated: "2026-11-22T01:49:44.996915223Z"
    description: Upgrade complete
history:
  description: Every revision, oldest first.
  returned: always
  type: list
  elements: dict
  sample:
    - {revision: 1, status: superseded, chart: keystone-0.3.0, app_version: "2025.1", description: Install complete}
command:
  description: The last Helm command run, credentials masked.
  returned: always
  type: str
  sample: helm upgrade keystone /srv/charts/keystone --install --namespace openstack --timeout 300s --values /tmp/lcm-helm-x/values.yaml
rolled_back_to:
  description: The revision the release was rolled back to; unchanged, the revision it already returned to.
  returned: state=rolledback
  type: int
  sample: 1
tests:
  description: Each test pod, its phase, and the log tail of a failed one.
  returned: state=tested
  type: list
  elements: dict
  sample:
    - {name: keystone-test, phase: Succeeded, started_at: "2026-11-22T01:50:12Z", completed_at: "2026-11-22T01:50:14Z"}
drift:
  description:
    - The objects of the release that are not what its manifest sets, each with C(kind), C(name),
      C(namespace), C(fields) (paths; never values) and C(missing).
  returned: state=present, O(drift) other than V(ignore), and the release as asked
  type: list
  elements: dict
  sample:
    - {kind: Deployment, name: keystone-api, namespace: openstack, fields: [spec.replicas], missing: false}
disabled_jobs:
  description: The C(manifests) keys switched off with O(disable_jobs).
  returned: state=present and disable_jobs
  type: list
  elements: str
  sample: [job_bootstrap, job_credential_cleanup, job_credential_setup, job_db_drop, job_db_init, job_db_sync]
adopted:
  description: Kept objects of an earlier install that this install adopted (it ran without hooks).
  returned: when a first install found them
  type: list
  elements: str
  sample: [Secret/keystone-credential-keys, Secret/keystone-fernet-keys]
kept:
  description: Objects the uninstall left in place (C(helm.sh/resource-policy=keep)).
  returned: state=absent and changed, without purge_kept
  type: list
  elements: str
  sample: [Secret/keystone-credential-keys, Secret/keystone-fernet-keys]
purged:
  description: Kept objects deleted with O(purge_kept).
  returned: state=absent and changed
  type: list
  elements: str
hooks_skipped:
  description: The uninstall stopped in its delete hooks and was retried with C(--no-hooks).
  returned: state=absent and changed
  type: bool
msg:
  description: What happened that the other values do not say (an uninstall retried without hooks).
  returned: sometimes
  type: str
stdout:
  description: Helm's standard output, on failure.
  returned: failure
  type: str
stderr:
  description: Helm's standard error, on failure.
  returned: failure
  type: str
"""

from ansible_collections.kubernetes.core.plugins.module_utils.helm import AnsibleHelmModule
from ansible_collections.kubernetes.core.plugins.module_utils.helm_args_common import HELM_AUTH_MUTUALLY_EXCLUSIVE
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import helm_argument_spec
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.helm_release import run_helm_release


def argument_spec():
    spec = helm_argument_spec()
    spec.update(
        name=dict(type="str", required=True, aliases=["release_name"]),
        namespace=dict(type="str", required=True, aliases=["release_namespace"]),
        state=dict(type="str", default="present", choices=["present", "absent", "rolledback", "tested"]),
        chart=dict(type="str", aliases=["chart_ref"]),
        chart_version=dict(type="str"),
        values=dict(type="dict", default={}),
        secret_values=dict(type="dict", default={}, no_log=True),
        values_files=dict(type="list", elements="path", default=[]),
        set_values=dict(type="list", elements="dict", default=[], options=dict(
            value=dict(type="str", required=True),
            value_type=dict(type="str", default="raw", choices=["raw", "string", "json", "file", "literal"]))),
        create_namespace=dict(type="bool", default=False),
        atomic=dict(type="bool", default=False),
        wait=dict(type="bool", default=True),
        helm_wait=dict(type="bool", default=False),
        timeout=dict(type="int", default=300),
        force=dict(type="bool", default=False),
        reset_values=dict(type="bool", default=False),
        reuse_values=dict(type="bool", default=False),
        history_max=dict(type="int"),
        description=dict(type="str"),
        revision=dict(type="int"),
        keep_history=dict(type="bool", default=False),
        server_side=dict(type="bool"),
        disable_jobs=dict(type="bool", default=False),
        drift=dict(type="str", choices=["ignore", "report", "correct"], default="ignore"),
        drift_ignore=dict(type="list", elements="str"),
        purge_kept=dict(type="bool", default=False),
    )
    return spec


def main():
    module = AnsibleHelmModule(
        argument_spec=argument_spec(),
        mutually_exclusive=HELM_AUTH_MUTUALLY_EXCLUSIVE + [("reset_values", "reuse_values")],
        required_if=[("state", "present", ["chart"])],
        supports_check_mode=True,
    )
    run_helm_release(module)


if __name__ == "__main__":
    main()
