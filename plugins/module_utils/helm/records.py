# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A release's revisions as Helm reads them: its history, and its last
revision's manifest and user-supplied values, from two Helm reads run at
once (`helm history` and `helm status --output json`), beside the render
that the decision compares them with.

Why Helm and not the storage records through the Kubernetes client: the
client's import alone (about 0.2 s, common/compat.py) costs more than these
Helm processes, which run together; a helm_release that finds its release as
asked then never loads it. Helm also reads every storage driver (Secret,
ConfigMap, SQL) with its own credentials (HELM_KUBE*), so what is compared
is what Helm would upgrade from.

The two reads are two requests: a revision written between them would pair
one revision's history with another's manifest. They are read again until
they agree (the status's revision is the history's last), and a release that
keeps changing is said to be changing, not decided on.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence

from ansible_collections.lcm.openstack.plugins.module_utils.helm import storage
from ansible_collections.lcm.openstack.plugins.module_utils.helm.cli import Helm, HelmError, Result, history_args, status_args
from ansible_collections.lcm.openstack.plugins.module_utils.helm.history import History

READS = 3  # pairs read before a release that keeps changing is said to be changing


def kind_of(helm: Helm) -> Optional[str]:
    """The kind Helm, run with its environment, keeps releases in (storage.kind)."""
    return storage.kind(dict(os.environ, **helm.env))


class Revisions:
    """The release's history, and its last revision's manifest and values."""

    def __init__(self, helm: Helm, name: str, namespace: str) -> None:
        self.helm, self.name, self.namespace = helm, name, namespace
        self.history: History = []
        self._last: Dict[str, Any] = {}

    def read(self, alongside: Sequence[Sequence[str]] = ()) -> List[Result]:
        """Read the release; `alongside`, Helm commands run at the same time
        (the first time only), and their results in order."""
        together: List[Result] = []
        for attempt in range(READS):
            calls = [history_args(self.name, self.namespace), status_args(self.name, self.namespace)]
            results = self.helm.run_together([*calls, *(alongside if attempt == 0 else ())])
            together = together or results[2:]
            self.history = self.helm.history_of(results[0])
            last = self.helm.status_of(results[1])
            if _agree(self.history, last):
                self._last = last or {}
                return together
        raise HelmError(f"release {self.name} in namespace {self.namespace} changed {READS} times while it was "
                        "read: another Helm command is changing it; run again when it is done",
                        command=" ".join(results[0].command))

    def manifest(self) -> str:
        """As `helm get manifest` prints it ('' without revisions)."""
        return f"{self._last.get('manifest') or ''}\n" if self.history else ""

    def values(self) -> Dict[str, Any]:
        """As `helm get values --output json` prints them: the user-supplied values."""
        values = self._last.get("config") or {}
        # The deployed credentials are masked too, wherever they would show.
        self.helm.redactor.add_values(values)
        return values


def _agree(history: History, last: Optional[Dict[str, Any]]) -> bool:
    """The status read is of the history's last revision (or neither has one)."""
    if not history:
        return last is None
    return last is not None and int(last.get("version") or 0) == int(history[-1].get("revision") or 0)
