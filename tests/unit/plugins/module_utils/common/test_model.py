"""plugins/module_utils/common/model.py: the names and tables every layer
reads hold together: every phase type has a running state and a default
mapping, a database job is a template its phase owns alone, and every name
the collection writes lives under its API group."""

from __future__ import annotations

import fnmatch

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common import model
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow import SERVICE_STATES
from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import TYPE_BLOCKS


def test_every_phase_type_has_a_running_state_of_the_service_and_a_default_mapping() -> None:
    assert set(model.RUNNING_STATE) == set(model.PHASE_TYPES) == set(model.DEFAULT_TEMPLATES)
    assert set(model.RUNNING_STATE.values()) <= set(SERVICE_STATES)


@pytest.mark.parametrize("ptype", sorted(model.DATABASE_JOBS))
def test_a_database_job_is_its_phases_alone_and_switched_by_an_option_of_its_block(ptype: str) -> None:
    option, template = model.DATABASE_JOBS[ptype]
    assert template in model.PHASE_ONLY_TEMPLATES[ptype]
    assert any(fnmatch.fnmatch(template, glob) for glob in model.DEFAULT_TEMPLATES[ptype])
    block, fields = TYPE_BLOCKS[ptype]
    assert block == ptype and option in fields


def test_install_leaves_out_every_template_another_phase_owns_by_name_only() -> None:
    """Install's catch-all job-* would match the other phases' jobs: they are
    left out by PHASE_ONLY_TEMPLATES, which install itself has no entry in."""
    assert "install" not in model.PHASE_ONLY_TEMPLATES
    owned = [t for templates in model.PHASE_ONLY_TEMPLATES.values() for t in templates]
    assert all(fnmatch.fnmatch(t, "templates/job-*.yaml") for t in owned)


def test_the_collections_names_live_under_its_group() -> None:
    assert model.API_VERSION == f"{model.GROUP}/{model.VERSION}"
    for label in (model.LABEL_PHASE, model.LABEL_SERVICE, model.LABEL_TYPE, model.LABEL_SPEC_HASH,
                  model.ANNOTATION_PHASES):
        assert label.startswith(f"{model.GROUP}/")
    assert model.PHASE_STATES == ("Pending", "Running", "Succeeded", "Failed")
    assert set(model.TRAFFIC_BACKENDS) == {"service_selector", "ingress_canary", "openshift_route"}
    assert ("batch/v1", "Job") in model.IMMUTABLE_KINDS
