# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Keep credentials out of everything the modules return or print.

Credentials come from four places: values whose key names a credential
(`password`, `db_password`, `api_key`, ...), the data of rendered Secret
objects, and, in any string under any key, the password in a URL's userinfo
and a `password=...` (or `token: ...`, ...) inside the text. They are masked
in three ways:

- as whole field values, where a value is shown under its key (`mask_values`;
  a Secret's data with `mask_secret`): every credential, however short;
- as free text (`redact`, and Ansible's no_log values), where a remembered
  value is replaced wherever it appears. Only distinctive values are masked
  so: at least MIN_FREE_TEXT_LEN characters, and not a word (letters only,
  up to MAX_WORD_LEN of them). openstack-helm's default password is
  literally `password`; masking it as free text would blank that word, and
  every other common word a chart uses as a default, in every message;
- by shape, wherever text is redacted: a URL's password and the value of a
  credential-named `key=value` are masked in place, however short, since the
  shape says they are credentials (`mysql+pymysql://keystone:password@db`).

A key names a credential by its last word (`keystone_db_password`, not
`credential_setup`, a job's section), and only the values right under it are
credentials, not a whole section below it (`conf.keystone.token.provider`
is configuration). A bare `key` is a label or entry key in Kubernetes-shaped
values (tolerations, selectors, Secret references), as is `node_selector_key`.
"""

from __future__ import annotations

import base64
import re
from typing import Any, Dict, Iterable, List, Mapping

MASK = "********"
# The password of a connection string: scheme://user:password@host
_URL_PASSWORD = re.compile(r"://[^:/@\s]+:([^@\s]+)@")
# The same, for masking in place: what stays around the password.
_URL_USERINFO = re.compile(r"(://[^:/@\s]+:)([^@\s]+)(@)")
# A credential given as key=value or key: value inside a string: an oslo.config
# line (`password = s3cret`), a DSN (`host=db password=s3cret`), a query
# string (`?password=s3cret&x=1`), a command line (`--password=s3cret`).
_KEY_VALUE = re.compile(
    r"(?i)(\b(?:[a-z0-9]+[_-])*(?:pass(?:word|wd|phrase)?|pw|secret(?:[_-]key)?|token|(?:api|access|private)[_-]?key|credentials?)"
    r"[ \t]*[=:][ \t]*)(\"[^\"]*\"|'[^']*'|[^\s&;,'\"]+)")
# Matched against the last word of a key (keystone_db_password -> password;
# apiKey -> key), so that neither `keystone` nor `credential_setup` is one.
DEFAULT_SECRET_KEYS = r"(?i)^(pass(word|wd|phrase)?|pw|tokens?|secrets?|keys?|apikey|credentials?|private)$"
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# With the default pattern, a key ending in `key` after one of these words
# names a label key, not a credential (node_selector_key, topologyKey).
_LABEL_KEY_WORDS = frozenset({"selector", "topology", "label"})
# Free text: shorter values (true, 0, root, admin, ...) and words would be
# masked wherever they occur.
MIN_FREE_TEXT_LEN = 8
MAX_WORD_LEN = 12
_WORD = re.compile(r"^[A-Za-z]+$")
# In a Secret everything is secret, but for entries that only say who and
# where (OS_USERNAME, OS_REGION_NAME, DB_HOST): remembering "admin" or
# "RegionOne" would mask those words in every message.
PUBLIC_WORDS = frozenset({"user", "username", "name", "host", "hostname", "port", "url", "uri",
                          "endpoint", "region", "project", "domain", "interface", "namespace"})


def free_text_safe(value: str) -> bool:
    """Whether masking `value` wherever it appears blanks only the value."""
    return len(value) >= MIN_FREE_TEXT_LEN and not (_WORD.match(value) and len(value) <= MAX_WORD_LEN)


class Redactor:
    def __init__(self, key_pattern: str = DEFAULT_SECRET_KEYS) -> None:
        self._key = re.compile(key_pattern)
        self._default = key_pattern == DEFAULT_SECRET_KEYS
        self._secrets: set = set()

    def is_secret_key(self, key: Any) -> bool:
        words = _WORDS.findall(str(key))
        if not words or not self._key.search(words[-1]):
            return False
        if self._default and words[-1].lower() in ("key", "keys"):
            return len(words) > 1 and words[-2].lower() not in _LABEL_KEY_WORDS
        return True

    @property
    def secrets(self) -> List[str]:
        """The values masked as free text, longest first."""
        return sorted(self._secrets, key=len, reverse=True)

    def add(self, value: Any) -> None:
        """Remember a credential for free text, and the password of any
        connection string in it; values that are not distinctive are not."""
        if isinstance(value, str):
            for candidate in [value, *embedded_credentials(value)]:
                if free_text_safe(candidate):
                    self._secrets.add(candidate)

    def add_embedded(self, value: Any) -> None:
        """Remember only the credentials a value carries by its shape (a URL's
        password, `password=...`), not the value itself."""
        if isinstance(value, str):
            for candidate in embedded_credentials(value):
                if free_text_safe(candidate):
                    self._secrets.add(candidate)

    def add_values(self, values: Any, under_secret_key: bool = False) -> None:
        """Remember the credentials in values: each scalar (or list item) right
        under a credential key; with under_secret_key, every scalar below."""
        self._walk(values, under_secret_key, False)

    def _walk(self, values: Any, everything: bool, here: bool) -> None:
        if isinstance(values, Mapping):
            for key, val in values.items():
                self._walk(val, everything, self.is_secret_key(key))
        elif isinstance(values, (list, tuple)):
            for val in values:
                self._walk(val, everything, here)
        elif (everything or here) and not isinstance(values, bool) and values is not None:
            self.add(str(values))
        else:  # a connection URL or a key=value line under any key
            self.add_embedded(values)

    def mask_values(self, values: Any, under_secret_key: bool = False) -> Any:
        """A copy of values with every credential masked as a whole field
        value, however short or common, and free text redacted elsewhere."""
        return self._masked(values, under_secret_key, False)

    def _masked(self, values: Any, everything: bool, here: bool) -> Any:
        if isinstance(values, Mapping):
            return {k: self._masked(v, everything, self.is_secret_key(k)) for k, v in values.items()}
        if isinstance(values, (list, tuple)):
            return [self._masked(v, everything, here) for v in values]
        if (everything or here) and not isinstance(values, bool) and values is not None:
            return MASK
        return self.redact(values)

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
        """Text with every remembered credential masked, and every credential
        it carries by its shape, however short (a URL's password, `password=`)."""
        if not isinstance(text, str):
            return text
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return mask_embedded(text)

    def redact_deep(self, data: Any) -> Any:
        if isinstance(data, str):
            return self.redact(data)
        if isinstance(data, Mapping):
            return {k: self.redact_deep(v) for k, v in data.items()}
        if isinstance(data, list):
            return [self.redact_deep(v) for v in data]
        return data

    def scrub(self, exc: Any) -> None:
        """Mask an error's message and details in place, before it is raised on (an LcmError's)."""
        exc.args = (self.redact(str(exc)),)
        exc.details = self.redact_deep(getattr(exc, "details", {}))


def embedded_credentials(text: str) -> List[str]:
    """The credentials a string carries by its shape, quotes stripped."""
    found = _URL_PASSWORD.findall(text)
    found += [v.strip("\"'") for _k, v in _KEY_VALUE.findall(text)]
    return [f for f in found if f and f != MASK]


def mask_embedded(text: str) -> str:
    """`text` with the credentials it carries by its shape masked in place."""
    text = _URL_USERINFO.sub(lambda m: m.group(1) + MASK + m.group(3), text)
    return _KEY_VALUE.sub(lambda m: m.group(1) + MASK, text)


def mask_secret(obj: Mapping[str, Any]) -> Dict[str, Any]:
    """A copy of an object that shows a Secret's keys but none of its values."""
    out = dict(obj)
    if obj.get("kind") == "Secret":
        for field in ("data", "stringData"):
            if field in out and out[field]:
                out[field] = {k: MASK for k in out[field]}
    return out
