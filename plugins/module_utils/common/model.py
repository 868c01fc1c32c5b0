# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names shared by the phase engine: the lifecycle API, its labels, the phase
types and the templates each phase type takes by default."""

from __future__ import annotations

GROUP = "lifecycle.openstack.org"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
PHASE_KIND = "Phase"
LIFECYCLE_KIND = "ServiceLifecycle"

# Server-side apply field manager: every write the collection makes is owned
# by this name, so `kubectl get -o yaml --show-managed-fields` tells them apart.
FIELD_MANAGER = "lcm.openstack"

LABEL_PHASE = f"{GROUP}/phase"
LABEL_SERVICE = f"{GROUP}/service"
LABEL_TYPE = f"{GROUP}/phase-type"
LABEL_SPEC_HASH = f"{GROUP}/spec-hash"
ANNOTATION_PHASES = f"{GROUP}/phases"

# A ServiceLifecycle deployed by a site run (playbooks/site.yml): the site's
# name, its service's level, the start of the run that last touched it, and
# the seconds its flow is expected to take; the condition its flow sets while
# it waits for its dependencies.
LABEL_SITE = f"{GROUP}/site"
ANNOTATION_SITE_LEVEL = f"{GROUP}/site-level"
ANNOTATION_SITE_RUN = f"{GROUP}/site-run"
# What a service's pods wait for that a flow of the same site run creates beside it (JSON list).
ANNOTATION_SITE_PROVIDED = f"{GROUP}/site-provided"
ANNOTATION_SITE_EXPECTED = f"{GROUP}/site-expected-seconds"
DEPENDENCIES_READY = "DependenciesReady"
# Its reasons when the flow gave up waiting (it did not start): its own
# dependents then give up at once too, rather than wait for their timeout.
DEPENDENCIES_FAILED = ("DependencyLost", "Timeout")

# The flows a ServiceLifecycle records (status.flow.name); here, not in
# lifecycle/flow.py, so that the flow Lease (which every phase takes) does
# not ship the flow record's code with the phase module.
FLOWS = ("greenfield", "update", "rollback", "remove")

PHASE_TYPES = (
    "install", "test", "upgrade", "rollback", "uninstall", "trafficdrain", "trafficrollout", "check", "contract",
)

# The ServiceLifecycle state while a phase of each type runs.
RUNNING_STATE = {
    "install": "Installing",
    "test": "Testing",
    "upgrade": "Upgrading",
    "rollback": "RollingBack",
    "uninstall": "Removing",
    "trafficdrain": "Draining",
    "trafficrollout": "Operational",
    # An update's checks and contract: the service is being upgraded (its
    # checks run before anything changes, its contract after the release moved).
    "check": "Upgrading",
    "contract": "Upgrading",
}

# Phase states (status.state) and object states (kstatus words).
PENDING, RUNNING, SUCCEEDED, FAILED = "Pending", "Running", "Succeeded", "Failed"
PHASE_STATES = (PENDING, RUNNING, SUCCEEDED, FAILED)

# How a traffic phase moves the traffic (traffic/backends.py); a Phase records it.
TRAFFIC_BACKENDS = ("service_selector", "ingress_canary", "openshift_route")

# openstack-helm template names per phase type, as globs on the template path
# inside the chart. Each phase also takes the Secrets and ConfigMaps its
# objects mount or reference (see phase/selection.py). Install runs every Job the
# chart renders (db-init, db-sync, rabbit-init, ks-service/user/endpoints,
# credential-setup, fernet-setup, domain-manage, bootstrap, image-repo-sync
# when the local registry is on, ...) except those of PHASE_ONLY_TEMPLATES.
DEFAULT_TEMPLATES = {
    # Every job-* but PHASE_ONLY_TEMPLATES; the names before the catch-all
    # give the order for a chart that declares no dependencies (see waves).
    "install": [
        "templates/job-credential-setup.yaml",
        "templates/job-fernet-setup.yaml",
        "templates/job-db-init.yaml",
        "templates/job-db-sync.yaml",
        "templates/job-rabbit-init.yaml",
        "templates/job-ks-*.yaml",
        "templates/job-domain-manage.yaml",
        "templates/job-bootstrap.yaml",
        "templates/job-*.yaml",
    ],
    "upgrade": ["templates/job-db-backup.yaml", "templates/job-db-sync.yaml"],
    "rollback": ["templates/job-db-restore.yaml"],
    "uninstall": ["templates/job-db-drop.yaml"],
    "test": ["templates/pod-rally-test.yaml", "templates/pod-*test*.yaml"],
    "trafficdrain": [],
    "trafficrollout": [],
    # The checks are made from the db-sync Job (phase/migration_jobs.py); a
    # contract runs the db-sync itself (a post-upgrade job) before them.
    "check": ["templates/job-db-sync.yaml"],
    "contract": ["templates/job-db-sync.yaml"],
}

# Jobs that only one phase type runs, and install's job-* therefore leaves
# out. keystone's credential-cleanup deletes credentials from the database
# (a pre-delete hook): no phase runs it by default, since uninstall's
# db-drop removes the whole database; pass it in source.templates to run it.
PHASE_ONLY_TEMPLATES = {
    "upgrade": ("templates/job-db-backup.yaml",),
    "rollback": ("templates/job-db-restore.yaml",),
    "uninstall": ("templates/job-db-drop.yaml", "templates/job-credential-cleanup.yaml"),
}

# The service's workloads that a phase of these types waits for, when (and
# only when) the service's Helm release manages them: the phase never changes
# them. install is done when they are Current (its last wave); test runs
# its pods once they are (its first wave after the config objects): a test
# reaches a whole release, and the workloads an update's wait left to it
# (helm/settle.py: they wait for a Service the drain closed) are waited for
# after the rollout.
# Every template: a workload is one by its kind, whatever its file is called
# (openvswitch's templates/daemonset.yaml, mariadb's templates/statefulset.yaml).
WORKLOAD_TEMPLATES = ("*",)
# A contract waits for them first too: the old release's pods must be gone
# before the schema loses what they use (phase/runner.py then waits for the
# last old pod to go, kube/old_pods.py).
RELEASE_WORKLOADS = {"install": WORKLOAD_TEMPLATES, "test": WORKLOAD_TEMPLATES, "contract": WORKLOAD_TEMPLATES}
RELEASE_WORKLOADS_FIRST = ("test", "contract")
OLD_PODS_GONE_FIRST = ("contract",)
# The key a gate-mode drain adds to a Service's selector, so that it selects
# nothing (traffic/gate.py): a Service that carries it is closed.
TRAFFIC_GATE_LABEL = f"{GROUP}/traffic"
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")

# The database jobs that run only when their phase option asks for them:
# phase type -> (option of the type's block, template glob).
DATABASE_JOBS = {
    "upgrade": ("backup_database", "templates/job-db-backup.yaml"),
    "rollback": ("restore_database", "templates/job-db-restore.yaml"),
    "uninstall": ("purge_database", "templates/job-db-drop.yaml"),
}

# Kinds the apiserver refuses to change in place once created: a new run of a
# phase deletes and re-creates them.
IMMUTABLE_KINDS = {("batch/v1", "Job"), ("v1", "Pod")}
