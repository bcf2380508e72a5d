"""The MySQL source's TLS contexts (#56, memory): a context that checks no certificate
(ssl-mode PREFERRED, REQUIRED without a client certificate) is one for the process, with
no CA bundle loaded; pymysql made a ``create_default_context()`` for each connection,
~150 system certificates parsed into each (a screen on two PREFERRED servers, two
connections and four reconnects: +3.2 MB of RSS, +0.5 MB with the shared context).
tests/live/test_mysql_login_live.py does the handshakes."""

from __future__ import annotations

import ssl

from pydantic import SecretStr

from replmon.endpoints import MysqlEndpoint
from replmon.sources.mysql_connect import tls_arguments, unverified_context
from replmon.sources.mysql_green import GreenConnection


def endpoint(**kw: object) -> MysqlEndpoint:
    return MysqlEndpoint(host="db.example", password=SecretStr("x"), **kw)  # type: ignore[arg-type]


def test_the_unverified_context_checks_nothing_and_loads_no_ca() -> None:
    ctx = unverified_context()
    assert ctx is unverified_context()
    assert ctx.verify_mode == ssl.CERT_NONE and not ctx.check_hostname
    assert ctx.cert_store_stats()["x509"] == 0
    # what create_default_context() gives a client, but for the certificate check
    default = ssl.create_default_context()
    assert ctx.protocol == default.protocol and ctx.options == default.options
    assert ctx.minimum_version == default.minimum_version
    assert [c["name"] for c in ctx.get_ciphers()] == [c["name"] for c in default.get_ciphers()]


def test_preferred_connections_share_the_unverified_context() -> None:
    ep = endpoint()
    assert ep.tls_mode == "PREFERRED"
    conns = [GreenConnection(host=ep.host, defer_connect=True, **tls_arguments(ep))
             for _ in range(2)]
    assert all(c.ssl and not c._ssl_required for c in conns)  # PREFERRED, as pymysql's
    assert all(c.ctx is unverified_context() for c in conns)


def test_required_without_a_client_certificate_shares_it_too() -> None:
    conn = GreenConnection(host="db.example", defer_connect=True,
                           **tls_arguments(endpoint(ssl_mode="REQUIRED")))
    assert conn._ssl_required and conn.ctx is unverified_context()


def test_a_context_that_verifies_is_its_own() -> None:
    args = tls_arguments(endpoint(ssl_mode="VERIFY_CA",
                                  ssl_ca="/etc/ssl/certs/ca-certificates.crt"))
    ctx = args["ssl"]
    assert ctx is not unverified_context()
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.cert_store_stats()["x509"] > 0
