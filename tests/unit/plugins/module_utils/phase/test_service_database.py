"""plugins/module_utils/phase/service_database.py: the service's database name, read
from the rendered db-init Job the way db-init reads it, on the real keystone
and placement renders (fixtures/openstack_helm/)."""

from __future__ import annotations

import base64
import copy
from typing import Any, Dict, List

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.phase import service_database
from ansible_collections.lcm.openstack.plugins.module_utils.phase.service_database import DatabaseNotFound
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES / "openstack_helm"


def _objects(chart: str) -> List[Dict[str, Any]]:
    return [d for d in yaml.safe_load_all((FIXTURES / f"{chart}.out").read_text()) if d]


def _get(objects: List[Dict[str, Any]], kind: str, name: str) -> Dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def _conf(objects: List[Dict[str, Any]], chart: str) -> str:
    return base64.b64decode(_get(objects, "Secret", f"{chart}-etc")["data"][f"{chart}.conf"]).decode()


def _set_conf(objects: List[Dict[str, Any]], chart: str, text: str) -> None:
    _get(objects, "Secret", f"{chart}-etc")["data"][f"{chart}.conf"] = base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize("chart", ["keystone", "placement"])
def test_the_database_is_the_path_of_the_connection_db_init_reads(chart: str) -> None:
    objects = _objects(chart)
    assert service_database.databases(objects) == [chart]
    assert service_database.databases(objects, job=f"{chart}-db-init") == [chart]


def test_a_changed_oslo_db_path_is_followed() -> None:
    objects = _objects("keystone")
    text = _conf(objects, "keystone").replace("3306/keystone", "3306/identity?charset=utf8")
    _set_conf(objects, "keystone", text)
    assert service_database.databases(objects) == ["identity"]


def test_every_db_init_container_gives_its_database_once() -> None:
    """nova's db-init has one container per database (nova, nova_api, nova_cell0)."""
    objects = _objects("keystone")
    job = _get(objects, "Job", "keystone-db-init")
    second = copy.deepcopy(job["spec"]["template"]["spec"]["containers"][0])
    second["name"] = "keystone-db-init-1"
    for env in second["env"]:
        if env["name"] == "OPENSTACK_CONFIG_DB_SECTION":
            env["value"] = "api_database"
    job["spec"]["template"]["spec"]["containers"] += [second, copy.deepcopy(second)]
    _set_conf(objects, "keystone", _conf(objects, "keystone")
              + "\n[api_database]\nconnection = mysql+pymysql://u:p@mariadb:3306/keystone_api\n")
    assert service_database.databases(objects) == ["keystone", "keystone_api"]


def test_errors_name_the_place_and_never_the_credentials() -> None:
    objects = _objects("keystone")
    password = "s3cret-Pa55"
    text = _conf(objects, "keystone")
    _set_conf(objects, "keystone", text.replace("3306/keystone", "3306/").replace(":password@", f":{password}@"))
    with pytest.raises(DatabaseNotFound) as err:
        service_database.databases(objects)
    assert "Job keystone-db-init container keystone-db-init-0" in str(err.value)
    assert "names no database in its path" in str(err.value)
    assert password not in str(err.value) and "mysql+pymysql" not in str(err.value)


@pytest.mark.parametrize("how, message", [
    ("no-secret", "the render has no Secret keystone-etc with key keystone.conf"),
    ("no-option", "/etc/keystone/keystone.conf from Secret keystone-etc has no [database] connection"),
    ("emptydir", "/etc/keystone/keystone.conf is mounted from volume etc-service, which is no Secret or ConfigMap"),
    ("unmounted", "no volume is mounted at /etc/keystone/keystone.conf"),
    ("no-section-env", "sets OPENSTACK_CONFIG_FILE without a literal OPENSTACK_CONFIG_DB_SECTION"),
])
def test_a_render_that_does_not_say_is_an_error(how: str, message: str) -> None:
    objects = _objects("keystone")
    container = _get(objects, "Job", "keystone-db-init")["spec"]["template"]["spec"]["containers"][0]
    if how == "no-secret":
        objects = [o for o in objects if o["metadata"]["name"] != "keystone-etc"]
    elif how == "no-option":
        _set_conf(objects, "keystone", _conf(objects, "keystone").replace("\nconnection", "\n#connection"))
    elif how == "emptydir":  # the file's own mount gone, the directory's emptyDir is what db-init sees
        container["volumeMounts"] = [m for m in container["volumeMounts"]
                                     if m["mountPath"] != "/etc/keystone/keystone.conf"]
    elif how == "unmounted":
        container["volumeMounts"] = [m for m in container["volumeMounts"] if not m["mountPath"].startswith("/etc")]
    elif how == "no-section-env":
        container["env"] = [e for e in container["env"] if e["name"] != "OPENSTACK_CONFIG_DB_SECTION"]
    with pytest.raises(DatabaseNotFound) as err:
        service_database.databases(objects)
    assert message in str(err.value)


def test_without_db_init_another_reader_of_the_file_says_it() -> None:
    objects = [o for o in _objects("keystone") if o["metadata"]["name"] != "keystone-db-init"]
    assert service_database.databases(objects) == ["keystone"]  # keystone-credential-cleanup's


def test_a_render_where_nothing_says_asks_for_the_name() -> None:
    objects = [o for o in _objects("keystone")
               if o["metadata"]["name"] not in ("keystone-db-init", "keystone-credential-cleanup")]
    with pytest.raises(DatabaseNotFound) as err:
        service_database.databases(objects)
    assert str(err.value).startswith("no Job of the render says which database the service uses")
    assert "give the database name in the phase's backup options" in str(err.value)
    with pytest.raises(DatabaseNotFound, match="Job keystone-db-sync does not say which database"):
        service_database.databases(_objects("keystone"), job="keystone-db-sync")
