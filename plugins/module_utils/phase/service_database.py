# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The database(s) an openstack-helm service uses, read from its rendered db-init Job.

A backup of one database needs its name. openstack-helm does not render it
anywhere plain: keystone's values say ``endpoints.oslo_db.path: /keystone``,
but the values a phase holds are only the user's, not the chart's defaults
merged in. What the chart does render is helm-toolkit's db-init Job, and that
Job says exactly where the service's database is: each of its containers has
``OPENSTACK_CONFIG_FILE`` (``/etc/keystone/keystone.conf``),
``OPENSTACK_CONFIG_DB_SECTION`` (``database``) and ``OPENSTACK_CONFIG_DB_KEY``
(``connection``), and mounts that file from the service's etc Secret. The
database is the path of that connection URL: the very name db-init creates
and db-sync migrates. So it is read the way db-init reads it, from the same
rendered objects, one name per db-init container (nova has three).

The connection URL holds the service's database password: only its path
leaves this module, and no error quotes the URL or the file.
"""

from __future__ import annotations

import base64
import configparser
import posixpath
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple
from urllib.parse import unquote, urlsplit

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import PhaseError

CONFIG_FILE_ENV = "OPENSTACK_CONFIG_FILE"
SECTION_ENV = "OPENSTACK_CONFIG_DB_SECTION"
KEY_ENV = "OPENSTACK_CONFIG_DB_KEY"
_POD_KINDS = ("Job", "Pod")
DB_INIT_SUFFIX = "-db-init"


class DatabaseNotFound(PhaseError):
    """The render does not say which database the service uses."""


def databases(objects: Iterable[Mapping[str, Any]], job: Optional[str] = None) -> List[str]:
    """The database names of the rendered db-init Job(s), in container order.

    `job` names the Job to read; by default the `*-db-init` Jobs whose
    containers carry the db-init variables, or, when there is none, every Job
    or Pod that carries them (keystone's credential-cleanup reads the same
    file). Raises DatabaseNotFound, naming the
    object and what is missing, when nothing says it."""
    objects = list(objects)
    readers = [(o, c) for o in objects if o.get("kind") in _POD_KINDS and (job is None or _name(o) == job)
               for c in _pod(o).get("containers") or []
               if any(e.get("name") == CONFIG_FILE_ENV for e in c.get("env") or [])]
    if job is None:  # helm-toolkit's <service>-db-init first; others read the same file
        readers = [r for r in readers if _name(r[0]).endswith(DB_INIT_SUFFIX)] or readers
    found: List[str] = []
    for obj, container in readers:
        env = {e.get("name"): e.get("value") for e in container.get("env") or []}
        name = _database(obj, container, env, objects)
        if name not in found:
            found.append(name)
    if not found:
        where = f"Job {job} does not say" if job else "no Job of the render says"
        raise DatabaseNotFound(
            f"{where} which database the service uses (a db-init container with {CONFIG_FILE_ENV}); "
            "give the database name in the phase's backup options")
    return found


def _database(obj: Mapping[str, Any], container: Mapping[str, Any], env: Mapping[str, Any],
              objects: List[Mapping[str, Any]]) -> str:
    what = f"{obj.get('kind')} {_name(obj)} container {container.get('name')}"
    path, section, key = str(env.get(CONFIG_FILE_ENV) or ""), env.get(SECTION_ENV), env.get(KEY_ENV)
    if not (path and section and key):
        raise DatabaseNotFound(f"{what} sets {CONFIG_FILE_ENV} without a literal {SECTION_ENV} and {KEY_ENV}")
    kind, source, item = _mounted_from(_pod(obj), container, path, what)
    text = _config_text(objects, kind, source, item, what)
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise DatabaseNotFound(f"{what}: {path} from {kind} {source} is not an INI file "
                               f"({type(exc).__name__})") from None
    if not parser.has_option(str(section), str(key)):
        raise DatabaseNotFound(f"{what}: {path} from {kind} {source} has no [{section}] {key}")
    name = unquote(urlsplit(parser.get(str(section), str(key)).strip()).path.lstrip("/"))
    if not name or "/" in name:
        raise DatabaseNotFound(f"{what}: the [{section}] {key} of {path} names no database in its path")
    return name


def _mounted_from(pod: Mapping[str, Any], container: Mapping[str, Any], path: str,
                  what: str) -> Tuple[str, str, str]:
    """(Secret or ConfigMap, its name, its key) that the container sees at `path`:
    the deepest mount holding it wins, as in the container (a file mounted with
    subPath over a directory mount)."""
    path = posixpath.normpath(path)
    best: Optional[Tuple[int, Mapping[str, Any], str]] = None
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


def _item_key(source: Mapping[str, Any], item: str) -> str:
    """A volume's `items` may map a key to another file name."""
    for entry in source.get("items") or []:
        if entry.get("path") == item:
            return str(entry.get("key"))
    return item


def _config_text(objects: List[Mapping[str, Any]], kind: str, name: str, key: str, what: str) -> str:
    for obj in objects:
        if obj.get("kind") != kind or _name(obj) != name:
            continue
        data: Dict[str, Any] = dict(obj.get("stringData") or {})
        if key in data:
            return str(data[key])
        encoded = (obj.get("data") or {}).get(key)
        if encoded is None:
            break
        if kind == "ConfigMap":
            return str(encoded)
        try:
            return base64.b64decode(str(encoded)).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            raise DatabaseNotFound(f"{what}: key {key} of Secret {name} is not base64 UTF-8 text") from None
    raise DatabaseNotFound(f"{what}: the render has no {kind} {name} with key {key}")


def _pod(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    if obj.get("kind") == "Pod":
        return obj.get("spec") or {}
    return ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")
