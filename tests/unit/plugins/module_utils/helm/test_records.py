"""plugins/module_utils/helm/records.py: a release's history, and its last
revision's manifest and user-supplied values, as `helm history` and `helm
status` print them, read at once with the commands run beside them, and read
again when the two are of different revisions. (present() on it: test_release.py.)"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence

import pytest
from support.fake_helm import start_at_once

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.module_utils.common.redact import MASK
from ansible_collections.lcm.openstack.plugins.module_utils.helm import records
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError, Result

SECRET = "an-old-admin-passw0rd"
HISTORY = [{"revision": 1, "status": "superseded", "chart": "keystone-0.1.0"},
           {"revision": 2, "status": "deployed", "chart": "keystone-0.1.0"}]
LAST = {"name": "keystone", "version": 2, "info": {"status": "deployed"}, "manifest": "kind: ConfigMap",
        "config": {"endpoints": {"identity": {"auth": {"admin": {"password": SECRET}}}}}, "hooks": []}


class _Helm(Helm):
    """Helm answering each subcommand from `answers` (a tuple: one answer per call, the last repeated)."""

    _start = start_at_once

    def __init__(self, **answers: Any) -> None:
        super().__init__("helm")
        self.answers = answers
        self.ran: List[List[str]] = []

    def _run_once(self, args: Sequence[str], timeout: Any) -> Result:
        self.ran.append(list(args))
        given = self.answers[args[0]]
        if isinstance(given, tuple):
            answer, self.answers[args[0]] = given[0], given[1:] or given
        else:
            answer = given
        if isinstance(answer, Result):
            return answer
        return Result(["helm", *args], 0, answer if isinstance(answer, str) else json.dumps(answer), "")


def _missing(what: str) -> Result:
    return Result(["helm", what], 1, "", "Error: release: not found")


def test_the_release_is_read_at_once_with_the_render_and_as_helm_get_prints_it() -> None:
    helm = _Helm(history=HISTORY, status=LAST, template="kind: ConfigMap\n")
    revisions = records.Revisions(helm, "keystone", "openstack")
    (render,) = revisions.read(alongside=[["template", "keystone", "chart"]])
    assert render.stdout == "kind: ConfigMap\n"
    assert [a[0] for a in helm.ran] == ["history", "status", "template"]
    assert helm.ran[0] == ["history", "keystone", "--namespace", "openstack", "--output", "json", "--max", "256"]
    assert helm.ran[1] == ["status", "keystone", "--namespace", "openstack", "--output", "json"]
    assert revisions.history == HISTORY
    assert revisions.manifest() == "kind: ConfigMap\n"  # as `helm get manifest` prints it
    assert revisions.values() == LAST["config"]


def test_a_release_that_is_not_there_has_no_history_manifest_or_values() -> None:
    helm = _Helm(history=_missing("history"), status=_missing("status"))
    revisions = records.Revisions(helm, "keystone", "openstack")
    assert revisions.read() == []
    assert (revisions.history, revisions.manifest(), revisions.values()) == ([], "", {})


@pytest.mark.parametrize("status", [dict(LAST, version=3), None])
def test_a_status_of_another_revision_than_the_history_is_read_again_without_what_ran_beside(
        status: Optional[Dict[str, Any]]) -> None:
    first = _missing("status") if status is None else status
    helm = _Helm(history=HISTORY, status=(first, LAST), template="kind: ConfigMap\n")
    revisions = records.Revisions(helm, "keystone", "openstack")
    (render,) = revisions.read(alongside=[["template", "keystone", "chart"]])
    assert render.stdout == "kind: ConfigMap\n"
    assert [a[0] for a in helm.ran] == ["history", "status", "template", "history", "status"]
    assert revisions.manifest() == "kind: ConfigMap\n"


def test_a_release_that_keeps_changing_while_it_is_read_is_said_to_be_changing() -> None:
    helm = _Helm(history=HISTORY, status=dict(LAST, version=3))
    with pytest.raises(HelmError, match="^release keystone in namespace openstack changed 3 times while it was read: "
                                        "another Helm command is changing it; run again when it is done$"):
        records.Revisions(helm, "keystone", "openstack").read()
    assert len(helm.ran) == 2 * records.READS


def test_a_read_helm_cannot_do_says_what_helm_said() -> None:
    refused = Result(["helm", "history"], 1, "", "Error: query: failed to query with labels: "
                                                 'secrets is forbidden: User "ci" cannot list resource "secrets"')
    helm = _Helm(history=refused, status=LAST)
    with pytest.raises(HelmError, match="^helm history failed: query: failed to query with labels: secrets is forbidden"):
        records.Revisions(helm, "keystone", "openstack").read()


def test_the_deployed_credentials_are_masked_wherever_they_would_show() -> None:
    helm = _Helm(history=HISTORY, status=LAST)
    revisions = records.Revisions(helm, "keystone", "openstack")
    revisions.read()
    revisions.values()
    assert helm.redactor.redact(f"login admin:{SECRET}") == f"login admin:{MASK}"


def test_the_driver_is_that_of_the_environment_helm_runs_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELM_DRIVER", "configmap")
    assert records.kind_of(Helm("helm")) == "ConfigMap"
    assert records.kind_of(Helm("helm", env={"HELM_DRIVER": "sql"})) is None
    with pytest.raises(InputError, match="^HELM_DRIVER=memory keeps a release only"):
        records.kind_of(Helm("helm", env={"HELM_DRIVER": "memory"}))
