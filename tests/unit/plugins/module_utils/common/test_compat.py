"""plugins/module_utils/common/compat.py: the third-party names the engine
uses come from one place, and are the libraries' own when installed, so an
error raised by the kubernetes client is caught by what the engine catches;
the kubernetes ones are loaded only when first asked for."""

from __future__ import annotations

import os
import subprocess
import sys

import kubernetes.dynamic.exceptions as dynamic_exceptions
import yaml
from kubernetes.client.rest import ApiException

from ansible_collections.lcm.openstack.plugins.module_utils.common import compat


def test_with_the_libraries_installed_nothing_is_missing() -> None:
    assert compat.IMPORT_ERROR is None
    assert compat.yaml is yaml and compat.ApiException is ApiException


def test_the_exceptions_are_the_clients_with_its_hierarchy() -> None:
    for name in ("ConflictError", "DynamicApiError", "NotFoundError", "ResourceNotFoundError"):
        assert getattr(compat, name) is getattr(dynamic_exceptions, name)
    assert issubclass(compat.NotFoundError, compat.DynamicApiError)
    assert issubclass(compat.ConflictError, compat.DynamicApiError)
    assert issubclass(compat.DynamicApiError, compat.ApiException)


def test_every_exported_name_exists() -> None:
    assert all(hasattr(compat, name) for name in (*compat.__all__, *compat.KUBERNETES_NAMES))


LOADED = """
import sys
from ansible_collections.lcm.openstack.plugins.module_utils.common import compat
before = "kubernetes" in sys.modules
error = compat.DynamicApiError
print(before, "kubernetes" in sys.modules, error.__module__)
"""


def test_the_kubernetes_names_are_loaded_when_first_asked_for() -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    run = subprocess.run([sys.executable, "-c", LOADED], capture_output=True, text=True, env=env, check=True)
    assert run.stdout.split() == ["False", "True", "kubernetes.dynamic.exceptions"]
