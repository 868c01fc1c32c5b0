# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Keep credentials out of everything the modules return or print.

Secrets come from two places: values whose key looks like a credential
(password, token, key, secret, ...) and the data of rendered Secret objects.
Every string that leaves a module goes through `Redactor.redact`, and
Secret objects are shown with their data masked.
"""

from __future__ import annotations

import base64
import re
from typing import Any, Dict, Iterable, List, Mapping

MASK = "********"
# The password of a connection string: scheme://user:password@host
_URL_PASSWORD = re.compile(r"://[^:/@\s]+:([^@\s]+)@")
# Matched against each word of a key (keystone_db_password -> keystone, db,
# password; apiKey -> api, key), so that `keystone` is not a credential key.
DEFAULT_SECRET_KEYS = r"(?i)^(pass(word|wd|phrase)?|pw|tokens?|secrets?|keys?|apikey|credentials?|private)$"
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# In a Secret everything is secret, but for entries that only say who and
# where (OS_USERNAME, OS_REGION_NAME, DB_HOST): remembering "admin" or
# "RegionOne" would mask those words in every message.
PUBLIC_WORDS = frozenset({"user", "username", "name", "host", "hostname", "port", "url", "uri",
                          "endpoint", "region", "project", "domain", "interface", "namespace"})
# Short values (true, 0, ...) would be masked everywhere they occur.
MIN_SECRET_LEN = 4


class Redactor:
    def __init__(self, key_pattern: str = DEFAULT_SECRET_KEYS) -> None:
        self._key = re.compile(key_pattern)
        self._secrets: set = set()

    def is_secret_key(self, key: Any) -> bool:
        return any(self._key.search(word) for word in _WORDS.findall(str(key)))

    @property
    def secrets(self) -> List[str]:
        return sorted(self._secrets, key=len, reverse=True)

    def add(self, value: Any) -> None:
        """Remember a secret, and the password of any connection string in it."""
        if isinstance(value, str) and len(value) >= MIN_SECRET_LEN:
            self._secrets.add(value)
            for password in _URL_PASSWORD.findall(value):
                if len(password) >= MIN_SECRET_LEN:
                    self._secrets.add(password)

    def add_values(self, values: Any, under_secret_key: bool = False) -> None:
        """Remember every string under a credential-like key, at any depth."""
        if isinstance(values, Mapping):
            for key, val in values.items():
                self.add_values(val, under_secret_key or self.is_secret_key(key))
        elif isinstance(values, (list, tuple)):
            for val in values:
                self.add_values(val, under_secret_key)
        elif under_secret_key and not isinstance(values, bool) and values is not None:
            self.add(str(values))

    def add_objects(self, objects: Iterable[Mapping[str, Any]]) -> None:
        """Remember the data of every Secret, both decoded and base64, except
        entries that only name a user, a host or a region (their embedded
        passwords, as in a URL, are still remembered)."""
        for obj in objects:
            if obj.get("kind") != "Secret":
                continue
            for key, val in (obj.get("stringData") or {}).items():
                self._add_entry(key, str(val))
            for key, val in (obj.get("data") or {}).items():
                try:
                    decoded = base64.b64decode(str(val), validate=True).decode("utf-8")
                except (ValueError, UnicodeDecodeError):
                    self._add_entry(key, str(val))
                    continue
                if self._add_entry(key, decoded):
                    self.add(str(val))

    def _add_entry(self, key: Any, value: str) -> bool:
        words = {w.lower() for w in _WORDS.findall(str(key))}
        if not self.is_secret_key(key) and words & PUBLIC_WORDS:
            for password in _URL_PASSWORD.findall(value):
                self.add(password)
            return False
        self.add(value)
        return True

    def redact(self, text: Any) -> Any:
        if not isinstance(text, str):
            return text
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return text

    def redact_deep(self, data: Any) -> Any:
        if isinstance(data, str):
            return self.redact(data)
        if isinstance(data, Mapping):
            return {k: self.redact_deep(v) for k, v in data.items()}
        if isinstance(data, list):
            return [self.redact_deep(v) for v in data]
        return data


def mask_secret(obj: Mapping[str, Any]) -> Dict[str, Any]:
    """A copy of an object that shows a Secret's keys but none of its values."""
    out = dict(obj)
    if obj.get("kind") == "Secret":
        for field in ("data", "stringData"):
            if field in out and out[field]:
                out[field] = {k: MASK for k in out[field]}
    return out
