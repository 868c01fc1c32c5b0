"""plugins/module_utils/adapter/helm_release.py: the module's parameters
become the release request; secret values merge over values."""

from __future__ import annotations

from typing import Any, Dict

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.helm_release import release_request
from ansible_collections.lcm.openstack.plugins.module_utils.helm.release import ReleaseRequest
from ansible_collections.lcm.openstack.plugins.modules import helm_release as module


def _params(**given: Any) -> Dict[str, Any]:
    params = {name: option.get("default") for name, option in module.argument_spec().items()}
    params.update(name="keystone", namespace="openstack", chart="/srv/keystone")
    params.update(given)
    return params


def test_the_specs_defaults_are_the_requests_defaults() -> None:
    """Every default the module documents is the one the engine would take:
    the request is the same whether Ansible filled them in or not."""
    req = release_request(_params())
    assert req == ReleaseRequest(name="keystone", namespace="openstack", chart="/srv/keystone",
                                 values={}, values_files=[], set_values=[])


def test_values_given_are_kept_and_secret_values_merged_over_values() -> None:
    req = release_request(_params(timeout=0, wait=False, server_side=False, history_max=3,
                                  values={"conf": {"keystone": {"DEFAULT": {"debug": True}}}},
                                  secret_values={"endpoints": {"identity": {"auth": {"admin": {"password": "s3cr3t"}}}},
                                                 "conf": {"keystone": {"DEFAULT": {"debug": False}}}}))
    assert (req.timeout, req.wait, req.server_side, req.history_max) == (0, False, False, 3)
    assert req.values == {"conf": {"keystone": {"DEFAULT": {"debug": False}}},
                          "endpoints": {"identity": {"auth": {"admin": {"password": "s3cr3t"}}}}}
