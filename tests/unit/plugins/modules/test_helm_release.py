"""plugins/modules/helm_release.py: the Helm binary
option is the one kubernetes.core documents, with this collection's alias and variable."""

from __future__ import annotations

from ansible_collections.lcm.openstack.plugins.modules import helm_release as module
from support.module_docs import documented_options

DOCS = documented_options(module)


def test_the_helm_binary_option_takes_the_alias_and_the_environment_variable() -> None:
    option = module.argument_spec()["binary_path"]
    assert option["aliases"] == ["helm_binary"] and option["fallback"][1] == ["HELM_BIN"]
    assert DOCS["binary_path"]["aliases"] == ["helm_binary"] and "HELM_BIN" in DOCS["binary_path"]["description"]


def test_the_states_are_the_four_operations_on_a_release() -> None:
    assert DOCS["state"]["choices"] == ["present", "absent", "rolledback", "tested"]
    assert DOCS["state"]["default"] == "present"
