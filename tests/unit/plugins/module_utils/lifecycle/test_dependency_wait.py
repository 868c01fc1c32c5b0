"""plugins/module_utils/lifecycle/dependency_wait.py: a flow's start waits,
by watch, for the ServiceLifecycles it depends on; over fake list and watch
streams (one script a namespace), the way test_watch.py fakes a watch."""

from __future__ import annotations

import copy
import threading
from typing import Any, Dict, List, Optional

import pytest
import yaml
from kubernetes.client.rest import ApiException
from urllib3.exceptions import ProtocolError

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import KubeError, LifecycleError
from ansible_collections.lcm.openstack.plugins.module_utils.common.timefmt import parse_time
from ansible_collections.lcm.openstack.plugins.module_utils.kube import watch
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle import dependency_wait
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.dependencies import parse_all
from support.fake_api import Answer, status_error
from support.paths import UNIT_FIXTURES


def slc(name: str, state: str = "", version: str = "", rv: str = "1", flow: Optional[Dict[str, Any]] = None,
        namespace: str = "openstack") -> Dict[str, Any]:
    status: Dict[str, Any] = {k: v for k, v in (("state", state), ("currentVersion", version)) if v}
    if flow:
        status["flow"] = flow
    return {"metadata": {"name": name, "namespace": namespace, "resourceVersion": rv}, "status": status}


def event(kind: str, obj: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": kind, "raw_object": obj}


class _Records:
    """ServiceLifecycles: per namespace, the lists it answers (one per list
    request, the last one again) and the watch scripts it plays, each a list
    of events (an exception among them cuts the stream there; an Event holds
    it until set) or an HTTP status to fail with. Once they are played, a
    watch hears nothing."""

    kind, name = "ServiceLifecycle", "servicelifecycles"

    def __init__(self, lists: Dict[str, List[List[Dict[str, Any]]]],
                 scripts: Optional[Dict[str, List[Any]]] = None) -> None:
        self.lists = {ns: list(answers) for ns, answers in lists.items()}
        self.scripts = {ns: list(s) for ns, s in (scripts or {}).items()}
        self.listed: List[str] = []
        self.selectors: Dict[str, Optional[str]] = {}  # namespace -> the field selector of its list
        self.watched: List[tuple] = []  # (namespace, resourceVersion) of each watch request
        self.quiet = threading.Event()

    def get(self, name: Optional[str] = None, namespace: Optional[str] = None,
            field_selector: Optional[str] = None, **_kw: Any) -> Answer:
        answers = self.lists.get(namespace) or [[]]
        items = answers.pop(0) if len(answers) > 1 else answers[0]
        if field_selector:  # metadata.name=<name>
            items = [i for i in items if i["metadata"]["name"] == field_selector.split("=", 1)[1]]
        if name is not None:  # a GET
            found = [i for i in items if i["metadata"]["name"] == name]
            if not found:
                raise status_error(404, "NotFound", f"servicelifecycles {name} not found")
            return Answer(found[0])
        self.listed.append(namespace)
        self.selectors[namespace] = field_selector
        rv = max([int(i["metadata"]["resourceVersion"]) for i in items] + [10])
        return Answer({"metadata": {"resourceVersion": str(rv)}, "items": copy.deepcopy(items)})

    def stream(self, namespace: str, resource_version: str, **_kw: Any) -> Any:
        self.watched.append((namespace, resource_version))
        script = self.scripts.get(namespace) or []
        if not script:
            self.quiet.wait(0.01)
            return
        played = script.pop(0)
        if isinstance(played, int):
            raise ApiException(status=played, reason="Gone")
        for item in played:
            if isinstance(item, Exception):
                raise item
            if isinstance(item, threading.Event):  # hold the stream until it is set
                item.wait(5)
                continue
            yield copy.deepcopy(item)


@pytest.fixture(autouse=True)
def _fake_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch, "raw_events", lambda res, _watcher, **kw: res.stream(**kw))
    monkeypatch.setattr(watch.transient, "backoff", lambda _attempt: 0.01)  # no real backoff in a unit test


class _Told:
    """The DependenciesReady condition as the wait writes it: (reason, message) each time."""

    def __init__(self) -> None:
        self.said: List[tuple] = []
        self.first = threading.Event()  # the wait has begun: every namespace listed and judged

    def __call__(self, reason: str, message: str) -> None:
        self.said.append((reason, message))
        self.first.set()


def _settle(records: _Records, depends_on: List[str], timeout: float = 10, since: Optional[str] = None,
            told: Optional[_Told] = None, check_mode: bool = False) -> dependency_wait.Waited:
    return dependency_wait.settle(None, records, "glance", parse_all(depends_on, "openstack", "glance"), timeout,
                                  parse_time(since), told if told is not None else _Told(), check_mode)


def test_met_at_once_waits_for_nothing_and_writes_nothing() -> None:
    records = _Records({"openstack": [[slc("keystone", "Operational", "2025.1"), slc("mariadb", "Operational")]]})
    told = _Told()
    waited = _settle(records, ["keystone>=2025.1", "mariadb"], told=told)
    assert waited.waited_for == [] and waited.seconds < 1
    assert waited.message == "met: keystone (Operational, version 2025.1), mariadb (Operational)"
    assert told.said == [] and records.listed == ["openstack"]  # one list, whatever the number of dependencies
    assert records.selectors == {"openstack": None}


def test_met_after_events_says_what_it_waits_for_each_time_that_changes() -> None:
    records = _Records(
        {"openstack": [[slc("keystone", "Installing"), slc("glance", "Planning")]]},
        {"openstack": [[event("MODIFIED", slc("glance", "Planning", rv="11")),  # the dependent's own write
                        event("ADDED", slc("mariadb", "Installing", rv="12")),
                        event("MODIFIED", slc("keystone", "Testing", rv="13")),
                        event("MODIFIED", slc("mariadb", "Operational", rv="14")),
                        event("MODIFIED", slc("keystone", "Operational", rv="15"))]]})
    told = _Told()
    waited = _settle(records, ["keystone", "mariadb"], told=told)
    assert waited.waited_for == ["keystone", "mariadb"]
    assert told.said == [
        ("Waiting", "waiting for keystone (Installing), mariadb (no ServiceLifecycle in openstack)"),
        ("Waiting", "waiting for keystone (Installing), mariadb (Installing)"),
        ("Waiting", "waiting for keystone (Testing), mariadb (Installing)"),
        ("Waiting", "waiting for keystone (Testing)"),
    ]
    assert records.watched[0] == ("openstack", "10")  # then, after its stream ended, from "15"


def test_a_failed_dependency_fails_at_once_naming_it_its_state_and_its_flow_message() -> None:
    failed = slc("keystone", "Failed", flow={"name": "update", "state": "Failed",
                                             "completedAt": "2026-02-02T00:00:00Z", "message": "db-sync failed"})
    records = _Records({"openstack": [[failed, slc("mariadb", "Installing")]]})
    told = _Told()
    with pytest.raises(LifecycleError) as err:
        _settle(records, ["mariadb", "keystone"], timeout=600, told=told)
    assert str(err.value) == ("glance waits for keystone, which is Failed (its update flow failed: db-sync failed). "
                              "No flow runs to bring it back, so waiting would not help: run its flow first, "
                              "or set require_dependencies=false")
    assert told.said[-1] == ("DependencyLost", str(err.value))


def test_a_dependency_whose_start_gave_up_is_followed_to_its_root_and_said_once() -> None:
    # fixtures/dependency_chain/site.yaml: neutron's start gave up on keystone, whose greenfield
    # failed; nova's wait names the chain and keystone's cause once (test_dependency_chain.py has the cases).
    site = yaml.safe_load((UNIT_FIXTURES / "dependency_chain" / "site.yaml").read_text())
    case = next(c for c in site["cases"] if c["case"] == "a record that holds the earlier nested message")
    records = [copy.deepcopy(dict(r, metadata=dict(r["metadata"], resourceVersion="1"))) for r in site["records"]]
    neutron = next(r for r in records if r["metadata"]["name"] == "neutron")
    neutron["status"]["conditions"] = [dict(case["conditions"]["neutron"], type="DependenciesReady", status="False")]
    told = _Told()
    with pytest.raises(LifecycleError) as err:
        dependency_wait.settle(None, _Records({"openstack": [records]}), "nova",
                               parse_all(["neutron"], "openstack", "nova"), 600, parse_time(site["since"]), told)
    assert str(err.value) == " ".join(case["failure"].split())
    assert str(err.value).count(site["root_cause"]) == 1
    assert told.said[-1] == ("DependencyLost", str(err.value))


def test_one_that_fails_while_waited_for_fails_the_wait_at_once() -> None:
    failed = slc("keystone", "Failed", rv="12", flow={"name": "greenfield", "state": "Failed",
                                                      "completedAt": "2026-02-01T00:10:00Z", "message": "install failed"})
    records = _Records({"openstack": [[slc("keystone", "Installing")]]},
                       {"openstack": [[event("MODIFIED", failed)]]})
    with pytest.raises(LifecycleError, match=r"keystone, which is Failed \(its greenfield flow failed: install failed\)"):
        _settle(records, ["keystone"], timeout=600, since="2026-02-01T00:00:00Z")


def test_removed_before_since_is_waited_through_its_new_flow_until_operational() -> None:
    removed = slc("mariadb", "Removed", flow={"name": "remove", "state": "Succeeded",
                                              "completedAt": "2026-01-15T00:00:00Z", "message": "removed"})
    again = slc("mariadb", "Removed", rv="11", flow={"name": "greenfield", "state": "Running",
                                                     "startedAt": "2026-02-01T00:01:00Z"})
    records = _Records({"openstack": [[removed]]},
                       {"openstack": [[event("MODIFIED", again), event("MODIFIED", slc("mariadb", "Installing", rv="12")),
                                       event("MODIFIED", slc("mariadb", "Operational", "10.11", rv="13"))]]})
    told = _Told()
    waited = _settle(records, ["mariadb"], since="2026-02-01T00:00:00Z", told=told)
    assert waited.waited_for == ["mariadb"]
    assert [m for _r, m in told.said] == [
        "waiting for mariadb (Removed before this run, not yet deployed again)",
        "waiting for mariadb (Removed, its greenfield flow running)",
        "waiting for mariadb (Installing)",
    ]
    # without since: lost
    with pytest.raises(LifecycleError, match=r"mariadb, which is Removed \(its remove flow succeeded: removed\)"):
        _settle(_Records({"openstack": [[removed]]}), ["mariadb"])


def test_an_expired_watch_lists_again_and_the_list_decides() -> None:
    records = _Records({"openstack": [[slc("keystone", "Installing")], [slc("keystone", "Operational", rv="30")]]},
                       {"openstack": [[event("ERROR", {"kind": "Status", "code": 410, "message": "too old"})]]})
    waited = _settle(records, ["keystone"])
    assert waited.waited_for == ["keystone"]
    assert records.listed == ["openstack", "openstack"] and records.watched[0] == ("openstack", "10")


def test_a_dropped_stream_resumes_from_the_last_resource_version_seen() -> None:
    records = _Records({"openstack": [[slc("keystone", "Installing")]]},
                       {"openstack": [[event("MODIFIED", slc("keystone", "Testing", rv="11")),
                                       ProtocolError("Response ended prematurely")],
                                      [event("MODIFIED", slc("keystone", "Operational", rv="12"))]]})
    told = _Told()
    waited = _settle(records, ["keystone"], told=told)
    assert waited.waited_for == ["keystone"]
    assert records.watched[:2] == [("openstack", "10"), ("openstack", "11")]  # resumed where it broke
    assert records.listed == ["openstack"]  # not listed again
    assert [m for _r, m in told.said] == ["waiting for keystone (Installing)", "waiting for keystone (Testing)"]


def test_a_minimum_version_unmet_then_met_by_a_version_bump() -> None:
    records = _Records({"openstack": [[slc("keystone", "Operational", "2025.1")]]},
                       {"openstack": [[event("MODIFIED", slc("keystone", "Upgrading", "2025.1", rv="11")),
                                       event("MODIFIED", slc("keystone", "Operational", "2025.2", rv="12"))]]})
    told = _Told()
    waited = _settle(records, ["keystone>=2025.2"], told=told)
    assert waited.waited_for == ["keystone"] and waited.message == "met: keystone (Operational, version 2025.2)"
    assert [m for _r, m in told.said] == [
        "waiting for keystone (Operational, version 2025.1, needs >= 2025.2)",
        "waiting for keystone (Upgrading, version 2025.1, needs >= 2025.2)",
    ]


def test_the_timeout_names_each_dependency_not_met_and_why() -> None:
    records = _Records({"openstack": [[slc("keystone", "Installing"), slc("memcached", "Operational", "1.5"),
                                       slc("rabbitmq", "Operational")]]})
    told = _Told()
    with pytest.raises(LifecycleError) as err:
        _settle(records, ["keystone", "mariadb", "memcached>=1.6", "rabbitmq"], timeout=0.3, told=told)
    assert str(err.value) == (
        "glance waited 0 s of dependency_timeout 0.3 for its dependencies; not met: keystone (Installing), "
        "mariadb (no ServiceLifecycle in openstack), memcached (Operational, version 1.5, needs >= 1.6). "
        "Run their flows first, raise dependency_timeout, or set require_dependencies=false")
    assert told.said[-1] == ("Timeout", str(err.value))


def test_each_namespace_involved_is_listed_and_watched_once() -> None:
    told = _Told()
    records = _Records({"openstack": [[slc("keystone", "Operational")]], "infra": [[]]},
                       {"infra": [[told.first, event("ADDED", slc("mariadb", "Operational", rv="11", namespace="infra"))]]})
    waited = _settle(records, ["keystone", "infra/mariadb"], told=told)
    assert waited.waited_for == ["infra/mariadb"]
    assert told.said == [("Waiting", "waiting for infra/mariadb (no ServiceLifecycle in infra)")]
    assert sorted(records.listed) == ["infra", "openstack"]
    # one dependency in a namespace is watched alone, not every service's writes there
    assert records.selectors == {"openstack": "metadata.name=keystone", "infra": "metadata.name=mariadb"}


def test_an_apiserver_away_for_the_whole_wait_is_named_in_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    records = _Records({"openstack": [[]]})

    def refused(**_kw: Any) -> Answer:
        raise ConnectionRefusedError(111, "Connection refused")
    monkeypatch.setattr(records, "get", refused)
    with pytest.raises(LifecycleError) as err:
        _settle(records, ["keystone"], timeout=0.2)
    assert str(err.value) == ("glance waited 0 s of dependency_timeout 0.2 and could not list the "
                              "ServiceLifecycles in openstack: [Errno 111] Connection refused")


def test_a_denied_watch_fails_with_what_was_denied() -> None:
    records = _Records({"openstack": [[slc("keystone", "Installing")]]}, {"openstack": [403]})
    with pytest.raises(KubeError, match="watch"):
        _settle(records, ["keystone"])


def test_without_a_timeout_they_are_read_once_and_any_not_met_fails_as_before() -> None:
    records = _Records({"openstack": [[slc("keystone", "Planning"), slc("glance", "Planning")]]})
    with pytest.raises(LifecycleError) as err:
        _settle(records, ["keystone", "mariadb"], timeout=0)
    assert str(err.value).startswith("glance depends on services that are not Operational: keystone (Planning), "
                                     "mariadb (no ServiceLifecycle in openstack). Run their flows first")
    assert records.listed == [] and records.watched == []  # a GET each, no list, no watch
    assert _settle(_Records({"openstack": [[slc("keystone", "Operational")]]}), ["keystone"], timeout=0).waited_for == []


def test_check_mode_waits_for_nothing_and_says_what_it_would_wait_for() -> None:
    records = _Records({"openstack": [[slc("keystone", "Installing"), slc("mariadb", "Operational")]]})
    told = _Told()
    waited = _settle(records, ["keystone", "mariadb"], timeout=600, told=told, check_mode=True)
    assert (waited.seconds, waited.waited_for, told.said) == (0.0, ["keystone"], [])
    assert records.watched == []
    lost = _Records({"openstack": [[slc("keystone", "Failed")]]})
    # the run would fail at once: so does check mode
    with pytest.raises(LifecycleError, match="keystone, which is Failed. No flow runs"):
        _settle(lost, ["keystone"], timeout=600, check_mode=True)


def test_a_record_that_cannot_take_the_failure_still_fails_the_start_with_it() -> None:
    def refused(_reason: str, _message: str) -> None:
        raise KubeError("could not update servicelifecycles/status: HTTP 403")
    records = _Records({"openstack": [[slc("keystone", "Removed")]]})
    with pytest.raises(LifecycleError, match="keystone, which is Removed. No flow runs"):
        dependency_wait.settle(None, records, "glance", parse_all(["keystone"], "openstack", "glance"), 10,
                               None, refused)
