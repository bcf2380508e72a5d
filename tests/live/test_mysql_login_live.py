"""Logging in as MySQL's defaults expect, on a real Oracle MySQL 9.7 pair (the lab's
``mysql-9.7``, from Debian sid in a chroot).

MySQL 8.0+ creates accounts with caching_sha2_password. Its full authentication (the
first login after a server start, FLUSH PRIVILEGES or ALTER USER empties the server's
cache) sends the password either inside TLS or encrypted with the server's RSA key;
PyMySQL needs the ``cryptography`` package for the latter. The server's own view of
replmon's connection (performance_schema.threads.CONNECTION_TYPE: ``TCP/IP`` or
``SSL/TLS``) says which way it went.
"""

from __future__ import annotations

import os

import pytest
from labpool import MYSQL97, group

from replmon.endpoints import MysqlEndpoint
from replmon.lab import Lab
from replmon.model.base import SourceState
from replmon.model.mysql import MysqlSample
from replmon.sources.mysql import MysqlSource

pytestmark = [pytest.mark.live, group(MYSQL97)]


async def sample_once(lab: Lab, endpoint: MysqlEndpoint) -> tuple[MysqlSample, str | None]:
    """One sample of the lab's primary and, while replmon's connection is still open, how
    the server sees it (None: no such connection)."""
    async with MysqlSource(endpoint) as src:
        sample = await src.sample()
        return sample, connection_type(lab, endpoint.user)


def connection_type(lab: Lab, user: str) -> str | None:
    rows = lab.primary.sql("SELECT CONNECTION_TYPE FROM performance_schema.threads "
                           "WHERE PROCESSLIST_USER = %s", user)
    return str(rows[0][0]) if rows else None


def endpoint(lab: Lab, **tls: str) -> MysqlEndpoint:
    return lab.primary.mysql_endpoint().model_copy(update=tls)


async def test_the_default_account_logs_in_without_tls_through_the_rsa_exchange(
        mysql97: Lab) -> None:
    assert mysql97.primary.sql(
        "SELECT plugin FROM mysql.user WHERE user = %s", mysql97.monitor_user) == [
        ("caching_sha2_password",)]
    mysql97.primary.sql("FLUSH PRIVILEGES")  # the next login is a full authentication
    ep = endpoint(mysql97)
    assert ep.tls_mode == "DISABLED"  # loopback's default
    s, how = await sample_once(mysql97, ep)
    assert s.status.ok, s.status
    assert s.version.startswith("9.7.")
    assert how == "TCP/IP"
    assert mysql97.monitor_password not in s.model_dump_json()


@pytest.mark.parametrize("mode", ["PREFERRED", "REQUIRED"])
async def test_tls_when_asked_without_a_ca(mysql97: Lab, mode: str) -> None:
    mysql97.primary.sql("FLUSH PRIVILEGES")
    s, how = await sample_once(mysql97, endpoint(mysql97, ssl_mode=mode))
    assert s.status.ok, s.status
    assert how == "SSL/TLS"


async def test_verify_ca_with_the_servers_own_ca(mysql97: Lab) -> None:
    ca = str(mysql97.primary.datadir / "ca.pem")  # made by the server's first start
    ep = endpoint(mysql97, ssl_ca=ca)
    assert ep.tls_mode == "VERIFY_CA"  # a CA given and no mode: MySQL's client does so too
    s, how = await sample_once(mysql97, ep)
    assert s.status.ok, s.status
    assert how == "SSL/TLS"


async def test_verify_ca_refuses_a_certificate_another_ca_signed(mysql97: Lab) -> None:
    # Debian's public CA bundle did not sign the server's auto-generated certificate.
    s, how = await sample_once(mysql97, endpoint(mysql97, ssl_mode="VERIFY_CA",
                                        ssl_ca="/etc/ssl/certs/ca-certificates.crt"))
    assert s.status.state is SourceState.ERROR, s.status
    assert "TLS" in (s.status.error or "") and "CERTIFICATE_VERIFY_FAILED" in s.status.error
    assert "not signed by /etc/ssl/certs/ca-certificates.crt" in (s.status.hint or "")
    assert how is None  # never logged in


async def test_verify_identity_refuses_a_certificate_for_another_name(mysql97: Lab) -> None:
    # The auto-generated certificate names "MySQL_Server_9.7.4_Auto_Generated_...", not
    # 127.0.0.1: the CA is right, the identity is not.
    ca = str(mysql97.primary.datadir / "ca.pem")
    s, how = await sample_once(mysql97, endpoint(mysql97, ssl_mode="VERIFY_IDENTITY", ssl_ca=ca))
    assert s.status.state is SourceState.ERROR, s.status
    assert "not issued to '127.0.0.1'" in (s.status.hint or ""), s.status
    assert how is None


@pytest.mark.parametrize("mode", ["DISABLED", "REQUIRED"])
async def test_a_sha256_password_account(mysql97: Lab, mode: str) -> None:
    user, password = "mon_sha256", "s256-" + os.urandom(6).hex()
    mysql97.primary.sql(f"CREATE USER '{user}'@'%' IDENTIFIED WITH sha256_password "
                        f"BY '{password}'")
    try:
        mysql97.primary.sql(f"GRANT PROCESS, REPLICATION CLIENT ON *.* TO '{user}'@'%'")
        ep = mysql97.primary.mysql_endpoint(user=user, password=password)
        s, how = await sample_once(mysql97, ep.model_copy(update={"ssl_mode": mode}))
    finally:
        mysql97.primary.sql(f"DROP USER '{user}'@'%'")
    assert s.status.ok, s.status
    assert how == ("TCP/IP" if mode == "DISABLED" else "SSL/TLS")
    assert password not in s.model_dump_json()


async def test_required_tls_on_a_server_without_tls_is_refused_with_its_reason(
        lab: Lab) -> None:
    """The session's MariaDB 10.11 lab has no certificate: REQUIRED must not fall back."""
    assert lab.primary.sql("SELECT @@have_ssl") == [("DISABLED",)]
    async with MysqlSource(lab.primary.mysql_endpoint().model_copy(
            update={"ssl_mode": "REQUIRED"})) as src:
        s = await src.sample()
    assert s.status.state is SourceState.ERROR, s.status
    assert "TLS" in (s.status.error or "")
    assert "needs a server that offers TLS" in (s.status.hint or "")
