"""plugins/module_utils/common/errors.py: one base, LcmError, and a class per domain."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from typing import List, Set

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common import errors
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import (
    CrdMissing, InputError, KubeError, LcmError, LifecycleError, ObjectNotFound, PhaseError, PhaseFailed, PhaseGone,
    SiteError,
)
from ansible_collections.lcm.openstack.plugins.module_utils.helm.process import HelmError

MODULE_UTILS = Path(errors.__file__).resolve().parents[1]
# The one place that catches the kubernetes client's exceptions.
TRANSLATION = MODULE_UTILS / "kube" / "api_errors.py"
CLIENT_EXCEPTIONS = {"DynamicApiError", "ApiException"}
# Exception classes under module_utils that are not the collection's errors, and why.
NOT_OURS = {
    # Stand-ins for the kubernetes client's exceptions when the library is missing: they
    # must be what the client would raise, never one of ours.
    "common.compat.ApiException", "common.compat.DynamicApiError", "common.compat.NotFoundError",
    "common.compat.ConflictError", "common.compat.ResourceNotFoundError",
}

DOMAINS = [PhaseError, KubeError, HelmError, LifecycleError, SiteError, InputError]


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda c: c.__name__)
def test_each_domains_error_is_an_lcm_error_and_no_other_domains(domain: type) -> None:
    assert issubclass(domain, LcmError)
    assert [d.__name__ for d in DOMAINS if d is not domain and issubclass(domain, d)] == []


@pytest.mark.parametrize("case,domain", [
    (PhaseFailed, PhaseError), (PhaseGone, PhaseError), (CrdMissing, KubeError), (ObjectNotFound, KubeError),
], ids=lambda c: c.__name__)
def test_the_named_cases_sit_under_their_domain(case: type, domain: type) -> None:
    assert issubclass(case, domain)


def test_details_are_kept_beside_the_message() -> None:
    err = PhaseFailed("failed", changed=True, phase={"name": "p"})
    assert str(err) == "failed"
    assert err.details == {"changed": True, "phase": {"name": "p"}}
    assert LcmError("x").details == {} and InputError("y").details == {}
    assert CrdMissing("no CRD", "Phase").kind == "Phase"
    assert ObjectNotFound("no Service", "openstack").namespace == "openstack"


def _files() -> List[Path]:
    return sorted(p for p in MODULE_UTILS.rglob("*.py") if "__pycache__" not in p.parts)


def _caught_names(handler: ast.ExceptHandler) -> Set[str]:
    """The names an except clause catches: DynamicApiError, compat.DynamicApiError, (A, B)."""
    found = handler.type
    parts = found.elts if isinstance(found, ast.Tuple) else [found] if found is not None else []
    return {p.attr if isinstance(p, ast.Attribute) else getattr(p, "id", "") for p in parts}


def test_only_the_translation_catches_the_clients_exceptions() -> None:
    assert TRANSLATION.is_file()
    catching = [f"{p.relative_to(MODULE_UTILS)}:{node.lineno}"
                for p in _files() if p != TRANSLATION
                for node in ast.walk(ast.parse(p.read_text(), str(p)))
                if isinstance(node, ast.ExceptHandler) and _caught_names(node) & CLIENT_EXCEPTIONS]
    assert catching == [], "catch them through kube/api_errors.py (api_call, answered)"


def test_the_scan_sees_an_except_of_the_clients_exception() -> None:
    tree = ast.parse("try:\n    pass\nexcept (ValueError, compat.DynamicApiError):\n    pass\n"
                     "try:\n    pass\nexcept ApiException as exc:\n    pass\n")
    handlers = [n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler)]
    assert [_caught_names(h) & CLIENT_EXCEPTIONS for h in handlers] == [{"DynamicApiError"}, {"ApiException"}]


def _exception_classes() -> List[type]:
    found = []
    for path in _files():
        relative = path.relative_to(MODULE_UTILS).with_suffix("")
        name = ".".join(relative.parts)
        module = importlib.import_module(f"ansible_collections.lcm.openstack.plugins.module_utils.{name}")
        found += [c for _n, c in inspect.getmembers(module, inspect.isclass)
                  if c.__module__ == module.__name__ and issubclass(c, Exception)]
    # Classes defined inside a function (compat's stand-ins) are not members: the test below finds them.
    return found


def test_every_exception_class_of_module_utils_is_an_lcm_error() -> None:
    classes = _exception_classes()
    assert {"HelmError", "LeaseNamespaceMissing", "TrafficFailed", "Bad"} <= {c.__name__ for c in classes}
    prefix = "ansible_collections.lcm.openstack.plugins.module_utils."
    outside = [f"{c.__module__.removeprefix(prefix)}.{c.__name__}" for c in classes if not issubclass(c, LcmError)]
    assert [c for c in outside if c not in NOT_OURS] == []


def test_the_stand_ins_are_the_only_exception_classes_defined_in_a_function() -> None:
    nested = []
    for path in _files():
        tree = ast.parse(path.read_text(), str(path))
        for func in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            nested += [f"{'.'.join(path.relative_to(MODULE_UTILS).with_suffix('').parts)}.{c.name}"
                       for c in ast.walk(func) if isinstance(c, ast.ClassDef)
                       and any("Error" in ast.unparse(b) or "Exception" in ast.unparse(b) for b in c.bases)]
    assert sorted(nested) == sorted(NOT_OURS)
