# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every request a module makes survives a blip, not only those it guards.

transient.retry guards the calls that matter most (status writes, applies,
the wait); but a module makes many more (discovery, the reads before a phase
starts, the Lease, the ServiceLifecycle), and with connections dropped every
few seconds one unguarded call in a hundred is enough to fail a task that
nothing was wrong with. So the client's one funnel for HTTP requests
(kubernetes.client.ApiClient.call_api, which the dynamic client's
every request goes through) tries a request again when it failed
transiently (transient.is_transient), within REQUEST_SECONDS.

Sent again, a request that had landed answers as if it were new: a create
meets 409 (phase_record.create and the Lease recognise their own object), a
delete 404 (gone is what it wanted), a replace 409 on its resourceVersion
(its callers read again). Reads, patches and server-side applies are the
same the second time. A watch's first request is tried again too; a watch
that breaks later is the waiter's to resume.

The body is read inside the retry. Since kubernetes 34 call_api returns as
soon as the headers are in, and the dynamic client reads the body after it
returns: a connection cut in the middle of a response (IncompleteRead) then
escaped every guard. So the body of anything but a stream (a watch, a log
followed) is read here, where a cut sends the request again; the client
finds it read.

Until the first request has been answered, though, nothing says the
apiserver was ever there: a wrong server, a closed port, a name that does
not resolve are no blip. The first contact (the client's construction, its
discovery, or the first request of a client whose discovery was cached)
connects with a short timeout (FIRST_CONNECT_SECONDS, per attempt) and is
tried again for FIRST_CONTACT_SECONDS only, so a cluster that cannot be
reached fails the task in seconds, not after the retries meant for a
restart during work.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Sequence

from ansible_collections.lcm.openstack.plugins.module_utils.common import transient

# An apiserver restart takes seconds; a request does not wait for longer.
REQUEST_SECONDS = 30.0
# The first contact: connect within this (urllib3 tries a connection 4 times),
# and try again through a transient failure for this long (two more attempts).
FIRST_CONNECT_SECONDS = 1.0
FIRST_CONTACT_SECONDS = 2.0


def first_contact_timeout(kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """call_api's keyword arguments with a short connect timeout, unless the
    caller set one; the read keeps no limit, as the client's default."""
    if kwargs.get("_request_timeout") is None:
        kwargs = dict(kwargs, _request_timeout=(FIRST_CONNECT_SECONDS, None))
    return kwargs


def retrying(dyn: Any) -> Any:
    """The dynamic client `dyn`, its requests tried again through transient failures."""
    api = getattr(dyn, "client", None)
    if api is None or getattr(api, "_lcm_retrying", False):
        return dyn
    send = api.call_api
    contacted = [bool(getattr(api, "_lcm_contacted", False))]

    def call_api(*args: Any, **kwargs: Any) -> Any:
        first = not contacted[0]
        sent_kwargs = first_contact_timeout(kwargs) if first else kwargs

        def sent() -> Any:
            response = send(*args, **sent_kwargs)
            if _read_later(response) and not _streamed(args, kwargs):
                response.read()  # kept by the response; the client's own read finds it
            return response
        try:
            response = transient.retry(sent, budget=FIRST_CONTACT_SECONDS if first else REQUEST_SECONDS)
        except Exception as exc:  # noqa: BLE001 - only noted, raised as it is
            contacted[0] = contacted[0] or bool(getattr(exc, "status", None))  # an HTTP answer is a contact
            raise
        contacted[0] = True
        return response
    api.call_api = call_api
    api._lcm_retrying = True  # pylint: disable=protected-access
    return dyn


# A request whose response is a stream, read as it comes: its URL's query, or
# (kubernetes < 34) the caller's _preload_content=False.
_STREAM = re.compile(r"[?&](watch|follow)=true(&|$)", re.IGNORECASE)


def _read_later(response: Any) -> bool:
    """A response whose body is still to be read (kubernetes.client.rest.RESTResponse)."""
    return callable(getattr(response, "read", None)) and hasattr(response, "response")


def _streamed(args: Sequence[Any], kwargs: Dict[str, Any]) -> bool:
    if kwargs.get("_preload_content") is False:
        return True
    return any(isinstance(a, str) and _STREAM.search(a) for a in list(args) + [kwargs.get("url")])
