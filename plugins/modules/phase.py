#!/usr/bin/python
# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: phase
short_description: Run one lifecycle phase of an OpenStack service and wait for it
version_added: 0.1.0
author:
  - lcm.openstack developers (@lcm-openstack)
description:
  - Records one run of a phase (install, test, upgrade, rollback, uninstall,
    trafficdrain, trafficrollout) as a C(Phase) resource, renders the objects
    that belong to the phase, applies them with server-side apply, and waits by
    watch until they succeed or fail.
  - The Phase is the controller owner only of what it created for its own run
    and nothing else uses. A Job that a long-running workload of the chart waits
    for (keystone-api's C(DEPENDENCY_JOBS) names keystone-db-sync) is created
    without an owner, so its pods can start again after the Phase is gone; so
    are config objects a workload uses, Helm hooks and keep-policy objects. Each
    object's C(owned) and C(reason) are in the Phase status and in RV(objects_applied).
  - The objects come from the service's chart (C(helm template)), chosen by
    template name (the openstack-helm names by default), by a value naming the
    phase that the chart gates on, or by a C(lifecycle.openstack.org/phases)
    annotation; or from plain manifests. Each phase also takes the Secrets,
    ConfigMaps and ServiceAccounts its pods use.
  - Objects run in waves (config objects first, then the order of the template
    list, then Helm hook weights); a wave starts when the previous one is Current.
  - The same phase run again finds the same Phase. Succeeded means
    C(changed=false); Pending or Running means an earlier run was interrupted,
    and this one attaches to it; Failed means it resumes. A resumed phase keeps
    the work that is still good (a Job that completed or still runs; a Job the
    failed run suspended is resumed) and creates anew only the Job or Pod that
    failed. Run with other inputs, the Failed Phase is deleted, its Jobs with
    it, and the phase runs afresh.
  - A failed phase fails the task with one message naming the object and why,
    and returns the Phase status with C(failed_object), C(reason) and C(log_tail).
  - A Job whose pods keep failing fails the phase once its failed runs reach
    O(failure.threshold), without waiting for the Job's own backoff limit
    (openstack-helm sets 1000); a pod the scheduler cannot place fails it after
    O(failure.unschedulable_grace). The message names the Job, the pod, the
    container, its exit code, reason and termination message.
  - When a phase fails (a failed object, the failure threshold, an unschedulable
    pod, an error or the timeout), its Jobs that have not finished are
    suspended, so nothing keeps running against the database; the Phase records
    them in C(status.stoppedJobs). Running the phase again deletes the Failed
    Phase with the Jobs it owns, replaces the Jobs it made without an owner, and
    starts afresh.
  - Updates the service's C(ServiceLifecycle) record as the phase starts and ends.
  - Needs the CRDs that the C(lcm.openstack.crds) role installs.
options:
  type:
    description: The phase type.
    type: str
    choices: [install, test, upgrade, rollback, uninstall, trafficdrain, trafficrollout, check, contract]
    required: true
  namespace:
    description: The namespace of the Phase and of every object it owns.
    type: str
    required: true
  name:
    description:
      - Name of the Phase. By default C(<release>-<type>-<hash>), where the hash
        covers the type, service, release, target version, typed options and the
        rendered objects (not the chart's location, nor the timeout).
    type: str
  target_version:
    description: The version of the service the phase moves to, recorded in the Phase and the ServiceLifecycle.
    type: str
  release_revision:
    description:
      - The Helm release revision the phase runs against, part of the Phase's
        identity, so the same phase after a rollback (a new revision) runs again
        while a re-run against the same revision resumes or is skipped.
      - By default the release's deployed revision, read from its storage Secret;
        none when the release is not deployed.
    type: int
  source:
    description: Where the phase's objects come from.
    type: dict
    default: {}
    suboptions:
      chart:
        description: A chart directory or archive, C(repo/chart) (after C(helm repo add)), or an C(oci://) reference.
        type: str
      chart_version:
        description: The chart version, for repository and OCI charts.
        type: str
      values:
        description:
          - Chart values. Never stored in the Phase (only their sha256), and passed
            to Helm through a private file. Strings under keys that look like
            credentials are masked in every message.
        type: dict
      values_files:
        description: Values files, applied before O(source.values).
        type: list
        elements: path
        default: []
      selection:
        description:
          - How to choose the chart's objects. V(templates) (the default) takes the
            templates of O(source.templates), or the openstack-helm ones of the phase
            type; V(stage) renders with O(source.stage_value) set to the phase type
            and takes everything; V(annotation) takes objects whose
            C(lifecycle.openstack.org/phases) annotation names the phase type;
            V(manifests) takes O(source.manifests) only.
        type: str
        choices: [templates, stage, annotation, manifests]
      templates:
        description:
          - Template paths in the chart (globs allowed; C(templates/) and C(.yaml) may be
            left out). Each must render at least one object.
        type: list
        elements: str
      stage_value:
        description:
          - The value, as a dotted path, that the chart is rendered with, set to the phase type.
            Charts may gate phase-only templates on it; with O(source.selection=stage) everything
            rendered belongs to the phase.
        type: str
        default: lifecycle.phase
      values_from_release:
        description:
          - Render with the user values of the release's deployed revision, with
            O(source.values) on top. Read from the release's storage Secret, so no
            Helm access to the cluster is needed. A rollback uses it to render its
            restore job as the revision it returned to.
          - When the release has no deployed revision, O(source.values) alone are used.
        type: bool
        default: false
      manifests:
        description: Plain manifests, as objects or as paths of YAML files; added to the chart's objects.
        type: list
        elements: raw
  timeout:
    description: Seconds this run waits for the phase before it is marked Failed.
    type: int
    default: 600
  failure:
    description:
      - When a running phase gives up on its pods before O(timeout). Recorded in
        the Phase's C(spec.failure); not part of the Phase's identity.
    type: dict
    default: {}
    suboptions:
      threshold:
        description:
          - Failed runs of a Job's pods that fail the phase at once, counted as
            the restarts of their containers (C(restartPolicy=OnFailure), as
            openstack-helm runs them) plus the Job's failed pods
            (C(restartPolicy=Never)).
          - The default, 3, lets one or two runs fail on a dependency that is not
            up yet and stops a real fault within about a minute (the kubelet
            waits 10s, then 20s, before a restart).
          - V(0) turns the count off; the Job's own C(backoffLimit) and
            O(timeout) still apply.
        type: int
        default: 3
      unschedulable_grace:
        description:
          - Seconds a pod of the phase may stay unschedulable before the phase
            fails with the scheduler's message, counted from when this run
            first saw it so. Leaves time for an autoscaler or a joining node.
        type: int
        default: 60
  wait:
    description:
      - Wait for the phase to end. With V(false) the Phase is created and its first
        wave applied; a later run with V(true) attaches to it.
    type: bool
    default: true
  state:
    description:
      - V(present) runs the phase. V(absent) deletes the Phase (O(name), or every Phase
        of O(service) and O(type)) and, through garbage collection, the objects it
        owns. What it does not own stays (the Jobs a workload waits for, and the
        objects a workload uses).
    type: str
    choices: [present, absent]
    default: present
  binary_path:
    description: Path of Helm 3 or Helm 4. Defaults to E(HELM_BIN), then C(helm) on PATH.
    type: path
    aliases: [helm_binary]
  upgrade:
    description: Options of an upgrade phase.
    type: dict
    suboptions:
      backup_database:
        description:
          - Run the chart's C(job-db-backup) before the schema changes; without it
            that template is left out of the phase.
          - A chart without that template (the openstack-helm service charts) backs
            up with a Job made from the mariadb chart's backup CronJob instead,
            when O(upgrade.backup.cronjob) names it. That Job runs after the
            phase's config objects and before every other Job of the phase.
          - The backup's name is rendered into the chart as C(lifecycle.backupRef)
            and, once the backup job is Current, recorded in the Phase status as
            C(backupRef) (returned as RV(phase.backup_ref)) for a later rollback.
        type: bool
      backup_timeout:
        description: Seconds the backup may take (the CronJob-made Job's C(activeDeadlineSeconds)).
        type: int
      backup:
        description:
          - The mariadb chart's backup CronJob (C(manifests.cron_job_mariadb_backup),
            C(conf.backup.enabled), with C(manifests.pvc_backup) for its archives) to make
            the backup Job from, when the chart renders no C(job-db-backup) of its own.
          - What the Job was made from is recorded in the Phase status as
            C(backupSource) (returned as RV(phase.backup_source)), for the rollback.
        type: dict
        suboptions:
          cronjob:
            description: The CronJob's name, C(mariadb-backup) in the stock mariadb chart.
            type: str
          namespace:
            description: Its namespace; it must be the phase's own (O(namespace)).
            type: str
          databases:
            description:
              - The databases to back up, all in one Job. Default every database
                the chart's render says the service has, one for each container of
                its rendered C(db-init) Job (a config file option, or a
                C(DB_CONNECTION) Secret), or without that Job the Secrets it renders
                from C(endpoints.oslo_db*).
              - Name them only for a chart whose render cannot say.
            type: list
            elements: str
          database:
            description:
              - One database to back up, added to O(upgrade.backup.databases).
            type: str
          node:
            description: Not used by a backup (see O(rollback.backup.node)).
            type: str
      missing_job:
        description:
          - What to do when O(upgrade.backup_database) is asked and the chart renders no
            C(job-db-backup); V(fail) (the default) refuses before anything
            changes, naming what is missing; V(warn) goes on without the step and
            warns that no backup was taken.
          - Not part of the Phase's identity.
        type: str
        choices: [fail, warn]
      jobs:
        description:
          - The expand Jobs of a rolling update, run instead of the chart's db-sync
            after the backup (the items are as in O(check.jobs)).
          - Left out, the phase runs the chart's db-sync as the chart defines it.
        type: list
        elements: dict
  check:
    description:
      - Options of a check phase, an update's first step.
      - Its Jobs are made from the chart's own db-sync Job at the new release (its
        image, init containers, config, secrets and mounts) with the command
        replaced; the Secrets and ConfigMaps they read are copies the Phase owns,
        so nothing the running service uses changes.
    type: dict
    suboptions:
      jobs:
        description:
          - The Jobs, one a command, as the C(lcm.openstack.flow_steps) module
            returns them from the collection's table of OpenStack projects.
          - Each has C(step) (check, expand, online or contract), C(name) (the
            suffix of the Job's name), C(command) (a list of arguments), and
            optionally C(warning_exit_codes) (exits that pass with a warning, a
            check's 1), C(repeat_exit_codes) (exits that run the Job again, an
            online migration's 1) and C(attempts).
          - Any other non-zero exit fails the Job and the phase, with the
            container's output.
        type: list
        elements: dict
        required: true
  contract:
    description:
      - Options of a contract phase, the end of a rolling update's database work.
      - It first waits until the release's workloads run the new release and no
        pod of the old one is left, then runs the chart's db-sync (a
        post-upgrade job), the online data migrations (again while they report
        more to do) and the contract Jobs, made as in O(check.jobs).
    type: dict
    suboptions:
      jobs:
        description: The online migration and contract Jobs (see O(check.jobs)).
        type: list
        elements: dict
  rollback:
    description: Options of a rollback phase.
    type: dict
    suboptions:
      to_revision:
        description: The Helm revision to return to.
        type: int
      restore_database:
        description:
          - Run the chart's C(job-db-restore) for O(rollback.backup_ref), rendered
            into the chart as C(lifecycle.backupRef); without it that template is
            left out of the phase.
        type: bool
      backup_ref:
        description: The backup an upgrade Phase recorded.
        type: str
      backup:
        description:
          - The mariadb chart's backup CronJob to make the restore Job from, when
            the chart renders no C(job-db-restore) of its own. Give the
            RV(phase.backup_source) the upgrade Phase recorded with O(rollback.backup_ref).
          - The Job restores the newest archive of that backup, found on the
            CronJob's archive volume.
        type: dict
        suboptions:
          cronjob:
            description: The CronJob's name, C(mariadb-backup) in the stock mariadb chart.
            type: str
          namespace:
            description: Its namespace; it must be the phase's own (O(namespace)).
            type: str
          databases:
            description:
              - The databases to restore, all in one Job, each from its newest
                archive of the backup; every archive is found before any is
                restored. Give the ones the upgrade backed up (its
                RV(phase.backup_source)); default every database the chart's
                render says the service has.
            type: list
            elements: str
          database:
            description:
              - One database to restore, added to O(rollback.backup.databases); what
                a C(backupSource) recorded before there were several holds.
            type: str
          node:
            description:
              - The node that took the backup, for archives kept on a node's
                hostPath; the restore runs there.
            type: str
      missing_job:
        description:
          - What to do when O(rollback.restore_database) is asked and the chart renders no
            C(job-db-restore); V(fail) (the default) refuses before anything
            changes, naming what is missing; V(warn) goes on without the step and
            warns that the database was not restored.
          - Not part of the Phase's identity.
        type: str
        choices: [fail, warn]
  uninstall:
    description: Options of an uninstall phase.
    type: dict
    suboptions:
      purge_database:
        description: Drop the service's database (C(job-db-drop)); without it that template is left out.
        type: bool
      keep_history:
        description: Keep the Helm release history.
        type: bool
      missing_job:
        description:
          - What to do when O(uninstall.purge_database) is asked and the chart renders no
            C(job-db-drop); V(fail) (the default) refuses before anything
            changes, naming what is missing; V(warn) goes on without the step and
            warns that the database was not dropped.
          - Not part of the Phase's identity.
        type: str
        choices: [fail, warn]
  test:
    description: Options of a test phase.
    type: dict
    suboptions:
      timeout:
        description: Seconds the tests may take.
        type: int
  traffic:
    description: Options of a trafficdrain or trafficrollout phase.
    type: dict
    suboptions:
      backend:
        description: How traffic is shifted.
        type: str
        choices: [service_selector, ingress_canary, openshift_route]
      steps:
        description: Canary weights, in percent.
        type: list
        elements: int
      drain_grace_seconds:
        description: Seconds to wait for old endpoints to go.
        type: int
requirements:
  - kubernetes >= 29.0.0
  - PyYAML >= 6.0
  - helm 3 or 4, unless O(source.manifests) alone gives the objects

attributes:
  check_mode:
    support: full
    details: The objects are rendered and applied with a server-side dry run; nothing is created or waited on.
  diff_mode:
    support: partial
    details:
      - Each object the phase applies, as it is live and as the phase applies it.
      - The Phase and ServiceLifecycle records are not shown; O(state=absent) returns no diff.

seealso:
  - module: lcm.openstack.phase_info
    description: Lists Phases and ServiceLifecycle records.
  - module: lcm.openstack.traffic
    description: Drains a service's traffic or rolls it out, recorded as a Phase.
  - module: lcm.openstack.helm_release
    description: Brings the service's Helm release to a state.
  - module: lcm.openstack.service_lifecycle
    description: Keeps the ServiceLifecycle record and the flow around the phases.
  - name: Design of lcm.openstack
    link: https://github.com/lcm-openstack/lcm.openstack/blob/main/docs/design.md
    description: How a phase picks its objects, orders them in waves and decides what it owns.
  - name: Permissions
    link: https://github.com/lcm-openstack/lcm.openstack/blob/main/docs/rbac.md
    description: The ClusterRole a phase runs with.

extends_documentation_fragment:
  - lcm.openstack.attributes
  - lcm.openstack.attributes.action_group
  - lcm.openstack.attributes.platform
  - lcm.openstack.service
  - kubernetes.core.k8s_auth_options
notes:
  - Check mode renders the objects, validates them and the Phase with a server-side
    dry run, and reports what would be created; diff mode shows each object before
    and after, with Secret data masked.
"""

EXAMPLES = r"""
- name: Install keystone's database and bootstrap jobs
  lcm.openstack.phase:
    type: install
    service: keystone
    namespace: openstack
    target_version: "2025.1"
    source:
      chart: /srv/charts/keystone
      values_files: [/srv/values/keystone.yaml]

- name: Upgrade, backing up the database first
  lcm.openstack.phase:
    type: upgrade
    service: keystone
    namespace: openstack
    target_version: "2025.2"
    source:
      chart: /srv/charts/keystone
      values: "{{ keystone_values }}"
    upgrade:
      backup_database: true
    timeout: 1800

- name: A phase from a chart that gates its templates on .Values.lifecycle.phase
  lcm.openstack.phase:
    type: rollback
    service: glance
    namespace: openstack
    source:
      chart: oci://registry.example.com/charts/glance
      chart_version: 1.2.3
      selection: stage

- name: Delete every install Phase of keystone, and the Jobs they own (not those keystone-api waits for)
  lcm.openstack.phase:
    type: install
    service: keystone
    namespace: openstack
    state: absent
"""

RETURN = r"""
phase:
  description: The Phase as it ended (or, in check mode, as it would start).
  returned: state=present
  type: dict
  contains:
    name:
      description: Name of the Phase.
      type: str
      sample: keystone-install-1f2e3d4c
    namespace:
      description: Its namespace.
      type: str
      sample: openstack
    type:
      description: The phase type.
      type: str
      sample: install
    state:
      description: One of Pending, Running, Succeeded, Failed.
      type: str
      sample: Succeeded
    message:
      description: One line on where the phase is, or how it ended.
      type: str
      sample: 8 object(s) Current in 6s
    started_at:
      description:
        - When it started, in RFC 3339 to the microsecond (as Kubernetes writes a MicroTime), so that Phases
          of one service that start within the same second still order right.
      type: str
      sample: "2026-11-22T01:26:37.204518Z"
    completed_at:
      description: When it ended, in RFC 3339 to the microsecond.
      type: str
      sample: "2026-11-22T01:26:43.611092Z"
    duration_seconds:
      description: Seconds from start to end.
      type: int
      sample: 6
    release_revision:
      description:
        - The Helm release's revision when the phase was asked for (C(spec.releaseRevision)); for an
          upgrade, the revision it upgrades from, whose database its backup holds. V(null) when no
          release existed.
      type: int
      sample: 1
    spec_hash:
      description: Hash of what the phase is and of the objects it renders; the same hash finds the same Phase.
      type: str
      sample: 0068b180d43819dd
    objects:
      description:
        - Each object of the phase with its state (in kstatus words) and why, and
          whether the Phase owns it (C(owned)) and why (C(reason)).
      type: list
      elements: dict
      sample:
        - kind: Job
          name: keystone-db-sync
          state: Current
          message: 1/1 succeeded
          owned: false
          reason: "created without an owner: Deployment/keystone-api (DEPENDENCY_JOBS) waits for it, so deleting the Phase must leave it"
    counts:
      description:
        - How many of the phase's objects are in each state (kstatus words), and C(total).
        - Empty for a Phase written before the counts were kept.
      type: dict
      sample: {total: 12, Current: 12}
    failed_object:
      description: Kind/name of the object that failed the phase.
      type: str
      returned: when the phase failed
      sample: Job/keystone-db-sync
    reason:
      description: Why it failed, for example BackoffLimitExceeded, FailureThreshold, Unschedulable or Timeout.
      type: str
      returned: when the phase failed
      sample: BackoffLimitExceeded
    log_tail:
      description: The last lines the failing container wrote, credentials masked.
      type: str
      returned: when the phase failed
    stopped_jobs:
      description:
        - The Jobs of the phase that had not finished when it failed, and what
          was done to each. V(Suspended) (the Job controller deleted their
          active pods), or V(NotStopped) with a C(message) saying why.
      type: list
      elements: dict
      returned: when the phase failed
      sample:
        - name: keystone-db-sync
          action: Suspended
          active_pods: 1
    backup_ref:
      description: The database backup an upgrade took, once its backup job is Current.
      type: str
      returned: when an upgrade with O(upgrade.backup_database) took its backup
      sample: keystone-2025-2-5d41402a
    backup_source:
      description:
        - The CronJob the backup Job was made from, its namespace, the databases
          backed up, and, for archives on a node's hostPath, the node that holds
          them. Pass it as O(rollback.backup) with O(rollback.backup_ref).
      type: dict
      returned: when an upgrade took its backup with a Job made from O(upgrade.backup.cronjob)
      sample:
        cronjob: mariadb-backup
        namespace: openstack
        databases: [nova, nova_cell0, nova_cell1]
objects_applied:
  description:
    - What this run did to each object (created, updated, unchanged, replaced or
      shared), whether the Phase owns it (C(owned)) and why (C(reason)).
  returned: state=present
  type: list
  elements: dict
  sample:
    - kind: Job
      name: keystone-db-sync
      action: created
      owned: false
      reason: "created without an owner: Deployment/keystone-api (DEPENDENCY_JOBS) waits for it, so deleting the Phase must leave it"
deleted:
  description: Names of the Phases deleted.
  returned: state=absent
  type: list
  elements: str
  sample: [keystone-install-1f2e3d4c]
"""

from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import (
    auth_argument_spec, source_options, service_argument_spec,
)
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.phase import run_phase
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import PHASE_TYPES, TRAFFIC_BACKENDS

MISSING_JOB = dict(type="str", choices=["fail", "warn"])
BACKUP = dict(type="dict", options=dict(cronjob=dict(type="str"), namespace=dict(type="str"),
                                        databases=dict(type="list", elements="str"),
                                        database=dict(type="str"), node=dict(type="str")))


def argument_spec():
    spec = dict(
        type=dict(type="str", required=True, choices=list(PHASE_TYPES)),
        namespace=dict(type="str", required=True),
        name=dict(type="str"),
        target_version=dict(type="str"),
        release_revision=dict(type="int"),
        source=dict(type="dict", default={}, options=source_options()),
        timeout=dict(type="int", default=600),
        failure=dict(type="dict", default={}, options=dict(
            threshold=dict(type="int", default=3), unschedulable_grace=dict(type="int", default=60))),
        wait=dict(type="bool", default=True),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        binary_path=dict(type="path", aliases=["helm_binary"]),
        upgrade=dict(type="dict", options=dict(
            backup_database=dict(type="bool"), backup_timeout=dict(type="int"), backup=BACKUP,
            missing_job=MISSING_JOB, jobs=dict(type="list", elements="dict"))),
        check=dict(type="dict", options=dict(jobs=dict(type="list", elements="dict", required=True))),
        contract=dict(type="dict", options=dict(jobs=dict(type="list", elements="dict"))),
        rollback=dict(type="dict", options=dict(
            to_revision=dict(type="int"), restore_database=dict(type="bool"), backup_ref=dict(type="str"),
            backup=BACKUP, missing_job=MISSING_JOB)),
        uninstall=dict(type="dict", options=dict(
            purge_database=dict(type="bool"), keep_history=dict(type="bool"), missing_job=MISSING_JOB)),
        test=dict(type="dict", options=dict(timeout=dict(type="int"))),
        traffic=dict(type="dict", options=dict(
            backend=dict(type="str", choices=list(TRAFFIC_BACKENDS)),
            steps=dict(type="list", elements="int"),
            drain_grace_seconds=dict(type="int"))),
    )
    spec.update(service_argument_spec())
    spec.update(auth_argument_spec())
    return spec


def main():
    module = AnsibleK8SModule(argument_spec=argument_spec(), supports_check_mode=True)
    run_phase(module)


if __name__ == "__main__":
    main()
