"""plugins/modules/site_plan.py: its actions are the engine's, and what it
documents returning is what the plan returns."""

from __future__ import annotations

import yaml

from ansible_collections.lcm.openstack.plugins.modules import site_plan as module
from ansible_collections.lcm.openstack.plugins.module_utils.site.chart_graph import SiteGraph
from ansible_collections.lcm.openstack.plugins.module_utils.site.model import ACTIONS, SERVICE_KEYS
from ansible_collections.lcm.openstack.plugins.module_utils.site.plan import site_plan
from support.module_docs import documented_options

DOCS = documented_options(module)
RETURNED = yaml.safe_load(module.RETURN)  # not RETURN: ansible-lint reads that name in a file under plugins/modules as docs
SITE = [{"service": "mariadb", "version": "10.6"},
        {"service": "keystone", "version": "2026.1", "depends_on": ["mariadb>=10.6"], "expected_duration": 300}]


def test_it_plans_the_engines_actions_deploy_by_default() -> None:
    assert DOCS["action"]["choices"] == list(ACTIONS) and DOCS["action"]["default"] == "deploy"
    assert DOCS["services"]["required"] is True and DOCS["external"]["default"] is False


def test_every_key_the_plan_reads_of_a_service_is_documented() -> None:
    described = " ".join(DOCS["services"]["description"])
    assert [key for key in SERVICE_KEYS if f"C({key})" not in described] == []


def test_what_it_documents_returning_is_what_the_plan_returns() -> None:
    result = site_plan(SITE, "deploy", False, lambda namespaces: {})
    assert sorted(RETURNED) == sorted(result)
    assert sorted(RETURNED["services"]["contains"]) == sorted(result["services"][0])
    assert sorted(RETURNED["critical_path"]["contains"]) == sorted(result["critical_path"])
    assert sorted(RETURNED["services"]["sample"][0]) == sorted(result["services"][0])


def test_the_documented_sample_entry_is_one_the_plan_makes() -> None:
    records = {("openstack", "keystone"): {"metadata": {"name": "keystone", "namespace": "openstack"},
                                           "status": {"state": "Operational", "currentVersion": "2025.1"}}}
    # keystone's chart says its db-init waits for mariadb's Service
    charts = SiteGraph(edges={("openstack", "keystone"): {("openstack", "mariadb"): [
        "Job keystone-db-init waits for Service openstack/mariadb (DEPENDENCY_SERVICE)"]}})
    result = site_plan(SITE + [{"service": "placement", "version": "2026.1", "depends_on": ["keystone"]}],
                       "deploy", False, lambda namespaces: records, lambda site: charts)
    keystone = next(s for s in result["services"] if s["service"] == "keystone")
    assert keystone == RETURNED["services"]["sample"][0]
