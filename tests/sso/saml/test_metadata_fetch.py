"""IdP metadata by URL (issue 7 item 7): the guarded fetch, the refresh command, certificate rotation.

A real HTTP server on loopback serves the metadata; its origin is trusted where a test needs the fetch
to reach it, because loopback is exactly what the SSRF rules refuse otherwise.
"""

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from authservice.errors import APIError
from authservice.models import Session
from sso.models import SsoProvider
from sso.saml import metadata_fetch
from tests.conftest import BASE, ORIGIN
from tests.sso.saml import idp_signer
from tests.sso.saml.idp_signer import Claims

pytestmark = pytest.mark.django_db

IDP_ENTITY = "https://idp.rotating.test/entity"
IDP_SSO = "https://idp.rotating.test/sso"


class MetadataServer:
    """Serves ``routes[path] = (status, body, headers, delay)``; ``hits`` lists the paths asked for."""

    def __init__(self):
        self.routes = {}
        self.hits = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802 - http.server's name
                server.hits.append(self.path)
                status, body, headers, delay = server.routes.get(self.path, (404, b"nf", {}, 0))
                if delay:
                    time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/samlmetadata+xml")
                    for key, value in headers.items():
                        self.send_header(key, value)
                    if callable(body):  # a stream without Content-Length
                        self.send_header("Connection", "close")
                        self.end_headers()
                        body(self.wfile)
                        return
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # clients hanging up mid-stream
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def set(self, path, body, status=200, headers=None, delay=0):
        if isinstance(body, str):
            body = body.encode()
        self.routes[path] = (status, body, headers or {}, delay)

    def redirect(self, path, location, status=302):
        self.set(path, b"", status=status, headers={"Location": location})

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    idp_signer.require_binaries()
    directory = tmp_path_factory.mktemp("metadata-keys")
    return {name: idp_signer.make_keypair(directory, name) for name in ("old", "new", "other")}


@pytest.fixture
def server():
    running = MetadataServer()
    yield running
    running.close()


@pytest.fixture
def trusted(server, configure):
    configure(trusted_origins=[server.url])
    return server


def metadata(keys, *names, entity=IDP_ENTITY):
    return idp_signer.idp_metadata(entity, IDP_SSO, *(keys[name] for name in names))


def refused(call, code):
    with pytest.raises(APIError) as caught:
        call()
    assert caught.value.code == code, caught.value
    return caught.value


# --- the guarded fetch ---------------------------------------------------------------------------
def test_metadata_in_a_trusted_origin_is_fetched(trusted, keys):
    trusted.set("/md", metadata(keys, "old"))
    assert metadata_fetch.fetch_metadata(f"{trusted.url}/md") == metadata(keys, "old")


def test_plain_http_outside_the_trusted_origins_is_refused_before_any_request(server, keys):
    server.set("/md", metadata(keys, "old"))
    refused(lambda: metadata_fetch.fetch_metadata(f"{server.url}/md"), "SAML_METADATA_URL_INVALID")
    assert server.hits == []


@pytest.mark.parametrize("url", ["ftp://idp.example.com/md", "file:///etc/passwd", "https://user:pw@idp.example.com/md",
                                 "not a url", "https:///md"])
def test_urls_that_are_not_plain_https_are_refused(url):
    refused(lambda: metadata_fetch.fetch_metadata(url), "SAML_METADATA_URL_INVALID")


@pytest.mark.parametrize("host", ["127.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "0x7f.0.0.1", "127.1", "localhost",
                                  "10.0.0.1", "169.254.169.254", "[fe80::1]", "0.0.0.0"])
def test_https_to_a_private_or_loopback_address_is_refused(host, server):
    url = f"https://{host}:{server.port}/md"
    refused(lambda: metadata_fetch.fetch_metadata(url), "SAML_METADATA_URL_PRIVATE_HOST")
    assert server.hits == []


def test_the_private_address_check_applies_to_the_resolved_name(server):
    # "0x7f.0.0.1" is not an IP literal to a URL parser, but the resolver turns it into 127.0.0.1.
    refused(lambda: metadata_fetch.fetch_metadata(f"https://0x7f.0.0.1:{server.port}/md"),
            "SAML_METADATA_URL_PRIVATE_HOST")


def test_the_next_checked_address_is_tried_when_the_first_refuses(server, keys, configure, monkeypatch):
    # A dual-stack name whose IPv6 address does not answer (the server listens on IPv4 only). Only DNS is
    # faked: one lookup, both answers checked, then tried in order.
    real, lookups = socket.getaddrinfo, []

    def dual_stack(host, port, *args, **kwargs):
        if host != "dual.idp.test":
            return real(host, port, *args, **kwargs)
        lookups.append(host)
        return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::1", port, 0, 0)),
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    monkeypatch.setattr(socket, "getaddrinfo", dual_stack)
    configure(trusted_origins=[f"http://dual.idp.test:{server.port}"])
    server.set("/md", metadata(keys, "old"))
    assert metadata_fetch.fetch_metadata(f"http://dual.idp.test:{server.port}/md") == metadata(keys, "old")
    assert lookups == ["dual.idp.test"]


def test_a_redirect_within_the_trusted_origin_is_followed(trusted, keys):
    trusted.redirect("/old-place", "/md")
    trusted.set("/md", metadata(keys, "old"))
    assert metadata_fetch.fetch_metadata(f"{trusted.url}/old-place") == metadata(keys, "old")
    assert trusted.hits == ["/old-place", "/md"]


def test_a_redirect_to_a_private_address_is_refused(trusted, keys):
    target = MetadataServer()
    try:
        target.set("/md", metadata(keys, "old"))
        trusted.redirect("/md", f"https://127.0.0.1:{target.port}/md")
        refused(lambda: metadata_fetch.fetch_metadata(f"{trusted.url}/md"), "SAML_METADATA_URL_PRIVATE_HOST")
        assert target.hits == []
    finally:
        target.close()


def test_a_redirect_to_plain_http_outside_the_trusted_origins_is_refused(trusted, keys):
    target = MetadataServer()
    try:
        target.set("/md", metadata(keys, "old"))
        trusted.redirect("/md", f"{target.url}/md")
        refused(lambda: metadata_fetch.fetch_metadata(f"{trusted.url}/md"), "SAML_METADATA_URL_INVALID")
        assert target.hits == []
    finally:
        target.close()


def test_a_redirect_loop_stops(trusted):
    trusted.redirect("/a", "/b")
    trusted.redirect("/b", "/a")
    error = refused(lambda: metadata_fetch.fetch_metadata(f"{trusted.url}/a"), "SAML_METADATA_FETCH_FAILED")
    assert "too many redirects" in error.message
    assert len(trusted.hits) == metadata_fetch.MAX_REDIRECTS + 1


def test_a_slow_server_times_out(trusted, keys, configure_sso):
    configure_sso(discovery_timeout=0.5)
    trusted.set("/md", metadata(keys, "old"), delay=2)
    started = time.monotonic()
    error = refused(lambda: metadata_fetch.fetch_metadata(f"{trusted.url}/md"), "SAML_METADATA_FETCH_FAILED")
    assert error.status_code == 502 and "timed out" in error.message
    assert time.monotonic() - started < 2


def test_a_declared_length_over_the_cap_is_refused_unread(trusted):
    trusted.set("/md", b"<" + b"x" * (100 * 1024) + b">")
    error = refused(lambda: metadata_fetch.fetch_metadata(f"{trusted.url}/md"), "SAML_METADATA_TOO_LARGE")
    assert error.message == "IdP metadata exceeds maximum allowed size (102400 bytes)"


def test_an_endless_stream_is_abandoned_at_the_cap(trusted):
    sent = []

    def endless(wfile):
        chunk = b"<a>" + b"x" * 8192
        for _ in range(10_000):  # 80 MB if nobody stops reading
            wfile.write(chunk)
            sent.append(len(chunk))

    trusted.set("/md", endless)
    refused(lambda: metadata_fetch.fetch_metadata(f"{trusted.url}/md"), "SAML_METADATA_TOO_LARGE")
    time.sleep(0.2)
    assert sum(sent) < 10 * 1024 * 1024


def test_the_cap_follows_the_max_metadata_size_setting(trusted, keys, configure_sso):
    configure_sso(saml={"max_metadata_size": 200})
    trusted.set("/md", metadata(keys, "old"))
    error = refused(lambda: metadata_fetch.fetch_metadata(f"{trusted.url}/md"), "SAML_METADATA_TOO_LARGE")
    assert "(200 bytes)" in error.message


def test_an_error_status_is_a_failed_fetch(trusted):
    trusted.set("/md", b"down", status=503)
    error = refused(lambda: metadata_fetch.fetch_metadata(f"{trusted.url}/md"), "SAML_METADATA_FETCH_FAILED")
    assert error.status_code == 502 and "HTTP 503" in error.message


def test_a_compressed_body_is_refused(trusted, keys):
    trusted.set("/md", b"\x1f\x8b\x08\x00", headers={"Content-Encoding": "gzip"})
    refused(lambda: metadata_fetch.fetch_metadata(f"{trusted.url}/md"), "SAML_METADATA_FETCH_FAILED")


@pytest.mark.parametrize("body", [
    "<html><body>Login</body></html>",
    '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>',
    "not xml at all",
])
def test_a_document_that_is_not_idp_metadata_is_refused(trusted, body):
    trusted.set("/md", body)
    refused(lambda: metadata_fetch.fetch_metadata(f"{trusted.url}/md"), "SAML_INVALID_IDP_METADATA")


def test_metadata_with_a_doctype_is_refused(trusted, keys):
    doc = metadata(keys, "old").replace(
        "?>\n", '?>\n<!DOCTYPE md [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n', 1)
    trusted.set("/md", doc)
    refused(lambda: metadata_fetch.fetch_metadata(f"{trusted.url}/md"), "SAML_INVALID_IDP_METADATA")


def test_metadata_without_a_signing_certificate_is_refused(trusted, keys):
    trusted.set("/md", idp_signer.idp_metadata(IDP_ENTITY, IDP_SSO))
    refused(lambda: metadata_fetch.fetch_metadata(f"{trusted.url}/md"), "SAML_INVALID_IDP_METADATA")


# --- registration --------------------------------------------------------------------------------
def saml_register_body(provider_id, url, **config):
    return {
        "providerId": provider_id,
        "issuer": f"{ORIGIN}/sp/{provider_id}",
        "domain": "acme.com",
        "samlConfig": {"entryPoint": IDP_SSO, "idpMetadata": {"url": url}, **config},
    }


def test_registration_fetches_the_metadata_url(trusted, keys, sign_in):
    trusted.set("/md", metadata(keys, "old"))
    owner = sign_in()
    response = owner.api_post("/sso/register", saml_register_body("rot", f"{trusted.url}/md"))
    assert response.status_code == 200, response.content
    stored = SsoProvider.objects.get(provider_id="rot").saml_config
    assert stored["idpMetadata"] == {"url": f"{trusted.url}/md", "metadata": metadata(keys, "old")}


def test_registration_with_a_private_metadata_url_fails_and_stores_nothing(server, keys, sign_in):
    server.set("/md", metadata(keys, "old"))
    owner = sign_in()
    response = owner.api_post("/sso/register", saml_register_body("rot", f"https://127.0.0.1:{server.port}/md"))
    assert response.status_code == 400
    assert response.json()["code"] == "SAML_METADATA_URL_PRIVATE_HOST"
    assert not SsoProvider.objects.exists()
    assert server.hits == []


# --- refresh -------------------------------------------------------------------------------------
@pytest.fixture
def owner(make_user):
    return make_user(email="owner@acme.com")


def url_provider(owner, url, xml, provider_id="rot", **extra):
    """A provider as registration leaves it: the URL and the copy fetched then."""
    idp = {"url": url, "metadata": xml, **extra}
    return SsoProvider.objects.create(
        provider_id=provider_id, issuer=f"{ORIGIN}/sp/{provider_id}", domain="acme.com", user=owner,
        domain_verified=True, saml_config={"issuer": f"{ORIGIN}/sp/{provider_id}", "entryPoint": IDP_SSO,
                                           "idpMetadata": idp, "wantAssertionsSigned": True})


def run_refresh(*args):
    out, err = StringIO(), StringIO()
    call_command("sso_refresh_metadata", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_the_command_stores_changed_metadata(trusted, keys, owner):
    provider = url_provider(owner, f"{trusted.url}/md", metadata(keys, "old"))
    trusted.set("/md", metadata(keys, "new"))
    out, _ = run_refresh()
    assert "rot: updated" in out
    provider.refresh_from_db()
    assert provider.saml_config["idpMetadata"]["metadata"] == metadata(keys, "new")
    assert provider.saml_config["idpMetadata"]["url"] == f"{trusted.url}/md"


def test_unchanged_metadata_leaves_the_row_alone(trusted, keys, owner):
    provider = url_provider(owner, f"{trusted.url}/md", metadata(keys, "old"))
    before = provider.updated_at
    trusted.set("/md", metadata(keys, "old"))
    out, _ = run_refresh("rot")
    assert "rot: unchanged" in out
    provider.refresh_from_db()
    assert provider.updated_at == before


def test_a_failed_fetch_keeps_the_last_good_copy_and_fails_the_command(trusted, keys, owner):
    provider = url_provider(owner, f"{trusted.url}/md", metadata(keys, "old"))
    trusted.set("/md", b"oops", status=500)
    with pytest.raises(CommandError, match="rot"):
        run_refresh()
    provider.refresh_from_db()
    assert provider.saml_config["idpMetadata"]["metadata"] == metadata(keys, "old")


def test_one_failing_provider_does_not_stop_the_others(trusted, keys, owner):
    url_provider(owner, f"{trusted.url}/broken", metadata(keys, "old"), provider_id="broken")
    good = url_provider(owner, f"{trusted.url}/md", metadata(keys, "old"), provider_id="good")
    trusted.set("/md", metadata(keys, "new"))
    with pytest.raises(CommandError, match="broken"):
        run_refresh()
    good.refresh_from_db()
    assert good.saml_config["idpMetadata"]["metadata"] == metadata(keys, "new")


def test_metadata_of_another_entity_is_refused_on_refresh(trusted, keys, owner):
    provider = url_provider(owner, f"{trusted.url}/md", metadata(keys, "old"))
    trusted.set("/md", metadata(keys, "other", entity="https://evil.test/entity"))
    with pytest.raises(CommandError):
        run_refresh()
    provider.refresh_from_db()
    assert provider.saml_config["idpMetadata"]["metadata"] == metadata(keys, "old")


def test_a_metadata_url_that_became_private_is_not_fetched(server, keys, owner):
    # Trusted at registration, no longer trusted now: the refresh re-checks the rules.
    url_provider(owner, f"{server.url}/md", metadata(keys, "old"))
    server.set("/md", metadata(keys, "new"))
    with pytest.raises(CommandError):
        run_refresh()
    assert server.hits == []


def test_allow_rekey_needs_named_providers(owner):
    with pytest.raises(CommandError, match="--allow-rekey needs the provider ids"):
        run_refresh("--allow-rekey")


def test_the_command_names_unknown_providers(owner):
    with pytest.raises(CommandError, match="No SAML provider: nope"):
        run_refresh("nope")


def test_the_command_skips_providers_without_a_metadata_url(owner, keys):
    SsoProvider.objects.create(provider_id="plain", issuer=f"{ORIGIN}/sp/plain", domain="acme.com", user=owner,
                               saml_config={"entryPoint": IDP_SSO, "cert": keys["old"].cert_pem,
                                            "idpMetadata": {"entityID": IDP_ENTITY}})
    out, _ = run_refresh()
    assert "0 provider(s), 0 failed" in out
    with pytest.raises(CommandError, match="No samlConfig.idpMetadata.url: plain"):
        run_refresh("plain")


# --- certificate rotation through the ACS -------------------------------------------------------
def sign_in_saml(api, provider_id):
    response = api.api_post("/sign-in/sso", {"providerId": provider_id, "callbackURL": "/dashboard",
                                             "errorCallbackURL": "/sso-error"})
    assert response.status_code == 200, response.content
    query = parse_qs(urlsplit(response.json()["url"]).query)
    return idp_signer.request_id(query["SAMLRequest"][0]), query["RelayState"][0]


def post_signed_response(api, provider_id, keypair, tmp_path):
    request_id, relay_state = sign_in_saml(api, provider_id)
    acs = f"{ORIGIN}{BASE}/sso/saml2/callback/{provider_id}"
    claims = Claims(issuer=IDP_ENTITY, destination=acs, audience=f"{ORIGIN}/sp/{provider_id}",
                    in_response_to=request_id)
    xml = idp_signer.response_xml(claims)
    xml = idp_signer.sign(xml, keypair, claims.assertion_id, tmp_path)
    xml = idp_signer.sign(xml, keypair, claims.response_id, tmp_path)
    return api.post(f"{BASE}/sso/saml2/callback/{provider_id}",
                    urlencode({"SAMLResponse": idp_signer.encode(xml), "RelayState": relay_state}),
                    content_type="application/x-www-form-urlencoded")


def test_a_rotated_certificate_is_picked_up_by_an_explicit_rekey(trusted, keys, owner, api, tmp_path):
    # Accounts are linked after the first sign-in, so new keys need the administrator's --allow-rekey (I5).
    pytest.importorskip("sso.saml.acs")
    url_provider(owner, f"{trusted.url}/md", metadata(keys, "old"))
    assert post_signed_response(api, "rot", keys["old"], tmp_path)["Location"] == "/dashboard"
    api.cookies.clear()

    trusted.set("/md", metadata(keys, "new"))
    run_refresh("--allow-rekey", "rot")

    refused_old = post_signed_response(api, "rot", keys["old"], tmp_path)
    assert refused_old["Location"].startswith("/sso-error?error=saml_error")
    sessions = Session.objects.count()
    accepted_new = post_signed_response(api, "rot", keys["new"], tmp_path)
    assert accepted_new["Location"] == "/dashboard"
    assert Session.objects.count() == sessions + 1
    assert get_user_model().objects.filter(email="ada@acme.com").count() == 1
