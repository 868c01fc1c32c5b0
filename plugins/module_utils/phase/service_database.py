# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The databases an openstack-helm service uses, every one, read from its render.

A backup needs the names, and a service may have several: nova's db-init
creates its API database, cell0 and cell1. The values a phase holds are only
the user's, not the chart's defaults merged in, so the names are read from
what the chart renders, in this order:

1. helm-toolkit's db-init Job (``<service>-db-init``), one container per
   database it creates, each of one of two kinds
   (``templates/manifests/_job-db-init-mysql.tpl``):
   - oslo: ``OPENSTACK_CONFIG_FILE``, ``OPENSTACK_CONFIG_DB_SECTION`` and
     ``OPENSTACK_CONFIG_DB_KEY`` name an option of the service's config file,
     mounted from its etc Secret (keystone's ``[database] connection``);
   - secret: ``DB_CONNECTION`` from a ``secretKeyRef``, the user's connection
     in a Secret of its own (nova's cell0, ``nova-db-cell0-user``).
   The database is the path of that connection URL: the name db-init creates.
2. Without a db-init Job (the release's jobs switched off, as a rollback
   renders the deployed release): the Secrets helm-toolkit renders from
   ``endpoints.oslo_db*`` (``secrets.oslo_db*``, key ``DB_CONNECTION``).
   They are those values with the chart's defaults merged in.
3. Without either: any other Job or Pod that reads the connection the
   db-init way (keystone's credential-cleanup).

A Secret or ConfigMap the render does not hold (made outside the chart) is
read from the cluster, when the caller gives a getter.

Connection URLs hold passwords: only their path leaves this module, and no
error quotes a URL or a file.
"""

from __future__ import annotations

import base64
import configparser
import posixpath
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple
from urllib.parse import unquote, urlsplit

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError

CONFIG_FILE_ENV = "OPENSTACK_CONFIG_FILE"
SECTION_ENV = "OPENSTACK_CONFIG_DB_SECTION"
KEY_ENV = "OPENSTACK_CONFIG_DB_KEY"
CONNECTION_ENV = "DB_CONNECTION"   # the secret kind's env, and the key of helm-toolkit's db Secrets
_POD_KINDS = ("Job", "Pod")
DB_INIT_SUFFIX = "-db-init"

Getter = Callable[[str, str, str], Optional[Dict[str, Any]]]  # (api_version, kind, name) -> live object
Obj = Mapping[str, Any]


class DatabaseNotFound(PhaseError):
    """The render does not say which databases the service uses."""


def databases(objects: Iterable[Obj], job: Optional[str] = None, get: Optional[Getter] = None) -> List[str]:
    """The service's database names, each once, in the order the render gives them.

    `job` names the one Job to read. Raises DatabaseNotFound naming the
    object and what is missing: a db-init container that does not say is an
    error, never skipped, so a backup never covers part of the service."""
    objects = list(objects)
    lookup = _Lookup(objects, get)
    if job is not None:
        found = _read(_readers(objects, lambda o: _name(o) == job), lookup)
        if not found:
            raise DatabaseNotFound(f"Job {job} does not say which database the service uses (no container "
                                   f"with {CONFIG_FILE_ENV} or {CONNECTION_ENV})")
        return found
    found = (_read(_readers(objects, lambda o: _name(o).endswith(DB_INIT_SUFFIX)), lookup)
             or _from_db_secrets(objects)
             or _read(_readers(objects, lambda o: True), lookup))
    if not found:
        raise DatabaseNotFound(
            "the render says nowhere which databases the service uses: it has no db-init Job (a container "
            f"with {CONFIG_FILE_ENV} or {CONNECTION_ENV}), and no Secret with a {CONNECTION_ENV} key. In an "
            "openstack-helm chart, manifests.job_db_init or manifests.secret_db renders them")
    return found


DATABASE_JOB_SUFFIXES = ("-db-init", "-db-sync", "-db-drop")


def uses_database(objects: Iterable[Obj]) -> bool:
    """Whether the render holds anything of a database: a db-init, db-sync or
    db-drop Job, a container that reads a connection the db-init way, or a
    database Secret. A node agent's chart (libvirt, openvswitch) holds none:
    it has nothing to back up, restore or drop."""
    objects = list(objects)
    return (any(o.get("kind") == "Job" and _name(o).endswith(DATABASE_JOB_SUFFIXES) for o in objects)
            or bool(_readers(objects, lambda o: True)) or bool(_from_db_secrets(objects)))


# -- the three sources ---------------------------------------------------------
def _readers(objects: List[Obj], chosen: Callable[[Obj], bool]) -> List[Tuple[Obj, Obj]]:
    """(pod object, container) for each container that reads a connection the db-init way."""
    return [(o, c) for o in objects if o.get("kind") in _POD_KINDS and chosen(o)
            for c in _pod(o).get("containers") or []
            if any(e.get("name") in (CONFIG_FILE_ENV, CONNECTION_ENV) for e in c.get("env") or [])]


def _read(readers: List[Tuple[Obj, Obj]], lookup: "_Lookup") -> List[str]:
    found: List[str] = []
    for obj, container in readers:
        name = _database(obj, container, lookup)
        if name not in found:
            found.append(name)
    return found


def _from_db_secrets(objects: List[Obj]) -> List[str]:
    """The paths of the rendered Secrets with a DB_CONNECTION key (helm-toolkit's
    ``secret-db*`` templates, one per ``secrets.oslo_db*`` entry); one without a
    path (a server-wide admin connection) names no database."""
    found: List[str] = []
    for obj in objects:
        if obj.get("kind") != "Secret" or not _has_key(obj, CONNECTION_ENV):
            continue
        what = f"Secret {_name(obj)}"
        name = _maybe_path(_decoded(obj, CONNECTION_ENV, f"{what}: key {CONNECTION_ENV}"))
        if name and name not in found:
            found.append(name)
    return found


# -- one db-init container -----------------------------------------------------
def _database(obj: Obj, container: Obj, lookup: "_Lookup") -> str:
    what = f"{obj.get('kind')} {_name(obj)} container {container.get('name')}"
    env = {e.get("name"): e for e in container.get("env") or []}
    if CONFIG_FILE_ENV in env:
        return _from_config_file(obj, container, env, lookup, what)
    entry = env[CONNECTION_ENV]
    if entry.get("value"):
        return _path(str(entry["value"]), f"{what}: its {CONNECTION_ENV} value")
    ref = (entry.get("valueFrom") or {}).get("secretKeyRef") or {}
    if not (ref.get("name") and ref.get("key")):
        raise DatabaseNotFound(f"{what} takes {CONNECTION_ENV} from neither a value nor a Secret key")
    source = f"key {ref['key']} of Secret {ref['name']}"
    text = lookup.data("Secret", str(ref["name"]), str(ref["key"]), what, (
        " (openstack-helm charts render it from endpoints.oslo_db* when their manifests.secret_db* "
        "switch is on)"))
    return _path(text, f"{what}: {CONNECTION_ENV} from {source}")


def _from_config_file(obj: Obj, container: Obj, env: Mapping[str, Obj], lookup: "_Lookup", what: str) -> str:
    path, section, key = (str(env.get(n, {}).get("value") or "") for n in (CONFIG_FILE_ENV, SECTION_ENV, KEY_ENV))
    if not (path and section and key):
        raise DatabaseNotFound(f"{what} sets {CONFIG_FILE_ENV} without a literal {SECTION_ENV} and {KEY_ENV}")
    kind, source, item = _mounted_from(_pod(obj), container, path, what)
    text = lookup.data(kind, source, item, what, "")
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise DatabaseNotFound(f"{what}: {path} from {kind} {source} is not an INI file "
                               f"({type(exc).__name__})") from None
    if not parser.has_option(section, key):
        stem = posixpath.splitext(posixpath.basename(path))[0]
        raise DatabaseNotFound(
            f"{what}: {path} from {kind} {source} has no [{section}] {key} (in an openstack-helm chart, "
            f"conf.{stem}.{section}.{key} is null: the connection is given at run time, not in the render)")
    return _path(parser.get(section, key), f"{what}: the [{section}] {key} of {path}")


def _mounted_from(pod: Obj, container: Obj, path: str, what: str) -> Tuple[str, str, str]:
    """(Secret or ConfigMap, its name, its key) that the container sees at `path`:
    the deepest mount holding it wins, as in the container (a file mounted with
    subPath over a directory mount)."""
    path = posixpath.normpath(path)
    best: Optional[Tuple[int, Obj, str]] = None
    for mount in container.get("volumeMounts") or []:
        target = posixpath.normpath(str(mount.get("mountPath") or "/"))
        if path == target:
            rel = ""
        elif path.startswith(target.rstrip("/") + "/"):
            rel = path[len(target.rstrip("/")) + 1:]
        else:
            continue
        item = posixpath.join(str(mount.get("subPath") or ""), rel).strip("/")
        if best is None or len(target) > best[0]:
            best = (len(target), mount, item)
    if best is None or not best[2]:
        raise DatabaseNotFound(f"{what}: no volume is mounted at {path}")
    _depth, mount, item = best
    volume = {v.get("name"): v for v in pod.get("volumes") or []}.get(mount.get("name")) or {}
    if volume.get("secret"):
        return "Secret", str(volume["secret"].get("secretName")), _item_key(volume["secret"], item)
    if volume.get("configMap"):
        return "ConfigMap", str(volume["configMap"].get("name")), _item_key(volume["configMap"], item)
    raise DatabaseNotFound(f"{what}: {path} is mounted from volume {mount.get('name')}, "
                           "which is no Secret or ConfigMap")


def _item_key(source: Obj, item: str) -> str:
    """A volume's `items` may map a key to another file name."""
    for entry in source.get("items") or []:
        if entry.get("path") == item:
            return str(entry.get("key"))
    return item


# -- reading ---------------------------------------------------------------------
class _Lookup:
    """Secrets and ConfigMaps by name: the render's first, then the cluster's."""

    def __init__(self, objects: List[Obj], get: Optional[Getter]) -> None:
        self.objects, self.get = objects, get

    def data(self, kind: str, name: str, key: str, what: str, hint: str) -> str:
        obj = next((o for o in self.objects if o.get("kind") == kind and _name(o) == name), None)
        if obj is None and self.get is not None:
            obj = self.get("v1", kind, name)
        if obj is None:
            cluster = ", nor has the cluster" if self.get is not None else ""
            raise DatabaseNotFound(f"{what}: the render has no {kind} {name}{cluster}{hint}")
        if not _has_key(obj, key):
            raise DatabaseNotFound(f"{what}: {kind} {name} has no key {key}")
        return _decoded(obj, key, f"{what}: key {key} of {kind} {name}")


def _has_key(obj: Obj, key: str) -> bool:
    return key in (obj.get("stringData") or {}) or key in (obj.get("data") or {})


def _decoded(obj: Obj, key: str, what: str) -> str:
    plain = obj.get("stringData") or {}
    if key in plain:
        return str(plain[key])
    encoded = (obj.get("data") or {}).get(key)
    if obj.get("kind") == "ConfigMap":
        return str(encoded)
    try:
        return base64.b64decode(str(encoded)).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        raise DatabaseNotFound(f"{what} is not base64 UTF-8 text") from None


def _path(url: str, what: str) -> str:
    """The database of a connection URL: its path (query and credentials left out)."""
    name = _maybe_path(url)
    if not name:
        raise DatabaseNotFound(f"{what} names no database in its path")
    return name


def _maybe_path(url: str) -> str:
    name = unquote(urlsplit(url.strip()).path.lstrip("/"))
    return name if "/" not in name else ""


def _pod(obj: Obj) -> Obj:
    if obj.get("kind") == "Pod":
        return obj.get("spec") or {}
    return ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")
