"""plugins/module_utils/adapter/urls.py: a traffic check's GET through
Ansible's URL helpers, against a local HTTPS server whose certificate a CA
made for the test signed, and through a local proxy named by the environment."""

from __future__ import annotations

import base64
import datetime
import http.server
import ipaddress
import ssl
import threading
from pathlib import Path
from typing import Any, Iterator, List

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ansible_collections.lcm.openstack.plugins.module_utils.adapter.urls import url_opener
from ansible_collections.lcm.openstack.plugins.module_utils.traffic.check import Check, http_check

PASSWORD = "s3cr3t-Basic-pw"


def _pem(path: Path, *blobs: bytes) -> str:
    path.write_bytes(b"".join(blobs))
    return str(path)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A throwaway CA, and a certificate it signed for 127.0.0.1."""
    out = tmp_path_factory.mktemp("pki")
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "lcm test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(hours=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "keystone")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return {"ca": _pem(out / "ca.pem", ca.public_bytes(pem)),
            "server": _pem(out / "server.pem", cert.public_bytes(pem), key_pem)}


class _Handler(http.server.BaseHTTPRequestHandler):
    """/ok 200, /moved a redirect to /ok, /auth 200 with the right basic credentials (else 401);
    as a proxy (an absolute URL asked), 203 and the URL it was asked for logged."""
    seen: List[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.seen.append(self.path)
        if self.path.startswith("http://"):
            self.send_response(203)
        elif self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/ok")
        elif self.path == "/auth":
            good = "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()
            self.send_response(200 if self.headers.get("Authorization") == good else 401)
        else:
            self.send_response(200 if self.path == "/ok" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def _serve(context: Any = None) -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    if context is not None:
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"{'https' if context else 'http'}://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def https(pki: dict) -> Iterator[str]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki["server"])
    yield from _serve(context)


@pytest.fixture
def proxy() -> Iterator[str]:
    _Handler.seen = []
    yield from _serve()


@pytest.fixture(autouse=True)
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy",
                 "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


def _check(url: str, expect: int = 200, **options: Any) -> Any:
    check = Check(url=url, expect_status=expect, **options)
    return http_check(url, expect, 5, url_opener(check))


def test_a_certificate_of_a_private_ca_fails_without_ca_path_and_passes_with_it(https: str, pki: dict) -> None:
    reason = _check(f"{https}/ok")
    assert reason is not None and reason.startswith(f"GET {https}/ok failed: ")
    assert "CERTIFICATE_VERIFY_FAILED" in reason or "certificate verify failed" in reason
    assert _check(f"{https}/ok", ca_path=pki["ca"]) is None


def test_validate_certs_false_trusts_any_certificate(https: str) -> None:
    assert _check(f"{https}/ok", validate_certs=False) is None


def test_a_redirect_is_the_answer_not_followed(https: str, pki: dict) -> None:
    assert _check(f"{https}/moved", 302, ca_path=pki["ca"]) is None
    assert _check(f"{https}/moved", 200, ca_path=pki["ca"]) == f"GET {https}/moved returned 302, expected 200"
    assert _check(f"{https}/nothing", 200, ca_path=pki["ca"]) == f"GET {https}/nothing returned 404, expected 200"


def test_the_urls_credentials_go_as_basic_auth_and_never_into_a_reason(https: str, pki: dict) -> None:
    host = https.split("//", 1)[1]
    assert _check(f"https://admin:{PASSWORD}@{host}/auth", ca_path=pki["ca"]) is None
    wrong = _check(f"https://admin:{PASSWORD}x@{host}/auth", ca_path=pki["ca"])
    assert wrong == f"GET https://admin:********@{host}/auth returned 401, expected 200"
    untrusted = _check(f"https://admin:{PASSWORD}@{host}/auth")
    assert untrusted is not None and PASSWORD not in untrusted and untrusted.startswith(
        f"GET https://admin:********@{host}/auth failed: ")


def test_the_proxy_of_the_environment_is_used_unless_use_proxy_is_false(
        proxy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("http_proxy", proxy)
    # service.invalid resolves nowhere: only the proxy can answer for it
    assert _check("http://service.invalid/v3", 203) is None
    assert _Handler.seen == ["http://service.invalid/v3"]
    reason = _check("http://service.invalid/v3", 203, use_proxy=False)
    assert reason is not None and reason.startswith("GET http://service.invalid/v3 failed: ")
    assert _Handler.seen == ["http://service.invalid/v3"]  # straight, not through the proxy
    monkeypatch.setenv("no_proxy", "service.invalid")
    assert _check("http://service.invalid/v3", 203) is not None and len(_Handler.seen) == 1
