"""plugins/module_utils/traffic/check.py: what a check between weight steps
says of itself (never a password), and the HTTP probe against a real server."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.lcm.openstack.plugins.module_utils.common.errors import InputError, PhaseError
from ansible_collections.lcm.openstack.plugins.module_utils.phase.spec import PhaseRequest, Source
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.check import Check, http_check, masked_url


def _test_phase(**source: Any) -> PhaseRequest:
    return PhaseRequest(type="test", service="keystone", release="keystone", namespace="openstack",
                        source=Source(**source))


def test_check_summaries_never_carry_a_password() -> None:
    assert Check(url="https://admin:s3cr3t-pw@keystone.example.com/v3", expect_status=300).summary == \
        "GET https://admin:********@keystone.example.com/v3 expects 300"
    assert Check(test=_test_phase(chart="/srv/charts/keystone")).summary == "test phase from /srv/charts/keystone"
    assert Check(test=_test_phase(manifests=[{}, {}])).summary == "test phase from 2 manifest(s)"
    assert masked_url("http://k:5000/v3") == "http://k:5000/v3"
    assert masked_url("http://user@k/") == "http://user@k/"


def _answers(answer: Any) -> Any:
    """An opener that answers `answer` (a status, or an exception to raise), each URL logged."""
    asked = []

    def opener(url: str, timeout: float) -> int:
        asked.append((url, timeout))
        if isinstance(answer, Exception):
            raise answer
        return answer
    opener.asked = asked  # type: ignore[attr-defined]
    return opener


def test_the_status_answered_is_compared_with_the_one_expected() -> None:
    opener = _answers(302)
    assert http_check("http://k/moved", 302, 5, opener) is None
    assert opener.asked == [("http://k/moved", 5)]
    assert http_check("http://k/moved", 200, 5, opener) == "GET http://k/moved returned 302, expected 200"


@pytest.mark.parametrize("raised", [
    OSError("<urlopen error [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed>"),
    ValueError("bad header"), TimeoutError("timed out")])
def test_no_answer_says_why(raised: Exception) -> None:
    assert http_check("https://k/v3", 200, 5, _answers(raised)) == f"GET https://k/v3 failed: {raised}"


def test_a_password_never_shows_not_even_in_what_the_library_said() -> None:
    url = "https://admin:p%40ss-W0rd@keystone.example.com/v3"
    said = OSError(f"cannot reach {url} as admin:p@ss-W0rd (p%40ss-W0rd)")
    reason = http_check(url, 200, 5, _answers(said))
    assert reason is not None and "p@ss-W0rd" not in reason and "p%40ss-W0rd" not in reason
    assert reason.startswith("GET https://admin:********@keystone.example.com/v3 failed: cannot reach "
                             "https://admin:********@keystone.example.com/v3")
    assert http_check(url, 200, 5, _answers(500)) == (
        "GET https://admin:********@keystone.example.com/v3 returned 500, expected 200")


def test_a_check_without_an_opener_is_an_error_not_a_pass() -> None:
    with pytest.raises(PhaseError, match="no opener"):
        http_check("http://k/", 200, 5, None)


def test_tls_files_that_are_not_there_are_refused_before_anything_runs(tmp_path: Any) -> None:
    pem = tmp_path / "ca.pem"
    pem.write_text("-----BEGIN CERTIFICATE-----\n")
    Check(url="https://k/", ca_path=str(pem), client_cert=str(pem)).validate()
    with pytest.raises(InputError, match=f"^check.ca_path {tmp_path}/missing.pem is not a readable file"):
        Check(url="https://k/", ca_path=str(tmp_path / "missing.pem")).validate()
    with pytest.raises(InputError, match="^check.client_key goes with check.client_cert, which is missing"):
        Check(url="https://k/", client_key=str(pem)).validate()
