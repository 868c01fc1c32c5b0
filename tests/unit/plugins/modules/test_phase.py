"""plugins/modules/phase.py and the Phase CRD say the same as the engine: every
field of a type's block the engine records (spec.TYPE_BLOCKS) is an option of
the module, documented with the same choices, and a field of the CRD schema."""

from __future__ import annotations

import copy
from typing import Any, Dict

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.phase.status import REASON_LIMIT
from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import TYPE_BLOCKS
from ansible_collections.lcm.openstack.plugins.modules import phase as module
from support.module_docs import differences, documented_options
from support.paths import ROOT

CRD = yaml.safe_load((ROOT / "roles" / "crds" / "files" / "phase.yaml").read_text())
SCHEMA = CRD["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
DOCS = yaml.safe_load(module.DOCUMENTATION)["options"]
ARGS = module.argument_spec()
DATABASE_BLOCKS = ("upgrade", "rollback", "uninstall")


@pytest.mark.parametrize("block", DATABASE_BLOCKS)
def test_missing_job_is_an_option_of_each_database_block(block: str) -> None:
    assert ARGS[block]["options"]["missing_job"] == {"type": "str", "choices": ["fail", "warn"]}
    documented = DOCS[block]["suboptions"]["missing_job"]
    assert documented["choices"] == ["fail", "warn"] and documented["type"] == "str"
    field = SCHEMA["spec"]["properties"][block]["properties"]["missingJob"]
    assert field["enum"] == ["fail", "warn"]


@pytest.mark.parametrize("type_", sorted(t for t in TYPE_BLOCKS if TYPE_BLOCKS[t][0] in DATABASE_BLOCKS))
def test_every_recorded_field_is_an_option_and_a_crd_field(type_: str) -> None:
    block, fields = TYPE_BLOCKS[type_]
    options: Dict[str, Any] = ARGS[block]["options"]
    assert set(fields) == set(options) == set(DOCS[block]["suboptions"])
    assert set(fields.values()) == set(SCHEMA["spec"]["properties"][block]["properties"])


def test_the_status_objects_say_whether_the_phase_owns_them_and_why() -> None:
    item = SCHEMA["status"]["properties"]["objects"]["items"]["properties"]
    assert item["owned"]["type"] == "boolean"
    assert item["reason"]["type"] == "string" and item["reason"]["maxLength"] == REASON_LIMIT


def test_a_drift_between_the_two_is_named_option_by_option() -> None:
    """The comparison the module tests rely on does see a difference."""
    docs = copy.deepcopy(documented_options(module))
    docs["state"]["choices"] = ["present"]
    docs["timeout"]["default"] = 60
    del docs["wait"]
    docs["source"]["suboptions"]["selection"]["type"] = "list"
    assert differences(module.argument_spec(), docs) == [
        "wait: in the argument spec, not documented",
        "source.selection: type is 'str' in the spec, 'list' in the documentation",
        "state: choices is ['absent', 'present'] in the spec, ['present'] in the documentation",
        "timeout: default is 600 in the spec, 60 in the documentation",
    ]
