"""plugins/module_utils/redact.py: credentials never leave a module in clear text."""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils import render
from ansible_collections.lcm.openstack.plugins.module_utils.redact import MASK, Redactor, mask_secret

FIXTURE = Path(__file__).parent / "fixtures" / "phase" / "rendered_keystone.out"


# -- add_values ------------------------------------------------------------------

def test_values_under_credential_keys_at_any_depth() -> None:
    r = Redactor()
    r.add_values({
        "endpoints": {"oslo_db": {"auth": {"admin": {"username": "root", "password": "R00t-Passw0rd"}}}},
        "conf": {"fernet": {"private_key": "-----BEGIN KEY-----abc"}},
        "secrets": {"tls": {"api": "keystone-tls-api"}},
        "users": [{"name": "svc", "token": "tok-1234-abcd"}],
    })
    text = "db R00t-Passw0rd key -----BEGIN KEY-----abc tls keystone-tls-api tok tok-1234-abcd"
    assert r.redact(text) == f"db {MASK} key {MASK} tls {MASK} tok {MASK}"
    # `auth` is a section (user names, regions), not a credential: only the password goes
    assert r.redact("user root") == "user root"


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
    r.add_values({"password": "abc", "token": "", "secret": True, "keys": None})
    # "abc" and "" are too short; a boolean switch is no secret (and "True" would be masked everywhere)
    assert r.secrets == []
    assert r.redact("abc True") == "abc True"


def test_numbers_under_credential_keys_are_remembered_as_text() -> None:
    r = Redactor()
    r.add_values({"credentials": {"pin": 987654}})
    assert r.redact("pin 987654") == f"pin {MASK}"


@pytest.mark.parametrize("key", ["keystone", "auth", "tls_cert", "monkey", "passage_count", "tokenizer"])
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
    r.add("abcd")
    r.add("abcdefgh")
    assert r.secrets == ["abcdefgh", "abcd"]
    assert r.redact("abcdefgh abcd") == f"{MASK} {MASK}"


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
