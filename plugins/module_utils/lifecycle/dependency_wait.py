# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A flow's start waits, by watch, until the services it depends on are met.

A site runs its services' flows at once (a host a service, the `free`
strategy, several processes or AWX slices) and keeps their order in the
cluster: a flow starts once every dependency's ServiceLifecycle is
Operational, at its minimum version (dependencies.py). The records are listed
once per namespace involved and watched from there (kube/watch.py: resumed
from the last resourceVersion after a break, listed again on 410), so the
wait ends on the event that meets it, with no polling; a dependency that is
lost ends it at once.

A module prints nothing while it runs, so what it waits for is written to the
dependent's own record, as the condition DependenciesReady (False, the
dependencies not met and why), each time that text changes: `kubectl get slc
<service> -o yaml` shows it. The flow's start sets it True.

With no timeout (0), the records are read once, as before the wait existed:
a dependency not met fails the start at once.
"""

from __future__ import annotations

import queue
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Dict, List, Optional, Sequence

from ansible_collections.lcm.openstack.plugins.module_utils.crds.service_lifecycle import ServiceLifecycle
from ansible_collections.lcm.openstack.plugins.module_utils.common import transient
from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import LcmError, LifecycleError
from ansible_collections.lcm.openstack.plugins.module_utils.kube.api_errors import api_error
from ansible_collections.lcm.openstack.plugins.module_utils.common.model import DEPENDENCIES_READY
from ansible_collections.lcm.openstack.plugins.module_utils.kube.objects import get_or_none
from ansible_collections.lcm.openstack.plugins.module_utils.kube.watch import KindWatch
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.dependencies import (
    REMOVED, Dependency, Verdict, judge,
)
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.dependency_chain import follow, lost_message

CONDITION = DEPENDENCIES_READY
Report = Callable[[str, str], None]  # (reason, message) of the False condition
Records = Dict[str, Dict[str, ServiceLifecycle]]  # namespace -> name -> ServiceLifecycle


@dataclass
class Waited:
    seconds: float = 0.0
    waited_for: List[str] = field(default_factory=list)  # not met when the wait began
    message: str = ""  # for the True condition


def settle(dyn: Any, res: Any, service: str, deps: Sequence[Dependency], timeout: float,
           since: Optional[datetime], report: Report, check_mode: bool = False) -> Waited:
    """Return once every dependency is met; raise when one is lost, or at the timeout.
    With timeout 0, or in check mode (which waits for nothing), read them once."""
    if timeout <= 0 or check_mode:
        return _once(res, service, deps, timeout, since)
    return _Wait(dyn, res, service, deps, since, report).run(timeout)


def _once(res: Any, service: str, deps: Sequence[Dependency], timeout: float,
          since: Optional[datetime]) -> Waited:
    records = {d: get_or_none(res, d.name, d.namespace) for d in deps}
    verdicts = {d: judge(d, records[d], since) for d in deps}
    unmet = [d for d in deps if not verdicts[d].met]
    if unmet and timeout <= 0 and _removal(deps):
        raise LifecycleError(f"{service} is depended on by services that are not Removed: {_listed(unmet, verdicts)}. "
                             "Remove them first, give dependency_timeout to wait for them, "
                             "or set require_dependencies=false")
    if unmet and timeout <= 0:
        raise LifecycleError(f"{service} depends on services that are not Operational: {_listed(unmet, verdicts)}. "
                             "Run their flows first, give dependency_timeout to wait for them, "
                             "or set require_dependencies=false")
    lost = [d for d in deps if verdicts[d].lost]
    if lost:
        raise _lost(service, lost, verdicts, records.get, since, _reader(res))
    return Waited(0.0, [d.label for d in unmet], _met(deps, verdicts))


class _Wait:
    """One list and one watch per namespace, judged again after each event."""

    def __init__(self, dyn: Any, res: Any, service: str, deps: Sequence[Dependency],
                 since: Optional[datetime], report: Report, clock: Callable[[], float] = time.monotonic) -> None:
        self.dyn, self.res, self.service, self.deps = dyn, res, service, list(deps)
        self.since, self.report, self.clock = since, report, clock
        self.records: Records = {d.namespace: {} for d in self.deps}
        self.listed: set = set()
        self.shown = ""  # the last waiting text written
        self.broke = ""  # why a watch last broke (it resumes by itself)
        self.waited_for: Optional[List[str]] = None

    def run(self, timeout: float) -> Waited:
        events: "queue.Queue" = queue.Queue()
        watches = [KindWatch(self.dyn, self.res, ns, events, (), field_selector=self._only(ns))
                   for ns in sorted(self.records)]
        start = self.clock()
        for w in watches:
            w.start()
        try:
            while True:
                done = self._judged(start) if len(self.listed) == len(watches) else None
                if done is not None:
                    return done
                remaining = start + timeout - self.clock()
                if remaining <= 0:
                    raise self._failed("Timeout", self._timeout(self.clock() - start, timeout))
                try:
                    kind, w, payload = events.get(timeout=remaining)
                except queue.Empty:
                    continue
                self._seen(kind, w, payload)
        finally:
            for w in watches:
                w.stop()

    def _only(self, namespace: str) -> Optional[str]:
        """One dependency in a namespace: watch it alone, not every service's writes."""
        names = {d.name for d in self.deps if d.namespace == namespace}
        return f"metadata.name={names.pop()}" if len(names) == 1 else None

    def _seen(self, kind: str, w: Any, payload: Any) -> None:
        if kind == "ERROR":
            raise api_error(payload, "watch", "servicelifecycles", w.namespace)
        if kind == "BREAK":  # the watch resumes by itself
            self.broke = transient.describe(payload)
            return
        records = self.records[w.namespace]
        if kind == "LIST":
            self.listed.add(w.namespace)
            records.clear()
        for obj in payload:
            name = obj["metadata"]["name"]
            if kind == "DELETED":
                records.pop(name, None)
            else:
                records[name] = obj

    def _judged(self, start: float) -> Optional[Waited]:
        """The outcome once every dependency is met; None while waiting (the
        record told what for); raises when one is lost."""
        verdicts = self._verdicts()
        unmet = [d for d in self.deps if not verdicts[d].met]
        if self.waited_for is None:
            self.waited_for = [d.label for d in unmet]
        lost = [d for d in self.deps if verdicts[d].lost]
        if lost:
            raise self._failed("DependencyLost", str(_lost(self.service, lost, verdicts, self._record, self.since,
                                                           _reader(self.res))))
        if not unmet:
            return Waited(round(self.clock() - start, 1), self.waited_for, _met(self.deps, verdicts))
        text = f"waiting for {_listed(unmet, verdicts)}"
        if text != self.shown:
            self.report("Waiting", text)
            self.shown = text
        return None

    def _verdicts(self) -> Dict[Dependency, Verdict]:
        return {d: judge(d, self._record(d), self.since) for d in self.deps}

    def _record(self, dep: Dependency) -> Optional[ServiceLifecycle]:
        return self.records[dep.namespace].get(dep.name)

    def _timeout(self, took: float, timeout: float) -> str:
        verdicts = self._verdicts()
        if len(self.listed) < len(self.records):
            unread = ", ".join(sorted(set(self.records) - self.listed))
            return (f"{self.service} waited {took:.0f} s of dependency_timeout {timeout:g} and could not list "
                    f"the ServiceLifecycles in {unread}{': ' + self.broke if self.broke else ''}")
        unmet = [d for d in self.deps if not verdicts[d].met]
        if _removal(self.deps):
            return (f"{self.service} waited {took:.0f} s of dependency_timeout {timeout:g} for the services "
                    f"that depend on it to be Removed; not yet: {_listed(unmet, verdicts)}. Remove them first, "
                    "raise dependency_timeout, or set require_dependencies=false")
        return (f"{self.service} waited {took:.0f} s of dependency_timeout {timeout:g} for its dependencies; "
                f"not met: {_listed(unmet, verdicts)}. Run their flows first, raise dependency_timeout, "
                "or set require_dependencies=false")

    def _failed(self, reason: str, message: str) -> LifecycleError:
        """The failure, also written to the record: why the flow did not start."""
        try:
            self.report(reason, message)
        except LcmError:
            pass  # the record could not say it; the task does
        return LifecycleError(message)


def _listed(deps: Sequence[Dependency], verdicts: Dict[Dependency, Verdict]) -> str:
    return ", ".join(f"{d.label} ({verdicts[d].why})" for d in deps)


def _met(deps: Sequence[Dependency], verdicts: Dict[Dependency, Verdict]) -> str:
    return f"met: {_listed(deps, verdicts)}" if deps else "no dependencies"


def _removal(deps: Sequence[Dependency]) -> bool:
    """A removal's wait: for the services that depend on this one to be Removed."""
    return bool(deps) and all(d.want == REMOVED for d in deps)


def _reader(res: Any) -> Callable[[str, str], Optional[ServiceLifecycle]]:
    """A GET of a record below a lost dependency (dependency_chain.py)."""
    return lambda namespace, name: get_or_none(res, name, namespace)


def _lost(service: str, lost: Sequence[Dependency], verdicts: Dict[Dependency, Verdict],
          record: Callable[[Dependency], Optional[ServiceLifecycle]], since: Optional[datetime],
          read: Callable[[str, str], Optional[ServiceLifecycle]]) -> LifecycleError:
    """The start's failure: for a removal, the dependents whose removal
    failed; otherwise each lost dependency followed to the service whose own
    flow failed, named once."""
    if _removal(lost):
        return LifecycleError(f"{service} is depended on by {_listed(lost, verdicts)}, whose removal failed: "
                              f"{service} stays while they are there. Remove them first, "
                              "or set require_dependencies=false")
    return LifecycleError(lost_message(service, [root for d in lost for root in follow(d, record(d), since, read)]))
