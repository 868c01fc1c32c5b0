"""A module's documentation against its argument spec, option by option.

The documentation is the module's DOCUMENTATION with its doc fragments
merged in, as ansible-doc shows it; the argument spec is what the module
validates with. Each difference is one line naming the option and what
differs, so a test shows every drift at once."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Dict, List

import yaml

# What an option is when its spec or its documentation leaves a key out.
_IMPLIED = {"type": "str", "required": False, "choices": None, "elements": None, "aliases": [], "default": None}


def documented_options(module: ModuleType) -> Dict[str, Any]:
    """The options ansible-doc shows for `module`: its own, then each
    fragment's in the order listed, the first to document an option winning
    (as Ansible merges them)."""
    doc = yaml.safe_load(module.DOCUMENTATION)
    options: Dict[str, Any] = dict(doc.get("options") or {})
    for name in doc.get("extends_documentation_fragment") or []:
        for option, said in (_fragment(name).get("options") or {}).items():
            options.setdefault(option, said)
    return options


def documented_doc(module: ModuleType) -> Dict[str, Any]:
    """The module's DOCUMENTATION with its fragments' attributes merged in
    as Ansible merges them: per attribute, the module's keys over the
    fragment's (the fragment describes, the module gives its support)."""
    doc = yaml.safe_load(module.DOCUMENTATION)
    attributes: Dict[str, Any] = {}
    for name in doc.get("extends_documentation_fragment") or []:
        for attribute, said in (_fragment(name).get("attributes") or {}).items():
            attributes[attribute] = dict(attributes.get(attribute) or {}, **said)
    for attribute, said in (doc.get("attributes") or {}).items():
        attributes[attribute] = dict(attributes.get(attribute) or {}, **said)
    return dict(doc, attributes=attributes)


def _fragment(name: str) -> Dict[str, Any]:
    """A doc fragment by its name in extends_documentation_fragment:
    namespace.collection.fragment, or namespace.collection.fragment.variable
    for a fragment's other block (lcm.openstack.attributes.platform: PLATFORM)."""
    namespace, collection, fragment, *variable = name.split(".")
    path = f"ansible_collections.{namespace}.{collection}.plugins.doc_fragments.{fragment}"
    return yaml.safe_load(getattr(importlib.import_module(path).ModuleDocFragment,
                                  (variable or ["documentation"])[0].upper()))


def differences(spec: Dict[str, Any], docs: Dict[str, Any], path: str = "") -> List[str]:
    """Every option documented and not in the spec, in the spec and not
    documented, or documented with another type, default, choices,
    requiredness, elements or aliases; suboptions likewise."""
    out = [f"{path}{name}: in the argument spec, not documented" for name in sorted(set(spec) - set(docs))]
    out += [f"{path}{name}: documented, not in the argument spec" for name in sorted(set(docs) - set(spec))]
    for name in sorted(set(spec) & set(docs)):
        have, said = spec[name], docs[name]
        for key, implied in _IMPLIED.items():
            given = have.get(key, implied)
            shown = said.get(key, implied)
            if key in ("choices", "aliases") and given is not None and shown is not None:
                given, shown = sorted(map(str, given)), sorted(map(str, shown))
            if given != shown:
                out.append(f"{path}{name}: {key} is {given!r} in the spec, {shown!r} in the documentation")
        if have.get("options") or said.get("suboptions"):
            out += differences(have.get("options") or {}, said.get("suboptions") or {}, f"{path}{name}.")
    return out


class _Built(Exception):
    """Raised by the stand-in module class: main() got as far as building the module."""

    def __init__(self, kwargs: Dict[str, Any]) -> None:
        super().__init__("built")
        self.kwargs = kwargs


def built_with(module: ModuleType, monkeypatch: Any) -> Dict[str, Any]:
    """The keyword arguments `module.main()` builds its Ansible module with
    (argument spec, check mode support...), without running anything."""
    def record(**kwargs: Any) -> None:
        raise _Built(kwargs)
    for name in ("AnsibleK8SModule", "AnsibleHelmModule", "AnsibleModule"):
        if hasattr(module, name):
            monkeypatch.setattr(module, name, record)
    try:
        module.main()
    except _Built as built:
        return built.kwargs
    raise AssertionError(f"{module.__name__}.main() built no module")
