"""Who may see the pages: loopback binds are open; elsewhere a token (bearer or /login cookie) or `public: true`."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from starlette.testclient import TestClient

from tests.web.helpers import NOW
from watcher.cli import main
from watcher.config import load_config, parse_config, secret_env_names
from watcher.core.errors import ConfigError
from watcher.core.store import Store
from watcher.ops.health import Readiness, build_app
from watcher.web.access import COOKIE, Access, is_loopback, resolve_access, safe_next
from watcher.web.app import web_parts
from watcher.web.context import WebContext, age
from watcher.web.settings import HttpEndpoint

TOKEN = "page-token-unit-test-0000"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.1.2.3", False),
        ("watcher.example.internal", False),
        ("", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool):
    assert is_loopback(host) is loopback


def test_a_non_loopback_host_without_a_token_is_refused_with_what_to_do():
    with pytest.raises(ConfigError) as refused:
        resolve_access(HttpEndpoint(host="10.1.2.3"), environ={})
    message = str(refused.value)
    assert "'10.1.2.3' is not a loopback address" in message
    assert "MCP_WATCHER_PAGE_TOKEN" in message and "http.auth_token_file" in message and "http.public: true" in message


def test_the_token_comes_from_the_environment_or_a_file(tmp_path: Path):
    endpoint = HttpEndpoint(host="0.0.0.0", auth_token_env="PAGE_TOKEN")
    access = resolve_access(endpoint, environ={"PAGE_TOKEN": f" {TOKEN}\n"})
    assert access.token == TOKEN and not access.protect_metrics
    assert TOKEN not in repr(access)
    secret = tmp_path / "token"
    secret.write_text(TOKEN + "\n")
    from_file = resolve_access(
        HttpEndpoint(host="0.0.0.0", auth_token_file=str(secret), metrics_need_token=True), environ={}
    )
    assert from_file.token == TOKEN and from_file.protect_metrics
    with pytest.raises(ConfigError, match="cannot read"):
        resolve_access(HttpEndpoint(host="0.0.0.0", auth_token_file=str(tmp_path / "missing")), environ={})


def test_public_opens_the_pages_and_loopback_needs_nothing():
    assert resolve_access(HttpEndpoint(host="0.0.0.0", public=True), environ={}).token is None
    assert resolve_access(HttpEndpoint(host="127.0.0.1"), environ={"MCP_WATCHER_PAGE_TOKEN": TOKEN}).token is None


def test_the_token_is_never_read_from_the_yaml_and_never_reaches_a_server():
    with pytest.raises(ConfigError, match="http.auth_token: secrets are never read from the YAML"):
        parse_config("http:\n  host: 0.0.0.0\n  auth_token: abc\n", "w.yaml")
    config = parse_config("http:\n  auth_token_env: MY_PAGE_TOKEN\n")
    assert "MY_PAGE_TOKEN" in secret_env_names(config)


def test_the_service_refuses_to_start_on_a_non_loopback_host_without_a_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    config = tmp_path / "watcher.yaml"
    config.write_text(yaml.safe_dump({"state": str(tmp_path / "state.db"), "http": {"host": "0.0.0.0", "port": 1}}))
    assert main(["--config", str(config), "run"]) == 2
    assert "is not a loopback address" in capsys.readouterr().err
    assert not (tmp_path / "state.db").exists()  # refused before anything was opened or bound


def app_client(tmp_path: Path, access: Access) -> TestClient:
    config = tmp_path / "watcher.yaml"
    config.write_text(yaml.safe_dump({"state": str(tmp_path / "state.db")}))
    loaded = load_config(config)
    store = Store(tmp_path / "state.db")
    ctx = WebContext(loaded, store, now=lambda: NOW)
    app = build_app(Readiness(store, 30, NOW, lambda: True), *web_parts(ctx, access))
    return TestClient(app, base_url="http://watcher.test")


def test_bearer_cookie_and_login(tmp_path: Path):
    client = app_client(tmp_path, Access(TOKEN, protect_metrics=True))
    assert client.get("/api/status").status_code == 401
    assert client.get("/api/status").headers["www-authenticate"].startswith("Bearer")
    assert client.get("/metrics").status_code == 401  # http.metrics_need_token
    assert client.get("/healthz").status_code == 200
    assert client.get("/static/style.css").status_code == 200
    redirect = client.get("/runs/1", headers={"Accept": "text/html"}, follow_redirects=False)
    assert redirect.status_code == 303 and redirect.headers["location"] == "/login?next=/runs/1"
    assert client.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    refused = client.post("/login", data={"token": "nope", "next": "/"}, follow_redirects=False)
    assert refused.status_code == 401 and COOKIE not in refused.cookies
    signed_in = client.post("/login", data={"token": TOKEN, "next": "//elsewhere.example"}, follow_redirects=False)
    assert signed_in.status_code == 303 and signed_in.headers["location"] == "/"
    assert signed_in.cookies[COOKIE] != TOKEN and TOKEN not in signed_in.headers["set-cookie"]
    assert client.get("/api/status").status_code == 200  # the cookie the client kept
    assert client.get("/metrics").status_code == 200


def test_open_pages_carry_a_policy_that_forbids_scripts(tmp_path: Path):
    client = app_client(tmp_path, Access(None, protect_metrics=False))
    response = client.get("/")
    assert response.status_code == 200
    assert "default-src 'none'" in response.headers["content-security-policy"]
    assert client.get("/login", follow_redirects=False).headers["location"] == "/"


def test_safe_next_stays_on_this_site():
    assert safe_next("/runs/3") == "/runs/3"
    for target in ("//evil.example/", "https://evil.example/", "/\\evil", "", None):
        assert safe_next(target) == "/"


def test_ages_follow_the_injected_clock():
    now = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    assert age(datetime(2026, 11, 29, 11, 59, 30, tzinfo=UTC), now) == "30 s"
    assert age(datetime(2026, 11, 29, 11, 0, tzinfo=UTC), now) == "60 min"
    assert age(datetime(2026, 11, 29, 2, 0, tzinfo=UTC), now) == "10 h"
    assert age(datetime(2026, 11, 20, 12, 0, tzinfo=UTC), now) == "9 d"
    assert age(None, now) == ""
