"""plugins/module_utils/drift/diff.py: a release's drift as --diff shows it,
credentials masked."""

from __future__ import annotations

import re
from typing import Any, Dict

import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import MASK, Redactor
from ansible_collections.lcm.openstack.plugins.module_utils.drift.diff import release_diff
from ansible_collections.lcm.openstack.plugins.module_utils.drift.model import ObjectDrift, ReleaseDrift

PASSWORD_KEY = "endpoints.identity.auth.admin.password"
DB_KEY = "conf.database (added)"


def drifted() -> ReleaseDrift:
    return ReleaseDrift(
        values=[PASSWORD_KEY, "pod.replicas.api", DB_KEY],
        chart=["keystone-2025.1.0 templates/deployment-api.yaml"],
        values_was={PASSWORD_KEY: "0ld-adm1n-pw", "pod.replicas.api": 2, DB_KEY: None},
        values_wanted={PASSWORD_KEY: "n3w-adm1n-pw", "pod.replicas.api": 3,
                       DB_KEY: {"connection": "mysql+pymysql://keystone:db-pa55@mariadb/keystone",
                                "password": "db-pa55", "max_pool_size": 10}},
        objects=[ObjectDrift("Secret", "keystone-db", "openstack", ["data.password"],
                             was={"data.password": "b2xkLXNlY3JldA=="}, wanted={"data.password": "bmV3LXNlY3JldA=="}),
                 ObjectDrift("Deployment", "keystone-api", "openstack", ["spec.replicas"],
                             was={"spec.replicas": 5}, wanted={"spec.replicas": 2}),
                 ObjectDrift("Service", "keystone-api", "openstack", missing=True)])


def before_values(drift: ReleaseDrift) -> Any:
    return sides(release_diff("keystone", drift, Redactor()))[0]["values"]


def sides(diff: Dict[str, str]) -> Any:
    """Both sides read back; the redactor leaves a masked `password: ...` unquoted, which YAML reads as an alias."""
    def read(text: str) -> Any:
        return yaml.safe_load(re.sub(r": \*{8}$", f": '{MASK}'", text, flags=re.M))
    return read(diff["before"]), read(diff["after"])


def test_the_headers_name_the_release() -> None:
    diff = release_diff("keystone", drifted(), Redactor())
    assert (diff["before_header"], diff["after_header"]) == ("keystone (deployed)", "keystone (asked)")


def test_a_credential_keys_value_is_masked_the_others_shown() -> None:
    before, after = sides(release_diff("keystone", drifted(), Redactor()))
    assert before["values"][PASSWORD_KEY] == MASK and after["values"][PASSWORD_KEY] == MASK
    assert (before["values"]["pod.replicas.api"], after["values"]["pod.replicas.api"]) == (2, 3)


def test_a_mapping_value_is_masked_key_by_key_and_its_connection_strings_password() -> None:
    _before, after = sides(release_diff("keystone", drifted(), Redactor()))
    # A key added is shown by its name, on the after side only.
    assert "conf.database" not in before_values(drifted())
    database = after["values"]["conf.database"]
    assert database["password"] == MASK and database["max_pool_size"] == 10
    assert "db-pa55" not in database["connection"] and database["connection"].startswith("mysql+pymysql://keystone:")


def test_no_credential_is_in_the_text() -> None:
    diff = release_diff("keystone", drifted(), Redactor())
    text = diff["before"] + diff["after"]
    for secret in ("0ld-adm1n-pw", "n3w-adm1n-pw", "db-pa55", "b2xkLXNlY3JldA==", "bmV3LXNlY3JldA=="):
        assert secret not in text


def test_every_field_of_a_secret_is_masked() -> None:
    before, after = sides(release_diff("keystone", drifted(), Redactor()))
    assert before["objects"]["Secret/keystone-db"] == {"data.password": MASK}
    assert after["objects"]["Secret/keystone-db"] == {"data.password": MASK}


def test_objects_are_named_with_each_field_as_it_is_and_as_a_run_makes_it() -> None:
    before, after = sides(release_diff("keystone", drifted(), Redactor()))
    assert before["objects"]["Deployment/keystone-api"] == {"spec.replicas": 5}
    assert after["objects"]["Deployment/keystone-api"] == {"spec.replicas": 2}
    assert (before["objects"]["Service/keystone-api"], after["objects"]["Service/keystone-api"]) == \
        ("(missing)", "(created again)")


def test_the_chart_changes_are_on_both_sides() -> None:
    before, after = sides(release_diff("keystone", drifted(), Redactor()))
    assert before["chart"] == after["chart"] == ["keystone-2025.1.0 templates/deployment-api.yaml"]


def test_a_credential_the_run_knows_is_redacted_under_any_key() -> None:
    redactor = Redactor()
    redactor.add("Xq7-distinctive-value-91")
    drift = ReleaseDrift(values=["conf.banner"], values_was={"conf.banner": "Xq7-distinctive-value-91"},
                         values_wanted={"conf.banner": "hello"})
    diff = release_diff("keystone", drift, redactor)
    assert "Xq7-distinctive-value-91" not in diff["before"] and MASK in diff["before"]
    assert "hello" in diff["after"]


def test_no_drift_is_an_empty_diff() -> None:
    diff = release_diff("keystone", ReleaseDrift(), Redactor())
    assert (diff["before"], diff["after"]) == ("", "")
