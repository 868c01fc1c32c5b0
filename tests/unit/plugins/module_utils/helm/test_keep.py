"""plugins/module_utils/helm/keep.py: the objects Helm keeps on uninstall told
apart from the delete hooks, and kept hooks a first install adopts."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from ansible_collections.lcm.openstack.plugins.module_utils.helm import keep as release_keep
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import HelmError
from support.paths import UNIT_FIXTURES

FIXTURES = UNIT_FIXTURES / "release"


def load(name: str) -> Any:
    return yaml.safe_load((FIXTURES / name).read_text())


def test_kept_objects_and_delete_hooks_are_told_apart() -> None:
    render = load("install_render.yaml")
    assert [str(r) for r in release_keep.kept(render)] == ["Secret/keystone-fernet-keys",
                                                           "Secret/keystone-credential-keys"]
    assert [str(r) for r in release_keep.delete_hooks(render)] == ["Job/keystone-credential-cleanup"]


def test_a_first_install_adopts_kept_hooks_by_running_without_hooks() -> None:
    render = load("install_render.yaml")
    kept = set(release_keep.kept(render))
    assert release_keep.plan_install(render, set()) == (False, [])
    no_hooks, adopted = release_keep.plan_install(render, kept)
    assert no_hooks is True and set(adopted) == kept
    # One of the two kept: the other is still an install hook to run.
    with pytest.raises(HelmError, match="Secret/keystone-credential-keys must still run"):
        release_keep.plan_install(render, {release_keep.ref(render[0])})


def test_kept_hooks_beside_a_hook_that_must_run_are_refused_naming_both() -> None:
    render = load("install_render.yaml") + [load("post_install_job.yaml")]
    with pytest.raises(HelmError) as exc:
        release_keep.plan_install(render, set(release_keep.kept(render)))
    message = str(exc.value)
    assert "Secret/keystone-fernet-keys, Secret/keystone-credential-keys exist already" in message
    assert "the install hooks Job/keystone-db-sync must still run" in message
    assert "Nothing was changed" in message
