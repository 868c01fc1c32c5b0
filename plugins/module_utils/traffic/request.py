# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a traffic move is asked to do, and whether that can be done.

Apart from the runner (traffic/runner.py) so that the request is read and
refused before anything in the cluster is touched, and so that the backends
and the adapter can name it without the runner's machinery.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Union

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.backends import ACTIONS, BACKENDS, SELECTOR_MODES
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.check import Check

DEFAULT_GRACE = {"service_selector": 0, "ingress_canary": 30, "openshift_route": 30}


@dataclass
class TrafficRequest:
    action: str
    service: str
    release: str
    namespace: str
    backend: str = "service_selector"
    target_version: str = ""
    # service_selector
    selector_service: Optional[str] = None
    selector_mode: str = "gate"
    selector_label: str = "track"
    track: Optional[str] = None
    fallback_track: Optional[str] = None
    min_ready: int = 1
    # ingress_canary and openshift_route
    ingress: Optional[str] = None
    route: Optional[str] = None
    canary_service: Optional[str] = None
    canary_port: Union[int, str, None] = None
    steps: Sequence[int] = (10, 50, 100)
    pause_seconds: int = 0
    check: Optional[Check] = None
    timeout: int = 300
    drain_grace_seconds: Optional[int] = None

    @property
    def phase_type(self) -> str:
        return f"traffic{self.action}"

    @property
    def target(self) -> Optional[str]:
        """The object whose traffic moves: Service, primary Ingress or Route.
        None: the one the release renders for the service (traffic/release_target.py)."""
        return {"service_selector": self.selector_service, "ingress_canary": self.ingress,
                "openshift_route": self.route}.get(self.backend)

    @property
    def grace(self) -> int:
        return DEFAULT_GRACE.get(self.backend, 0) if self.drain_grace_seconds is None else self.drain_grace_seconds

    @property
    def check_summary(self) -> Optional[str]:
        return self.check.summary if self.check else None

    def validate(self) -> None:
        if self.action not in ACTIONS:
            raise InputError(f"unknown action {self.action!r}; use drain or rollout")
        if self.backend not in BACKENDS:
            raise InputError(f"unknown backend {self.backend!r}; use one of {', '.join(BACKENDS)}")
        for name, value in (("pause_seconds", self.pause_seconds), ("min_ready", self.min_ready),
                            ("drain_grace_seconds", self.grace)):
            if value < 0:
                raise InputError(f"{name} must not be negative")
        if self.timeout < 1:
            raise InputError("timeout must be at least 1")
        if self.backend == "service_selector":
            self._validate_selector()
        elif self.action == "rollout":
            self._validate_weights()

    def _validate_selector(self) -> None:
        if self.selector_mode not in SELECTOR_MODES:
            raise InputError(f"unknown selector_mode {self.selector_mode!r}; use gate or track")
        if self.selector_mode == "gate":
            if self.fallback_track:
                raise InputError("fallback_track applies to selector_mode track; a gate drain sends the traffic "
                                 "nowhere until the rollout")
        elif self.action == "rollout" and not self.track:
            raise InputError("track is required to roll out with backend service_selector: the value of "
                             f"{self.selector_label} that the pods to get traffic carry")
        if self.check is not None:
            raise InputError("check applies to the weight backends (ingress_canary, openshift_route); "
                             "backend service_selector checks the EndpointSlices")

    def _validate_weights(self) -> None:
        if not self.canary_service:
            raise InputError(f"canary_service is required to roll out with backend {self.backend}")
        steps = list(self.steps)
        if not steps or any(not 0 <= s <= 100 for s in steps) or steps != sorted(set(steps)):
            raise InputError(f"steps must be increasing weights between 0 and 100, not {steps}")
        if self.check is not None:
            self.check.validate()
