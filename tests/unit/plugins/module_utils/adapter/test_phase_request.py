"""plugins/module_utils/adapter/phase_request.py: the phase module's
parameters become the engine's request, the spec's defaults and values given
alike, never a default written twice."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.phase_request import request_from_params
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.modules import phase as module


def _params(**given: Any) -> Dict[str, Any]:
    """The parameters as Ansible hands them over: every option, the spec's
    default where one is set, None elsewhere."""
    spec = module.argument_spec()
    params = {name: option.get("default") for name, option in spec.items()}
    params["source"] = {name: option.get("default") for name, option in spec["source"]["options"].items()}
    params.update(type="install", service="keystone", namespace="openstack")
    source = given.pop("source", {})
    params["source"].update(source)
    params.update(given)
    return params


def test_the_specs_defaults_reach_the_request() -> None:
    req = request_from_params(_params(source={"chart": "/srv/keystone"}))
    assert (req.release, req.timeout, req.wait, req.target_version) == ("keystone", 600, True, "")
    assert req.source.chart == "/srv/keystone" and req.source.stage_value == "lifecycle.phase"
    assert tuple(req.source.values_files) == () and req.source.values_from_release is False
    assert req.blocks["upgrade"] is None and req.name is None


def test_a_value_given_is_kept_even_when_falsy() -> None:
    req = request_from_params(_params(release="keystone-2", timeout=0, wait=False, target_version="2025.2",
                                      source={"chart": "/srv/keystone", "stage_value": "", "selection": "stage"}))
    assert (req.release, req.timeout, req.wait, req.target_version) == ("keystone-2", 0, False, "2025.2")
    assert req.source.stage_value == "" and req.source.selection == "stage"
    with pytest.raises(InputError, match="timeout must be at least 1 second, not 0"):
        req.validate()


def test_the_blocks_and_the_helm_binary_are_passed_on() -> None:
    req = request_from_params(_params(type="upgrade", upgrade={"backup_database": True}, binary_path="/usr/bin/helm4"))
    assert req.blocks["upgrade"] == {"backup_database": True} and req.helm_binary == "/usr/bin/helm4"
