"""What every unit test starts from."""

from __future__ import annotations

from typing import Iterator

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.kube import api_errors


@pytest.fixture(autouse=True)
def no_connection_named() -> Iterator[None]:
    """A module names its connection once per run (api_errors.connection_named);
    a test that made a client does not name it for the tests after it."""
    yield
    api_errors.connection_named(None)


@pytest.fixture(autouse=True)
def helm_versions_apart(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Helm versions remembered in a cache of the test's own (helm/versions.py),
    never in the user's, and none carried from one test to the next in memory."""
    from ansible_collections.lcm.openstack.plugins.module_utils.helm import versions

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setattr(versions, "_MEMORY", {})
