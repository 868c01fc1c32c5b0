"""plugins/module_utils/common/redact.py: credentials never leave a module in clear text."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.helm import render
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import MASK, Redactor, free_text_safe, mask_secret
from support.paths import ROOT, UNIT_FIXTURES

FIXTURE = UNIT_FIXTURES / "phase" / "rendered_keystone.out"
# The shared openstack-helm charts (read only), beside the repository.
CHARTS = ROOT.parent / "shared" / "charts" / "openstack-helm"


# -- add_values ------------------------------------------------------------------

def test_values_right_under_credential_keys_at_any_depth() -> None:
    r = Redactor()
    r.add_values({
        "endpoints": {"oslo_db": {"auth": {"admin": {"username": "root", "password": "R00t-Passw0rd"}}}},
        "conf": {"fernet": {"private_key": "-----BEGIN KEY-----abc"}},
        "secrets": {"tls": {"api": "keystone-tls-api"}},
        "users": [{"name": "svc", "token": "tok-1234-abcd"}],
        "fernet_keys": ["Fernet-Key-0000", "Fernet-Key-1111"],
    })
    text = "db R00t-Passw0rd key -----BEGIN KEY-----abc tok tok-1234-abcd fernet Fernet-Key-0000 Fernet-Key-1111"
    assert r.redact(text) == f"db {MASK} key {MASK} tok {MASK} fernet {MASK} {MASK}"
    # `auth` is a section (user names, regions), not a credential: only the password goes;
    # `secrets` is a section of Secret names (openstack-helm's), and names are no credentials
    assert r.redact("user root, Secret keystone-tls-api") == "user root, Secret keystone-tls-api"


@pytest.mark.parametrize("key", ["password", "PASSWORD", "db_passwd", "admin_pass", "api_token", "client_secret",
                                 "ssh_key", "credentials", "private", "apiKey", "fernet_keys", "privateKey"])
def test_credential_like_keys(key: str) -> None:
    r = Redactor()
    r.add_values({"outer": {key: "hidden-value"}})
    assert r.secrets == ["hidden-value"]


def test_values_under_other_keys_are_not_secrets() -> None:
    r = Redactor()
    r.add_values({"pod": {"replicas": {"api": 3}}, "images": {"pull_policy": "IfNotPresent"},
                  "labels": {"node_selector_value": "enabled"}, "list": ["alpha", "beta"]})
    assert r.secrets == []
    assert r.redact("IfNotPresent enabled alpha") == "IfNotPresent enabled alpha"


def test_keystone_keys_are_not_credential_keys() -> None:
    """'keystone' contains 'key': image tags and config of the keystone chart are no secrets."""
    r = Redactor()
    r.add_values({"images": {"tags": {"keystone_api": "docker.io/openstackhelm/keystone:2024.1-ubuntu_jammy"}},
                  "conf": {"keystone": {"cache": {"enabled": True}, "identity": {"driver": "sql"}}}})
    assert r.secrets == []
    msg = "Job keystone-db-sync: image docker.io/openstackhelm/keystone:2024.1-ubuntu_jammy, Complete=True"
    assert r.redact(msg) == msg


def test_short_values_and_switches_are_not_remembered() -> None:
    r = Redactor()
    r.add_values({"password": "abc", "token": "", "secret": True, "api_key": None})
    # "abc" and "" are too short; a boolean switch is no secret (and "True" would be masked everywhere)
    assert r.secrets == []
    assert r.redact("abc True") == "abc True"


def test_numbers_under_credential_keys_are_remembered_as_text() -> None:
    r = Redactor()
    r.add_values({"credentials": {"admin_pin": 987654}, "admin_token": 98765432})
    assert r.redact("pin 987654, token 98765432") == f"pin 987654, token {MASK}"


@pytest.mark.parametrize("value, free_text", [
    ("password", False), ("keystone", False), ("RegionOne", False), ("changeme", False),  # words
    ("admin", False), ("s3cr3t", False), ("1234567", False),                             # shorter than 8
    ("Passw0rd", True), ("pass-word", True), ("12345678", True),                         # not a word
    ("correcthorsebatterystaple", True),                                                 # longer than a word
])
def test_only_distinctive_values_are_masked_as_free_text(value: str, free_text: bool) -> None:
    assert free_text_safe(value) is free_text
    r = Redactor()
    r.add_values({"password": value})
    assert r.redact(f"the {value} here") == (f"the {MASK} here" if free_text else f"the {value} here")
    # as a field value under its credential key it is masked, whatever it is
    assert r.mask_values({"auth": {"password": value, "username": "admin"}}) == {
        "auth": {"password": MASK, "username": "admin"}}


@pytest.mark.parametrize("key", ["keystone", "auth", "tls_cert", "monkey", "passage_count", "tokenizer",
                                 "credential_setup", "max_token_size", "key", "keys", "node_selector_key",
                                 "topologyKey", "password_policy"])
def test_words_that_merely_contain_a_credential_word_are_not_credential_keys(key: str) -> None:
    assert not Redactor().is_secret_key(key)


def test_custom_key_pattern() -> None:
    r = Redactor(key_pattern=r"^hush$")
    r.add_values({"hush": "quiet-value", "password": "loud-value"})
    assert r.secrets == ["quiet-value"]


# -- add (connection strings) ----------------------------------------------------

@pytest.mark.parametrize("url,password", [
    ("mysql+pymysql://keystone:Ks-Db-Passw0rd@mariadb/keystone", "Ks-Db-Passw0rd"),
    ("rabbit://keystone:Rabbit:With:Colons@rabbitmq:5672/keystone", "Rabbit:With:Colons"),
    ("postgresql://u:p4ssw0rd@db.example:5432/x?sslmode=require", "p4ssw0rd"),
])
def test_add_extracts_the_password_of_a_connection_string(url: str, password: str) -> None:
    r = Redactor()
    r.add(url)
    assert set(r.secrets) == {url, password}
    assert r.redact(f"connect {url}") == f"connect {MASK}"
    assert r.redact(f"auth failed for {password}!") == f"auth failed for {MASK}!"


def test_add_keeps_short_url_passwords_out() -> None:
    r = Redactor()
    r.add("mysql://user:pw@host/db")
    assert r.secrets == ["mysql://user:pw@host/db"]


def test_add_ignores_short_and_non_strings() -> None:
    r = Redactor()
    for value in ("abc", "", None, 12345, ["long-enough"]):
        r.add(value)
    assert r.secrets == []


def test_secrets_longest_first_and_redact_masks_the_whole_secret() -> None:
    r = Redactor()
    r.add("abcd-1234")
    r.add("abcd-1234-efgh")
    assert r.secrets == ["abcd-1234-efgh", "abcd-1234"]
    assert r.redact("abcd-1234-efgh abcd-1234") == f"{MASK} {MASK}"


# -- add_objects -----------------------------------------------------------------

def test_add_objects_remembers_secret_data() -> None:
    encoded = base64.b64encode(b"Decoded-Secret-1").decode()
    r = Redactor()
    r.add_objects([
        {"kind": "Secret", "stringData": {"A": "string-data-value"}, "data": {"B": encoded}},
        {"kind": "ConfigMap", "data": {"C": "configmap-value"}},
        {"kind": "Secret", "data": None, "stringData": None},
        {"kind": "Secret", "data": {"D": "not base64 !!"}},
    ])
    assert set(r.secrets) == {"string-data-value", encoded, "Decoded-Secret-1", "not base64 !!"}
    assert r.redact("configmap-value") == "configmap-value"


def test_add_objects_binary_data_keeps_only_base64() -> None:
    encoded = base64.b64encode(b"\xff\xfe\x00\x01binary").decode()
    r = Redactor()
    r.add_objects([{"kind": "Secret", "data": {"bin": encoded}}])
    assert r.secrets == [encoded]


def test_add_objects_with_the_keystone_fixture() -> None:
    objects = [o.obj for o in render.parse_manifest(FIXTURE.read_text())]
    r = Redactor()
    r.add_objects(objects)
    secrets = set(r.secrets)
    # stringData, and the password inside its connection string
    assert "mysql+pymysql://keystone:Ks-Db-Passw0rd-7f3a@mariadb/keystone" in secrets
    assert "Ks-Db-Passw0rd-7f3a" in secrets
    assert "R00tDbPassw0rd" in secrets
    assert "Rabbit-User-Pw2" in secrets
    # data: base64 and decoded
    assert "QWRtaW4tU2VjcmV0LTQyIQ==" in secrets and "Admin-Secret-42!" in secrets
    assert "Test-User-Password-99" in secrets
    # ConfigMap content is not secret
    assert not any("db_sync" in s for s in secrets)
    log = "pymysql.err.OperationalError: (1045, \"Access denied for user 'keystone' using Ks-Db-Passw0rd-7f3a\")"
    assert "Ks-Db-Passw0rd-7f3a" not in r.redact(log)
    assert MASK in r.redact(log)


# -- redact / redact_deep --------------------------------------------------------

@pytest.mark.parametrize("value", [None, 42, 1.5, True, b"bytes-secret"])
def test_redact_leaves_non_strings(value: Any) -> None:
    r = Redactor()
    r.add("bytes-secret")
    assert r.redact(value) is value


def test_redact_without_secrets_is_identity() -> None:
    assert Redactor().redact("nothing to hide") == "nothing to hide"


def test_redact_deep() -> None:
    r = Redactor()
    r.add("s3cr3t-value")
    data = {"msg": "got s3cr3t-value", "nested": [{"x": "s3cr3t-value"}, 7, None, ["a s3cr3t-value"]],
            "count": 3}
    before = copy.deepcopy(data)
    assert r.redact_deep(data) == {"msg": f"got {MASK}", "nested": [{"x": MASK}, 7, None, [f"a {MASK}"]],
                                   "count": 3}
    assert data == before, "redact_deep must not modify its input"


# -- mask_secret -----------------------------------------------------------------

def test_mask_secret() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
              "data": {"a": "YWJj", "b": "ZGVm"}, "stringData": {"c": "clear"}}
    before = copy.deepcopy(secret)
    masked = mask_secret(secret)
    assert masked["data"] == {"a": MASK, "b": MASK}
    assert masked["stringData"] == {"c": MASK}
    assert masked["metadata"] == {"name": "s"}
    assert secret == before, "mask_secret must not modify its input"


@pytest.mark.parametrize("obj", [
    {"kind": "ConfigMap", "data": {"a": "visible"}},
    {"kind": "Secret", "metadata": {"name": "empty"}},
    {"kind": "Secret", "data": {}},
])
def test_mask_secret_leaves_other_objects(obj: Any) -> None:
    assert mask_secret(obj) == obj


def test_secret_entries_that_only_say_who_and_where_are_not_masked_everywhere() -> None:
    r = Redactor()
    r.add_objects([{"kind": "Secret", "stringData": {
        "OS_USERNAME": "admin", "OS_REGION_NAME": "RegionOne", "DB_HOST": "mariadb",
        "OS_AUTH_URL": "https://svc:Url-Pass-77@keystone:5000/v3", "OS_PASSWORD": "Adm1n-Pass-88",
        "user_password": "User-Pass-99"}}])
    assert set(r.secrets) == {"Url-Pass-77", "Adm1n-Pass-88", "User-Pass-99"}
    assert r.redact("admin in RegionOne via mariadb") == "admin in RegionOne via mariadb"


# -- the keystone chart's default values ------------------------------------------

def _keystone_values() -> Any:
    path = CHARTS / "keystone" / "values.yaml"
    assert path.is_file(), f"the shared openstack-helm charts are expected in {CHARTS}"
    return yaml.safe_load(path.read_text())


def test_the_keystone_chart_defaults_blank_no_ordinary_text() -> None:
    """Its passwords are all literally `password`: no word of a message is masked for it, nor for the
    user names, Secret names, label keys, image names and logging config around them."""
    r = Redactor()
    r.add_values(_keystone_values())
    assert r.secrets == []
    message = ("Job keystone-db-sync: image quay.io/airshipit/keystone:2026.1-ubuntu_noble, Secret "
               "keystone-db-admin, node-role.kubernetes.io/control-plane; the password of user keystone "
               "in RegionOne was refused: check the password in endpoints.oslo_db.auth (root, admin, default, "
               "stdout, internal)")
    assert r.redact(message) == message


def test_the_keystone_chart_defaults_are_masked_as_field_values() -> None:
    values = _keystone_values()
    masked = Redactor().mask_values(values)
    seen = 0
    for service, endpoint in values["endpoints"].items():
        auths = endpoint.get("auth") if isinstance(endpoint, dict) else None
        for user, auth in (auths if isinstance(auths, dict) else {}).items():
            if isinstance(auth, dict) and "password" in auth:
                seen += 1
                assert auth["password"] == "password"
                assert masked["endpoints"][service]["auth"][user]["password"] == MASK
                assert masked["endpoints"][service]["auth"][user]["username"] == auth["username"]
    assert seen >= 6
    assert masked["endpoints"]["identity"]["auth"]["admin"] == dict(values["endpoints"]["identity"]["auth"]["admin"],
                                                                    password=MASK)
    # nothing but credentials changed
    assert masked["secrets"] == values["secrets"] and masked["conf"]["logging"] == values["conf"]["logging"]
    assert masked["pod"]["tolerations"] == values["pod"]["tolerations"]
    assert masked["conf"]["keystone"]["token"] == values["conf"]["keystone"]["token"]


def test_a_real_password_in_the_keystone_values_is_masked_everywhere() -> None:
    values = copy.deepcopy(_keystone_values())
    values["endpoints"]["oslo_db"]["auth"]["keystone"]["password"] = "Ks-Db-9f2e-Passw0rd"
    r = Redactor()
    r.add_values(values)
    assert r.secrets == ["Ks-Db-9f2e-Passw0rd"]
    r.add("mysql+pymysql://keystone:Ks-Db-9f2e-Passw0rd@mariadb.openstack.svc/keystone")
    log = "Access denied: mysql+pymysql://keystone:Ks-Db-9f2e-Passw0rd@mariadb.openstack.svc/keystone"
    assert r.redact(log) == f"Access denied: {MASK}"
    assert r.redact("retrying with Ks-Db-9f2e-Passw0rd") == f"retrying with {MASK}"


# -- credentials by the shape of a value, under any key ------------------------------

CONNECTION = "mysql+pymysql://keystone:Zq7-conn-Pw@mariadb.openstack.svc:3306/keystone"


def test_a_password_in_a_connection_url_under_any_key_is_remembered_and_masked() -> None:
    values = {"conf": {"keystone": {"database": {"connection": CONNECTION}}}}
    r = Redactor()
    r.add_values(values)
    assert r.secrets == ["Zq7-conn-Pw"]  # the password, not the whole URL
    masked = r.mask_values(values)["conf"]["keystone"]["database"]["connection"]
    assert masked == f"mysql+pymysql://keystone:{MASK}@mariadb.openstack.svc:3306/keystone"
    assert r.redact(f"helm upgrade failed: dial {CONNECTION}: refused") == (
        f"helm upgrade failed: dial mysql+pymysql://keystone:{MASK}@mariadb.openstack.svc:3306/keystone: refused")


def test_a_short_or_common_password_in_a_url_is_masked_by_its_shape() -> None:
    """The chart's default is literally `password`: too common to mask as free
    text, but in a URL's userinfo its shape says what it is."""
    r = Redactor()
    url = "mysql+pymysql://keystone:password@mariadb/keystone"
    r.add_values({"conf": {"database": {"connection": url}}})
    assert r.secrets == []
    assert r.redact(url) == f"mysql+pymysql://keystone:{MASK}@mariadb/keystone"
    assert r.redact("the password field is required") == "the password field is required"


@pytest.mark.parametrize("text, masked", [
    ("host=db user=nova password=s3cr3t-Pw dbname=nova", f"host=db user=nova password={MASK} dbname=nova"),
    ("admin_password = Sup3r-Secret-1", f"admin_password = {MASK}"),
    ("https://api/?token=abc123def456&x=1", f"https://api/?token={MASK}&x=1"),
    ("--os-password='quoted secret'", f"--os-password={MASK}"),
    ("memcache_secret_key: 0123456789abcdef", f"memcache_secret_key: {MASK}"),
])
def test_a_credential_named_key_value_inside_text_is_masked(text: str, masked: str) -> None:
    r = Redactor()
    r.add_values({"conf": {"line": text}})
    assert r.redact(text) == masked
    assert r.mask_values({"conf": {"line": text}}) == {"conf": {"line": masked}}


@pytest.mark.parametrize("text", [
    "kind: Secret",
    "secretName: keystone-db-user",
    "[token]\nprovider = fernet",
    "Secret/keystone-fernet-keys kept for the next install",
    "the password is checked by keystone",
    "https://keystone-api.openstack.svc:5000/v3",
])
def test_text_without_a_credential_shape_is_left_alone(text: str) -> None:
    assert Redactor().redact(text) == text


def test_scrub_masks_an_errors_message_and_details_in_place() -> None:
    from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError
    r = Redactor()
    r.add_values({"conf": {"db_password": "Sw0rdf1sh-9"}})
    exc = PhaseError("job failed: login Sw0rdf1sh-9 refused", stderr="Sw0rdf1sh-9", objects=[{"pw": "Sw0rdf1sh-9"}])
    r.scrub(exc)
    assert "Sw0rdf1sh-9" not in str(exc) and "Sw0rdf1sh-9" not in repr(exc.details)
    assert str(exc).startswith("job failed: login ")
