"""plugins/modules/helm_release_info.py: a release is read in a namespace that
must be given, under its own option names or kubernetes.core's aliases."""

from __future__ import annotations

from ansible_collections.lcm.openstack.plugins.modules import helm_release_info as module
from support.module_docs import documented_options

DOCS = documented_options(module)


def test_a_release_is_read_in_a_namespace_that_must_be_given() -> None:
    assert DOCS["namespace"]["required"] is True and DOCS["namespace"]["aliases"] == ["release_namespace"]
    assert DOCS["name"]["aliases"] == ["release_name"] and not DOCS["name"].get("required")
