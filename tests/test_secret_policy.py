"""One secrets policy, one masker: every consumer hides the same secrets, driven by one table.

`SECRETS` holds a value of each kind the policy names (Slack's bot, user and Socket Mode tokens, GitHub's
classic, OAuth, app and fine-grained tokens, a Slack webhook URL, provider keys: Anthropic's `sk-ant-`,
OpenAI's `sk-proj-` and plain `sk-`). Each consumer is handed every value of the table where it would
otherwise leak it, under a variable name that says nothing, and must not let it through: the early vault
(holds it), a child's environment (drops it), the log filter, the status pages, the stored run reports, the
snapshot files and a provider's error text (mask it). The check first reads back that the value really
reached the consumer's input (the mark), then that it is not in the output.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from starlette.testclient import TestClient

from bench.fakes.model_provider import FakeProvider
from watcher.boundary.launch import Host, HostReason
from watcher.boundary.process import run_command, scrubbed_env
from watcher.config import load_config, parse_config
from watcher.contract.snapshot.outcome import EraResult
from watcher.contract.snapshot.writing import masked
from watcher.core import secret_policy
from watcher.core.errors import ConfigError
from watcher.core.logs import RedactingFilter
from watcher.core.store import Store
from watcher.evaluation.providers import ProviderError, make_provider
from watcher.evaluation.settings import Evaluation
from watcher.ops.health import Readiness, build_app
from watcher.web.access import Access
from watcher.web.app import web_parts
from watcher.web.context import WebContext

SECRETS = {
    "slack bot token": "xoxb-2048-4096-AbCdEfGhIjKlMnOp",
    "slack user token": "xoxp-2048-4096-8192-qRsTuVwXyZ01",
    "slack socket mode token": "xapp-1-A0123456789-1234567890123-abcdef0123456789",
    "github classic token": "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "github oauth token": "gho_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2",
    "github app token": "ghs_Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8",
    "github fine-grained token": "github_pat_11AAAAAAA0abcdefghijkl_MNOPQRSTUVWXyz0123456789abcdefghijklmnop",
    "slack webhook url": "https://hooks.slack.com/services/T0000AAAA/B0000BBBB/cccccccccccccccccccccccc",
    "anthropic key": "sk-ant-api03-Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0",
    "openai key": "sk-proj-Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8Ii9Jj0",
    "openai legacy key": "sk-" + "Kq7Lm2Np9Rs4Tu6Vw1Xy3Za5Bc8De0Fg2Hi4Jk6Lm8No0Pq",
}
"""What each consumer must mask. A new kind of secret is one more row here, and every consumer is tested on it."""
REQUIRED = ("slack socket mode token", "github fine-grained token")
"""The two the log filter did not know before the policy was one module."""
ISSUE_PREFIXES = ("xoxb-", "xapp-", "xoxp-", "ghp_", "github_pat_", "sk-ant-", "sk-")
"""The forms issue 32 names: each has a row of `SECRETS`, so every consumer is tested on each."""
INNOCENT = "BUILD_LABEL"
"""A variable name that says nothing: the value alone must be recognised."""

each_kind = pytest.mark.parametrize("kind", sorted(SECRETS))


def _shown(value: str) -> str:
    """The part of a value that must never be shown (a webhook URL's host may stay)."""
    return value.split("hooks.slack.com/")[-1]


@each_kind
def test_the_table_has_the_kinds_the_issue_names(kind: str):
    assert all(required in SECRETS for required in REQUIRED)
    assert all(any(v.startswith(p) for v in SECRETS.values()) for p in ISSUE_PREFIXES)
    assert any(v.startswith("sk-") and not v.startswith(secret_policy.SECRET_VALUE_PREFIXES) for v in SECRETS.values())
    assert secret_policy.is_secret_value(SECRETS[kind])
    assert secret_policy.is_secret(INNOCENT, SECRETS[kind]) and not secret_policy.is_secret(INNOCENT, "release-7")


@each_kind
def test_the_masker_hides_it_inside_free_text(kind: str):
    value = SECRETS[kind]
    text = f"error: remote said {value}; retry"
    assert value in text
    cleaned = secret_policy.mask(text)
    assert _shown(value) not in cleaned and secret_policy.MASK in cleaned
    assert cleaned.startswith("error: remote said ") and cleaned.endswith("; retry")


@each_kind
def test_the_early_vault_holds_it_before_the_cli_is_imported(kind: str):
    # A fresh interpreter, like the console script: only `watcher.entry`'s import, then `seal_early`.
    code = (
        "import os, sys\n"
        "from watcher.core import vault\n"
        "held = vault.seal_early()\n"
        f"print({INNOCENT!r} in held, {INNOCENT!r} in os.environ, vault.environ()[{INNOCENT!r}] == sys.argv[1])\n"
        "print(sorted(m for m in sys.modules if m.startswith('watcher')))\n"
        "print('pydantic' in sys.modules, 'httpx' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, SECRETS[kind]],
        env={"PATH": os.environ.get("PATH", ""), INNOCENT: SECRETS[kind]},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    held, modules, heavy = done.stdout.splitlines()
    assert held == "True False True"
    assert modules == "['watcher', 'watcher.core', 'watcher.core.secret_policy', 'watcher.core.vault']"
    assert heavy == "False False"


@each_kind
def test_a_child_environment_never_gets_it(kind: str):
    value = SECRETS[kind]
    child = scrubbed_env(source={"PATH": "/usr/bin", "LANG": value}, extra={INNOCENT: value, "MODE": "test"})
    assert child.env["MODE"] == "test"
    assert INNOCENT in child.dropped
    assert value not in child.env.values()


@each_kind
def test_a_log_line_never_shows_it(kind: str):
    value = SECRETS[kind]
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter(secret_env=()))
    logger = logging.getLogger(f"tests.secret_policy.{kind}")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("the registry answered %s", value)
    finally:
        logger.removeHandler(handler)
    line = stream.getvalue()
    assert line.startswith("the registry answered ")
    assert _shown(value) not in line and secret_policy.MASK in line


@each_kind
def test_a_page_never_shows_it(kind: str, tmp_path: Path):
    value = SECRETS[kind]
    config = tmp_path / "watcher.yaml"
    config.write_text(yaml.safe_dump({"state": str(tmp_path / "state.db")}))
    store = Store(tmp_path / "state.db")
    report = {"verdict": "fail", "reasons": [{"verdict": "fail", "reason": f"install failed: token {value}"}]}
    run_id = store.record_run("srv", "python", "2.3.0", "cli", report)
    # A row stored before reports were masked (or by a version that did not know this kind): the page masks too.
    store.db.execute("update runs set report = ? where id = ?", [json.dumps(report), run_id])
    assert value in str(store.run_by_id(run_id)["report"])  # it is in the state the page reads
    ctx = WebContext(load_config(config), store)
    client = TestClient(build_app(Readiness(store, 30, ctx.now(), lambda: True), *web_parts(ctx, Access(None, False))))
    page = client.get(f"/runs/{run_id}")
    assert page.status_code == 200 and "install failed: token" in page.text
    assert _shown(value) not in page.text


@each_kind
def test_a_stored_report_never_shows_it(kind: str, tmp_path: Path):
    value = SECRETS[kind]
    # What a build step printed (a private index's token in pip's error, say), as the boundary captures it.
    build = run_command(
        [sys.executable, "-c", "import sys; print('ERROR: 401 for', sys.argv[1])", value],
        cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", "")},
        timeout=60,
        log_path=tmp_path / "build.log",
        launcher=Host(HostReason.OPTED_OUT),  # as under `suites.sandbox: none`: the step's output is the point
    )
    assert value in build.tail  # the mark: the secret reached the text a report is made of
    report = {"verdict": "fail", "install": {"ok": False, "error": "pip failed", "evidence": build.tail}, value: 1}
    store = Store(tmp_path / "state.db")
    store.record_run("srv", "python", "2.3.0", "cli", report)  # `check` by hand
    assert store.queue_run("srv", "python", "2.3.1", "release:python:2.3.1")  # the worker's way
    claimed = store.claim_run()
    assert claimed is not None
    store.finish_run(claimed["id"], "fail", report, 1.0)
    stored = [row["report"] for row in store.db.query("select report from runs order by id")]
    store.close()
    assert len(stored) == 2 and all("ERROR: 401 for" in text for text in stored)
    assert not [text for text in stored if _shown(value) in text], stored
    evidence = [json.loads(text)["install"]["evidence"].strip() for text in stored]
    assert all(e.startswith("ERROR: 401 for ") and e.endswith(secret_policy.MASK) for e in evidence), evidence


@each_kind
def test_a_snapshot_file_never_shows_it(kind: str):
    value = SECRETS[kind]
    raw = EraResult("modern", "ok", {"tools": [{"name": "login", "description": f"uses {value}"}]}, {"name": value})
    result = masked(raw, ())
    written = repr((result.lists, result.server))
    assert "uses " in written and _shown(value) not in written


@each_kind
def test_a_provider_error_never_shows_it(kind: str):
    value = SECRETS[kind]
    with FakeProvider() as fake:
        fake.fail_always, fake.error_message = 401, f"invalid credentials: {value}"
        for provider in ("anthropic", "openai"):
            base = fake.base if provider == "anthropic" else f"{fake.base}/v1"
            settings = Evaluation(tasks="t.yaml", provider=provider, model="m", api_url=base, max_retries=0)
            client = make_provider(settings, "the-configured-key-0123")
            with pytest.raises(ProviderError) as refused:
                asyncio.run(client.conversation("hi", []).next_turn())
            assert "invalid credentials" in str(refused.value)
            assert _shown(value) not in str(refused.value)
        assert len(fake.requests) == 2  # both providers asked the fake and read its answer


@pytest.mark.parametrize(
    ("section", "key"), [("slack", "app_token"), ("slack", "signing_secret"), ("http", "auth_token")]
)
def test_the_configuration_refuses_a_secret_written_inline(section: str, key: str):
    with pytest.raises(ConfigError, match=f"{section}.{key}: secrets are never read from the YAML"):
        parse_config(f"{section}:\n  {key}: {SECRETS['slack bot token']!r}\n", "w.yaml")
    assert parse_config(f"{section}:\n  {key}_env: MY_VARIABLE\n", "w.yaml") is not None


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("SLACK_BOT_TOKEN", True),
        ("GITHUB_TOKEN", True),
        ("db_password", True),
        ("OPENAI_API_KEY", True),
        ("AWS_SECRET_KEY", True),
        ("SIGNING_KEY", True),
        ("GH_PAT", True),
        ("SLACK_WEBHOOK_URL", True),
        ("SESSION_COOKIE", True),
        ("PATH", False),
        ("LANG", False),
        ("KEYBOARD_LAYOUT", False),
        ("HOME", False),
    ],
)
def test_a_secret_name(name: str, secret: bool):
    assert secret_policy.is_secret_name(name) is secret
