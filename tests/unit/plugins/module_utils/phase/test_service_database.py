"""plugins/module_utils/phase/service_database.py: every database of a service, read
from its render the way db-init reads it: on excerpts of the real nova, neutron
and keystone renders with fake passwords (fixtures/service_database/), and on
the whole keystone and placement renders (fixtures/openstack_helm/)."""

from __future__ import annotations

import base64
import copy
from typing import Any, Dict, List, Optional

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.phase import service_database
from ansible_collections.lcm.openstack.plugins.module_utils.phase.service_database import DatabaseNotFound
from support.paths import UNIT_FIXTURES

NOVA = ["nova", "nova_cell0", "nova_cell1"]


def _objects(name: str) -> List[Dict[str, Any]]:
    """fixtures/<name>.out: the render's objects."""
    return [d for d in yaml.safe_load_all((UNIT_FIXTURES / f"{name}.out").read_text()) if d]


def _get(objects: List[Dict[str, Any]], kind: str, name: str) -> Dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def _text(objects: List[Dict[str, Any]], secret: str, key: str) -> str:
    return base64.b64decode(_get(objects, "Secret", secret)["data"][key]).decode()


def _set(objects: List[Dict[str, Any]], secret: str, key: str, text: str) -> None:
    _get(objects, "Secret", secret)["data"][key] = base64.b64encode(text.encode()).decode()


def _container(objects: List[Dict[str, Any]], job: str, index: int = 0) -> Dict[str, Any]:
    return _get(objects, "Job", job)["spec"]["template"]["spec"]["containers"][index]


def _error(objects: List[Dict[str, Any]], **kwargs: Any) -> str:
    with pytest.raises(DatabaseNotFound) as err:
        service_database.databases(objects, **kwargs)
    return str(err.value)


def _no_credentials(message: str) -> None:
    """No password, URL or host of a connection in `message`."""
    for text in ("fake-", "-pw", "password", "mysql+pymysql", "://", "@mariadb", "3306"):
        assert text not in message, message


@pytest.mark.parametrize("fixture, expected", [
    ("service_database/nova", NOVA),
    ("service_database/neutron", ["neutron"]),
    ("service_database/keystone", ["keystone"]),
    ("openstack_helm/keystone", ["keystone"]),
    ("openstack_helm/placement", ["placement"]),
])
def test_every_database_db_init_creates_is_found(fixture: str, expected: List[str]) -> None:
    """nova's db-init has three containers: the API database and cell1 from
    nova.conf, cell0 from the nova-db-cell0-user Secret (helm-toolkit's secret kind)."""
    objects = _objects(fixture)
    assert service_database.databases(objects) == expected
    assert service_database.databases(objects, job=f"{expected[0]}-db-init") == expected


@pytest.mark.parametrize("fixture, expected", [
    ("service_database/nova", NOVA), ("service_database/neutron", ["neutron"]),
    ("openstack_helm/keystone", ["keystone"]), ("openstack_helm/placement", ["placement"]),
])
def test_without_jobs_the_secrets_rendered_from_endpoints_say_the_same(fixture: str, expected: List[str]) -> None:
    """A rollback renders the deployed release, whose jobs are switched off:
    the Secrets of endpoints.oslo_db* give the same databases."""
    objects = [o for o in _objects(fixture) if o["kind"] != "Job"]
    assert sorted(service_database.databases(objects)) == expected


def test_the_cell0_database_comes_from_its_secret_and_follows_it() -> None:
    objects = _objects("service_database/nova")
    text = _text(objects, "nova-db-cell0-user", "DB_CONNECTION").replace("/nova_cell0", "/cell_zero?charset=utf8")
    _set(objects, "nova-db-cell0-user", "DB_CONNECTION", text)
    assert service_database.databases(objects) == ["nova", "cell_zero", "nova_cell1"]


def test_a_secret_the_render_lacks_is_read_from_the_cluster() -> None:
    objects = _objects("service_database/nova")
    secret = _get(objects, "Secret", "nova-db-cell0-user")
    objects.remove(secret)
    message = _error(objects)
    assert message.startswith("Job nova-db-init container nova-db-init-1: the render has no Secret nova-db-cell0-user")
    assert "manifests.secret_db" in message
    reads: List[str] = []

    def get(api_version: str, kind: str, name: str) -> Optional[Dict[str, Any]]:
        reads.append(f"{api_version} {kind} {name}")
        return copy.deepcopy(secret) if name == secret["metadata"]["name"] else None

    assert service_database.databases(objects, get=get) == NOVA
    assert reads == ["v1 Secret nova-db-cell0-user"]
    assert "nor has the cluster" in _error(objects, get=lambda *_args: None)


def test_a_changed_oslo_db_path_is_followed() -> None:
    objects = _objects("openstack_helm/keystone")
    text = _text(objects, "keystone-etc", "keystone.conf").replace("3306/keystone", "3306/identity?charset=utf8")
    _set(objects, "keystone-etc", "keystone.conf", text)
    assert service_database.databases(objects) == ["identity"]


def test_containers_of_one_database_give_it_once() -> None:
    objects = _objects("service_database/keystone")
    containers = _get(objects, "Job", "keystone-db-init")["spec"]["template"]["spec"]["containers"]
    containers.append(copy.deepcopy(containers[0]))
    assert service_database.databases(objects) == ["keystone"]


def test_a_literal_db_connection_value_is_read_too() -> None:
    objects = _objects("service_database/neutron")
    container = _container(objects, "neutron-db-init")
    container["env"] = [e for e in container["env"] if not e["name"].startswith("OPENSTACK_CONFIG")]
    container["env"].append({"name": "DB_CONNECTION", "value": "mysql+pymysql://n:fake-x-pw@db:3306/networking"})
    assert service_database.databases(objects) == ["networking"]


def test_without_db_init_or_its_secrets_another_reader_of_the_file_says_it() -> None:
    objects = [o for o in _objects("openstack_helm/keystone") if o["metadata"]["name"] != "keystone-db-init"
               and "DB_CONNECTION" not in (o.get("data") or {})]
    assert service_database.databases(objects) == ["keystone"]  # keystone-credential-cleanup's


def test_a_render_where_nothing_says_names_what_renders_it() -> None:
    objects = [o for o in _objects("openstack_helm/keystone")
               if o["kind"] != "Job" and "DB_CONNECTION" not in (o.get("data") or {})]
    message = _error(objects)
    assert message.startswith("the render says nowhere which databases the service uses")
    assert "manifests.job_db_init" in message and "manifests.secret_db" in message
    assert "Job keystone-db-sync does not say which database" in _error(_objects("openstack_helm/keystone"),
                                                                        job="keystone-db-sync")


def test_a_null_connection_names_the_chart_value() -> None:
    """conf.nova.database.connection: null (a connection given at run time):
    db-init's file has no option, and the render cannot say."""
    objects = _objects("service_database/nova")
    text = _text(objects, "nova-etc", "nova.conf")
    _set(objects, "nova-etc", "nova.conf", text[:text.index("[database]")] + "[database]\nmax_retries = -1\n")
    message = _error(objects)
    assert message.startswith("Job nova-db-init container nova-db-init-2: /etc/nova/nova.conf from Secret "
                              "nova-etc has no [database] connection")
    assert "conf.nova.database.connection is null" in message


def _broken(how: str) -> List[Dict[str, Any]]:
    objects = _objects("service_database/nova")
    conf = _text(objects, "nova-etc", "nova.conf")
    if how == "no-path-in-file":
        _set(objects, "nova-etc", "nova.conf", conf.replace("3306/nova_cell1", "3306/"))
    elif how == "no-path-in-secret":
        cell0 = _text(objects, "nova-db-cell0-user", "DB_CONNECTION")
        _set(objects, "nova-db-cell0-user", "DB_CONNECTION", cell0.replace("/nova_cell0", ""))
    elif how == "not-base64":
        _get(objects, "Secret", "nova-db-cell0-user")["data"]["DB_CONNECTION"] = "fake-oslo-db-cell0-nova-pw%%"
    elif how == "not-ini":
        _set(objects, "nova-etc", "nova.conf", "connection = " + conf)
    elif how == "no-key":
        _container(objects, "nova-db-init", 1)["env"][-1]["valueFrom"]["secretKeyRef"]["key"] = "URL"
    return objects


@pytest.mark.parametrize("how, message", [
    ("no-path-in-file", "Job nova-db-init container nova-db-init-2: the [database] connection of "
                        "/etc/nova/nova.conf names no database in its path"),
    ("no-path-in-secret", "Job nova-db-init container nova-db-init-1: DB_CONNECTION from key DB_CONNECTION of "
                          "Secret nova-db-cell0-user names no database in its path"),
    ("not-base64", "key DB_CONNECTION of Secret nova-db-cell0-user is not base64 UTF-8 text"),
    ("not-ini", "/etc/nova/nova.conf from Secret nova-etc is not an INI file"),
    ("no-key", "Secret nova-db-cell0-user has no key URL"),
])
def test_errors_name_the_place_and_never_the_credentials(how: str, message: str) -> None:
    text = _error(_broken(how))
    assert message in text
    _no_credentials(text)


@pytest.mark.parametrize("how, message", [
    ("no-secret", "the render has no Secret keystone-etc"),
    ("no-option", "/etc/keystone/keystone.conf from Secret keystone-etc has no [database] connection"),
    ("emptydir", "/etc/keystone/keystone.conf is mounted from volume etc-service, which is no Secret or ConfigMap"),
    ("unmounted", "no volume is mounted at /etc/keystone/keystone.conf"),
    ("no-section-env", "sets OPENSTACK_CONFIG_FILE without a literal OPENSTACK_CONFIG_DB_SECTION"),
])
def test_a_db_init_container_that_does_not_say_is_an_error(how: str, message: str) -> None:
    """Never skipped: the other databases alone would be a partial backup."""
    objects = _objects("service_database/keystone")
    container = _container(objects, "keystone-db-init")
    if how == "no-secret":
        objects = [o for o in objects if o["metadata"]["name"] != "keystone-etc"]
    elif how == "no-option":
        conf = _text(objects, "keystone-etc", "keystone.conf")
        _set(objects, "keystone-etc", "keystone.conf", conf.replace("\nconnection", "\n#connection"))
    elif how == "emptydir":  # the file's own mount gone, the directory's emptyDir is what db-init sees
        container["volumeMounts"] = [m for m in container["volumeMounts"]
                                     if m["mountPath"] != "/etc/keystone/keystone.conf"]
    elif how == "unmounted":
        container["volumeMounts"] = [m for m in container["volumeMounts"] if not m["mountPath"].startswith("/etc")]
    elif how == "no-section-env":
        container["env"] = [e for e in container["env"] if e["name"] != "OPENSTACK_CONFIG_DB_SECTION"]
    text = _error(objects)
    assert text.startswith("Job keystone-db-init container keystone-db-init-0") and message in text
    _no_credentials(text)
