"""plugins/module_utils/adapter/traffic.py: the parameters Ansible echoes back
carry no credential of a check."""

from __future__ import annotations

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.traffic import mask_params
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import MASK, Redactor


def test_the_echoed_parameters_mask_the_check_credentials_as_field_values() -> None:
    params = {"action": "rollout", "check": {
        "url": "http://admin:admin@keystone/v3",  # short and a word: not masked as free text, masked here
        "source": {"chart": "/srv/keystone", "values": {"endpoints": {"identity": {"auth": {"admin": {
            "username": "admin", "password": "password"}}}}}}}}
    mask_params(params, Redactor())
    assert params["check"]["url"] == "http://admin:********@keystone/v3"
    assert params["check"]["source"]["values"]["endpoints"]["identity"]["auth"]["admin"] == {
        "username": "admin", "password": MASK}
    assert params["check"]["source"]["chart"] == "/srv/keystone" and params["action"] == "rollout"
