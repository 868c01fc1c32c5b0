"""What every unit test starts from."""

from __future__ import annotations

from typing import Iterator

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common import errors


@pytest.fixture(autouse=True)
def no_connection_named() -> Iterator[None]:
    """A module names its connection once per run (errors.connection_named);
    a test that made a client does not name it for the tests after it."""
    yield
    errors.connection_named(None)
