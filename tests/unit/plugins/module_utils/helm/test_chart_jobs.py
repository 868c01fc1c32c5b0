"""plugins/module_utils/helm/chart_jobs.py: the job switches read from the
real openstack-helm keystone chart, all of them off for the release."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, List

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.helm import chart_jobs
from ansible_collections.lcm.openstack.plugins.module_utils.helm.chart_files import ChartSource
from ansible_collections.lcm.openstack.plugins.module_utils.helm.chart_jobs import chart_defaults, job_switches, jobs_off
from support.openstack_helm import SOURCE
from support.paths import UNIT_FIXTURES

KEYSTONE_VALUES = SOURCE / "keystone" / "values.yaml"


def test_keystones_own_jobs_are_read_from_its_chart() -> None:
    switches = job_switches(yaml.safe_load(KEYSTONE_VALUES.read_text()))
    # the chart's own jobs, which a list kept in the collection would miss
    assert {"job_credential_setup", "job_fernet_setup", "job_domain_manage", "job_db_sync", "job_bootstrap",
            "job_db_drop", "job_credential_cleanup"} <= set(switches)
    assert switches == sorted(switches) and all(s.startswith("job_") for s in switches)
    assert not any(s.startswith(("deployment_", "service_")) for s in switches)


@pytest.mark.parametrize("defaults", [None, {}, {"manifests": None}, {"manifests": ["job_db_sync"]}])
def test_a_chart_without_switches_has_none(defaults: Any) -> None:
    assert job_switches(defaults) == [] and jobs_off([]) == {}


def test_every_switch_is_turned_off() -> None:
    assert jobs_off(["job_bootstrap", "job_db_sync"]) == {"manifests": {"job_bootstrap": False, "job_db_sync": False}}


def test_the_defaults_are_the_charts_values_yaml_of_the_version_asked() -> None:
    asked: List[List[str]] = []

    def run(args: List[str]) -> Any:
        asked.append(list(args))
        return SimpleNamespace(stdout="manifests:\n  job_db_sync: true\n" if len(asked) == 1 else "- a list\n")
    helm = SimpleNamespace(run=run)
    assert chart_defaults(ChartSource(helm, "/srv/keystone", "2025.1.0")) == {"manifests": {"job_db_sync": True}}
    assert chart_defaults(ChartSource(helm, "openstack-helm/keystone", None)) == {}  # not a mapping: no defaults
    assert asked == [["show", "values", "/srv/keystone", "--version", "2025.1.0"],
                     ["show", "values", "openstack-helm/keystone"]]


def test_the_job_switches_are_the_charts_own_job_keys() -> None:
    switches = chart_jobs.job_switches(yaml.safe_load((UNIT_FIXTURES / "release" / "chart_values.yaml").read_text()))
    assert switches == ["job_bootstrap", "job_credential_cleanup", "job_credential_setup", "job_db_drop",
                        "job_db_init", "job_db_sync", "job_fernet_setup"]
    assert chart_jobs.jobs_off(switches)["manifests"] == {k: False for k in switches}
    assert chart_jobs.job_switches({"images": {}}) == [] and chart_jobs.jobs_off([]) == {}
