#!/usr/bin/python
# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: traffic
short_description: Drain an OpenStack service's traffic, or roll it out, without a traffic controller
version_added: 0.1.0
author:
  - lcm.openstack developers (@lcm-openstack)
description:
  - Moves a service's traffic with one of three backends, and records each drain
    and rollout that changes something as a C(Phase) of type C(trafficdrain) or
    C(trafficrollout), so it shows in the Phase history and the service's
    C(ServiceLifecycle) record. A successful rollout leaves the service C(Operational).
  - V(service_selector) changes a Service's selector, with server-side apply under the
    field manager C(lcm.openstack-traffic), and then waits, by watch, until the
    Service's EndpointSlices agree. It has two modes, O(selector_mode).
  - O(selector_mode=gate) (the default) needs only the labels the release already renders,
    so it works on stock openstack-helm charts. A drain adds the key
    C(lifecycle.openstack.org/traffic=drained), which no pod carries, to the Service's
    selector, and waits until the EndpointSlices list no endpoint. A rollout removes that
    key, so the Service selects exactly what the release renders, and waits until every
    ready endpoint is a pod of that selector, with at least O(min_ready) of them. A
    rollout whose selector picks no pod fails at once; one whose pods do not get Ready
    within O(timeout) fails and leaves the gate open.
  - O(selector_mode=track) is blue/green for charts whose pods carry a track label; it sets
    one key of the selector, O(selector_label), to the track whose pods get the traffic. A
    rollout waits until every ready endpoint is a pod of O(track), with at least
    O(min_ready) of them; if that does not happen within O(timeout), the previous
    selector is put back when it had ready endpoints. A drain waits until none of the pods
    listed before is listed any more. When none of the pods the Service selects carries
    O(selector_label), the task fails at once.
  - V(ingress_canary) keeps an nginx canary Ingress, C(<ingress>-canary), with the rules of
    O(ingress) pointed at O(canary_service) and the C(canary-weight) annotation. It
    belongs to no Phase, so it outlives them.
  - V(openshift_route) sets the weights of a Route's C(spec.to) (100 - N) and of
    O(canary_service) in C(spec.alternateBackends) (N).
  - With the weight backends a rollout steps through O(steps). After each step it
    pauses O(pause_seconds) and runs O(check). A failed check sets the weight back to 0,
    marks the Phase Failed and fails the task with the check's reason. A drain sets the
    weight to 0, then waits O(drain_grace_seconds).
  - Traffic that is already where the task asks for (the selector set and the
    EndpointSlices agreeing, or the weight at its final value) is C(changed=false),
    and no Phase is created.
  - Without O(selector_service), O(ingress) or O(route) for its backend, the object is the
    one the deployed release renders for the service's own endpoint, read from the release's
    manifest and its values with the chart's defaults (Helm's storage record, or the Helm CLI
    for the C(sql) driver). That is the Service that selects the release's pods (of several,
    the internal host of the endpoint type the chart registers in keystone, C(endpoints.<type>)),
    and the Ingress or Route in front of it. Two that cannot be told apart fail the task,
    listing them. A release that renders no Service (a node agent such as openvswitch) has
    nothing to route - C(changed=false), no Phase, RV(skipped) says why, and a running flow
    of the service records the step as skipped with that reason.
  - With O(end_flow), a move that succeeds (or finds the traffic in place, or nothing to route) also ends
    the service's flow, in the same process, as M(lcm.openstack.service_lifecycle)
    with C(flow.action=end) does - the record's flow and state, the flow's Lease given
    back, the UpdateStatus refreshed once for the move and the end. A move that fails
    leaves the flow running.
  - Needs the CRDs that the C(lcm.openstack.crds) role installs.
options:
  action:
    description: V(rollout) sends the traffic to the new track or canary; V(drain) takes it away.
    type: str
    choices: [drain, rollout]
    required: true
  namespace:
    description: The namespace of the Phase and of the objects whose traffic moves.
    type: str
    required: true
  target_version:
    description: The version of the service that gets the traffic, recorded in the Phase.
    type: str
  backend:
    description: How the traffic is moved.
    type: str
    choices: [service_selector, ingress_canary, openshift_route]
    default: service_selector
  selector_service:
    description:
      - The Kubernetes Service whose selector moves, with O(backend=service_selector).
      - Unset, the Service the deployed release renders for the service's own endpoint.
    type: str
  selector_mode:
    description:
      - How V(service_selector) moves the traffic. V(gate) closes and opens the release's own
        selector and works on any chart; V(track) switches between tracks by O(selector_label)
        and needs pods that carry it.
    type: str
    choices: [gate, track]
    default: gate
  selector_label:
    description: The key of the Service's selector that picks the track (O(selector_mode=track)).
    type: str
    default: track
  track:
    description:
      - The value of O(selector_label) on the pods that get the traffic (rollout, required)
        or that lose it (drain), with O(selector_mode=track). A drain of a track the Service
        does not select changes nothing. Ignored with O(selector_mode=gate).
    type: str
  fallback_track:
    description:
      - Where a drain sends the traffic, with O(selector_mode=track). Unset, the selector gets
        the value C(lcm-drained), which no pod carries, and the Service has no endpoints.
    type: str
  min_ready:
    description: Ready endpoints a rollout waits for (of O(track), or of the release's selector).
    type: int
    default: 1
  ingress:
    description:
      - The primary Ingress, with O(backend=ingress_canary).
      - Unset, the Ingress the deployed release renders in front of its Service.
    type: str
  route:
    description:
      - The Route, with O(backend=openshift_route).
      - Unset, the Route the deployed release renders in front of its Service.
    type: str
  canary_service:
    description:
      - The Service that the canary weight goes to. Required to roll out with the weight
        backends. A drain without it drains the live canary (all alternate backends of a Route).
    type: str
  canary_port:
    description:
      - The canary Service's port, by number or name, in the canary Ingress. Defaults to
        the port of each of the primary's paths.
    type: raw
  steps:
    description: The canary weights, in percent, that a rollout steps through, increasing.
    type: list
    elements: int
    default: [10, 50, 100]
  pause_seconds:
    description: Seconds to pause after each weight step, before its check.
    type: int
    default: 0
  check:
    description:
      - What is checked after each weight step; a failure sets the weight back to 0.
      - Either O(check.url), or O(check.test_phase) with O(check.source).
    type: dict
    suboptions:
      url:
        description:
          - An http or https URL to GET; redirects are not followed.
          - A password in the URL is sent as basic authentication and masked in the Phase,
            the output and every error.
        type: str
      validate_certs:
        description:
          - Verify the certificate of an https URL (against O(check.ca_path), or the
            system's CAs).
          - V(false) trusts any certificate; only for a test bed.
        type: bool
        default: true
      ca_path:
        description:
          - A PEM file of the CAs an https URL's certificate may chain to, on the
            controller, for a service behind a private CA.
        type: path
      client_cert:
        description: A PEM client certificate for an https URL that asks for one.
        type: path
      client_key:
        description: The PEM key of O(check.client_cert), when the certificate file does not hold it.
        type: path
      use_proxy:
        description:
          - Go through the proxy of the environment (C(https_proxy), C(http_proxy),
            C(no_proxy)), as M(ansible.builtin.uri) does.
          - V(false) goes straight to the URL, whatever the environment says.
        type: bool
        default: true
      expect_status:
        description: The HTTP status the GET must answer.
        type: int
        default: 200
      timeout:
        description: Seconds the GET (default 10) or the test Phase (default 600) may take.
        type: int
      test_phase:
        description: Run a test Phase from O(check.source), as M(lcm.openstack.phase) with C(type=test) does.
        type: bool
        default: false
      source:
        description: Where the test phase's objects come from; as the C(source) option of M(lcm.openstack.phase).
        type: dict
        suboptions:
          chart:
            description: A chart directory or archive, C(repo/chart), or an C(oci://) reference.
            type: str
          chart_version:
            description: The chart version, for repository and OCI charts.
            type: str
          values:
            description: Chart values. Strings under keys that look like credentials are masked.
            type: dict
          values_files:
            description: Values files, applied before O(check.source.values).
            type: list
            elements: path
            default: []
          selection:
            description: How to choose the chart's objects (see M(lcm.openstack.phase)).
            type: str
            choices: [templates, stage, annotation, manifests]
          templates:
            description: Template paths in the chart (globs allowed).
            type: list
            elements: str
          stage_value:
            description: The value, as a dotted path, that the chart is rendered with, set to C(test).
            type: str
            default: lifecycle.phase
          manifests:
            description: Plain manifests, as objects or as paths of YAML files.
            type: list
            elements: raw
          values_from_release:
            description: Render with the deployed release's values under O(check.source.values).
            type: bool
            default: false
  timeout:
    description: Seconds the V(service_selector) backend waits for the EndpointSlices.
    type: int
    default: 300
  drain_grace_seconds:
    description:
      - Seconds a drain waits, once the traffic is gone, for open connections to finish.
        Defaults to 0 for V(service_selector) and to 30 for the weight backends, which
        have no endpoints to observe.
    type: int
  end_flow:
    description:
      - End the service's flow once the move succeeded, or found the traffic where it
        should be or nothing to route; the flow playbooks give it to the rollout that is a flow's last step,
        which saves them a module run.
      - The same end as M(lcm.openstack.service_lifecycle) with C(flow.action=end),
        O(end_flow.lifecycle_state) and O(end_flow.reason). A flow ended already with
        the same result and reason changes nothing, so a re-run after an interruption
        ends it again without an error.
      - When the move fails, the flow is not ended; when the end fails, the task fails
        with the move's message and why the end failed.
    type: dict
    suboptions:
      name:
        description: The flow, as started with M(lcm.openstack.service_lifecycle).
        type: str
        required: true
        choices: [greenfield, update, rollback, remove]
      result:
        description: How the flow ended.
        type: str
        choices: [Succeeded, Failed, RolledBack]
        default: Succeeded
      lifecycle_state:
        description: The state the service is left in.
        type: str
        choices: [Planning, Installing, Testing, Operational, Draining, Upgrading, RollingBack, Removing, Removed, Failed]
        default: Operational
      reason:
        description: Why; recorded as the flow's message.
        type: str
requirements:
  - kubernetes >= 29.0.0
  - PyYAML >= 6.0

attributes:
  check_mode:
    support: full
    details:
      - The move is computed, and the Phase and the change are applied with a server-side dry run; the traffic does not move.
      - With O(end_flow), nothing is written and the Lease is kept; RV(lifecycle) is what the record would become.
  diff_mode:
    support: partial
    details:
      - The Service's selector, or the canary Ingress's or the Route's weights, before and after.
      - The Phase that records the move is not shown.

seealso:
  - module: lcm.openstack.phase
    description: Runs the other lifecycle phases.
  - module: lcm.openstack.service_lifecycle
    description: Keeps the ServiceLifecycle record a rollout leaves Operational, and starts and ends flows.
  - name: Design of lcm.openstack
    link: https://github.com/lcm-openstack/lcm.openstack/blob/main/docs/design.md
    description: The traffic backends, and the test between drain and rollout.

extends_documentation_fragment:
  - lcm.openstack.attributes
  - lcm.openstack.attributes.action_group
  - lcm.openstack.attributes.platform
  - lcm.openstack.service
  - kubernetes.core.k8s_auth_options
notes:
  - Check mode reads the live state, validates the change and the Phase with a
    server-side dry run, and reports what would change; diff mode shows the selector
    or the weight before and after.
  - C(spec.selector) of a Service is an atomic map, so the whole selector is applied
    and the field manager C(lcm.openstack-traffic) owns all of it. A selector that is
    already what the run wants is not written again. A Helm 3 upgrade, or a Helm 4 one with
    C(--server-side=false) (how the collection's roles run Helm 4), merges on the client,
    so it keeps the gate key, and the track when the chart does not render O(selector_label),
    while applying the chart's own changes to the other keys. A Helm 4 upgrade with
    server-side apply (Helm 4's default for releases it installed) fails with a conflict on
    C(.spec.selector) while it is drained; C(--force-conflicts) puts the chart's selector
    back, which opens the gate.
  - The weights of a Route are relative; with other alternate backends than
    O(canary_service), the percentages are of their sum.
"""

EXAMPLES = r"""
- name: Take keystone's traffic away before the database upgrade (stock openstack-helm chart)
  lcm.openstack.traffic:
    action: drain
    service: keystone
    namespace: openstack
    selector_service: keystone-api

- name: Take neutron's traffic away from the Service its release renders (neutron-server)
  lcm.openstack.traffic:
    action: drain
    service: neutron
    namespace: openstack

- name: Give it back once the upgraded pods are Ready
  lcm.openstack.traffic:
    action: rollout
    service: keystone
    namespace: openstack
    target_version: "2025.2"
    selector_service: keystone-api
    min_ready: 2

- name: Send keystone's traffic to the pods of the new track (blue/green, pods labelled track)
  lcm.openstack.traffic:
    action: rollout
    service: keystone
    namespace: openstack
    target_version: "2025.2"
    selector_service: keystone-api
    selector_mode: track
    track: "2025.2"
    min_ready: 2

- name: Open the gate after a greenfield install and test, and end the flow in the same run
  lcm.openstack.traffic:
    action: rollout
    service: keystone
    namespace: openstack
    target_version: "2025.1"
    selector_service: keystone-api
    end_flow:
      name: greenfield
  register: keystone_rollout

- name: Print the flow's summary
  ansible.builtin.debug:
    msg: "{{ keystone_rollout.report }}"

- name: Canary through nginx, checking the API after each step
  lcm.openstack.traffic:
    action: rollout
    service: keystone
    namespace: openstack
    backend: ingress_canary
    ingress: keystone
    canary_service: keystone-api-canary
    steps: [10, 50, 100]
    pause_seconds: 60
    check:
      url: https://keystone.example.com/v3
      expect_status: 200
      ca_path: /etc/pki/openstack/ca.pem  # the cloud's private CA

- name: Canary on an OpenShift Route, running the chart's tests after each step
  lcm.openstack.traffic:
    action: rollout
    service: glance
    namespace: openstack
    backend: openshift_route
    route: glance
    canary_service: glance-api-canary
    check:
      test_phase: true
      source:
        chart: /srv/charts/glance
"""

RETURN = r"""
phase:
  description:
    - The Phase that recorded the run, as it ended (in check mode, as it would start).
    - C(null) when nothing had to change.
  returned: always
  type: dict
  sample:
    name: keystone-trafficrollout-3f2a1c0d
    type: trafficrollout
    state: Succeeded
    message: "Service keystone-api selects the release's pods: 2 ready endpoint(s)"
backend:
  description: The backend used.
  returned: always
  type: str
  sample: service_selector
before:
  description: The selector (V(service_selector)) or the canary weight and Service, as found.
  returned: always
  type: dict
  sample: {selector: {application: keystone, component: api, lifecycle.openstack.org/traffic: drained}}
after:
  description: The selector or the weight as the run left it (or, in check mode, would leave it).
  returned: always
  type: dict
  sample: {selector: {application: keystone, component: api}}
endpoints:
  description:
    - The Service's endpoints as the EndpointSlices list them at the end, with each pod's
      track with O(selector_mode=track).
  returned: backend=service_selector
  type: list
  elements: dict
  sample:
    - {pod: keystone-api-7d9f-abcde, ready: true}
steps_done:
  description: The weights set, in order (V(0) for a drain).
  returned: always
  type: list
  elements: int
  sample: [10, 50, 100]
target:
  description:
    - The object whose traffic moved, and how it was chosen (V(given) when named).
    - With nothing to route, C(name) is empty.
  returned: always
  type: dict
  sample: {kind: Service, name: neutron-server, why: the only Service of release neutron that selects its pods}
skipped:
  description:
    - Why nothing moved when the release has nothing to route; the step is recorded as skipped,
      with this reason, on the service's running flow.
  returned: when the release renders no Service
  type: str
  sample: "release openvswitch renders no Service: nothing to route"
message:
  description: One line on where the traffic is.
  returned: always
  type: str
  sample: Ingress keystone-canary sends 100% to Service keystone-api-canary after 3 step(s)
lifecycle:
  description:
    - The service's ServiceLifecycle after the flow's end (in check mode, as it would become),
      as M(lcm.openstack.service_lifecycle) returns it.
  returned: with O(end_flow)
  type: dict
  contains:
    state:
      description: The service's state.
      type: str
      sample: Operational
    current_version:
      description: The version the service runs.
      type: str
      sample: "2025.1"
    flow:
      description:
        - The flow record, with C(phases), one entry per Phase (phase, result, duration_seconds, name).
        - C(skipped), one entry per step the flow did not take (phase, reason).
      type: dict
report:
  description: The flow's phases as a table, for humans, as M(lcm.openstack.service_lifecycle) returns it.
  returned: with O(end_flow)
  type: str
  sample: |-
    keystone (openstack): greenfield flow Succeeded, version 2025.1; service Operational
    PHASE    RESULT     DURATION  PHASE RESOURCE
    install  Succeeded  12s       keystone-install-0a1b2c3d
    test     Succeeded  5s        keystone-test-4e5f6a7b
    total 19s
lease:
  description: What became of the service's flow Lease when the flow ended.
  returned: with O(end_flow), outside check mode
  type: str
  sample: released
"""

from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.common import (
    auth_argument_spec, source_options, service_argument_spec,
)
from ansible_collections.lcm.openstack.plugins.module_utils.adapter.traffic import run
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.backends import ACTIONS, BACKENDS, SELECTOR_MODES
from ansible_collections.lcm.openstack.plugins.module_utils.lifecycle.flow import FLOW_RESULTS, FLOWS, SERVICE_STATES


def argument_spec():
    spec = dict(
        action=dict(type="str", required=True, choices=list(ACTIONS)),
        namespace=dict(type="str", required=True),
        target_version=dict(type="str"),
        backend=dict(type="str", default="service_selector",
                     choices=list(BACKENDS)),
        selector_service=dict(type="str"),
        selector_mode=dict(type="str", default="gate", choices=list(SELECTOR_MODES)),
        selector_label=dict(type="str", default="track"),
        track=dict(type="str"),
        fallback_track=dict(type="str"),
        min_ready=dict(type="int", default=1),
        ingress=dict(type="str"),
        route=dict(type="str"),
        canary_service=dict(type="str"),
        canary_port=dict(type="raw"),
        steps=dict(type="list", elements="int", default=[10, 50, 100]),
        pause_seconds=dict(type="int", default=0),
        check=dict(type="dict", options=dict(
            url=dict(type="str"),
            validate_certs=dict(type="bool", default=True),
            ca_path=dict(type="path"),
            client_cert=dict(type="path"),
            client_key=dict(type="path", no_log=False),
            use_proxy=dict(type="bool", default=True),
            expect_status=dict(type="int", default=200),
            timeout=dict(type="int"),
            test_phase=dict(type="bool", default=False),
            source=dict(type="dict", options=source_options()),
        ), mutually_exclusive=[("url", "source")]),
        timeout=dict(type="int", default=300),
        drain_grace_seconds=dict(type="int"),
        end_flow=dict(type="dict", options=dict(
            name=dict(type="str", required=True, choices=list(FLOWS)),
            result=dict(type="str", default="Succeeded", choices=list(FLOW_RESULTS)),
            lifecycle_state=dict(type="str", default="Operational", choices=list(SERVICE_STATES)),
            reason=dict(type="str"),
        )),
    )
    spec.update(service_argument_spec())
    spec.update(auth_argument_spec())
    return spec


def main():
    module = AnsibleK8SModule(argument_spec=argument_spec(), supports_check_mode=True)
    run(module)


if __name__ == "__main__":
    main()
