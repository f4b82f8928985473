"""The app token and the signing secret follow the bot token's rules: the watcher's own secrets, kept from
every server under test, never read from the YAML, never shown."""

from __future__ import annotations

import pytest
import yaml

from tests.slackapp.helpers import config_text
from watcher.config import own_secret_names, parse_config
from watcher.core.errors import ConfigError
from watcher.notify.settings import SlackCredentials, slack_credentials


def _config(tmp_path, **changes):
    data = yaml.safe_load(config_text(tmp_path / "s.db"))
    data["slack"] = {"app_token_env": "MY_APP_TOKEN", "signing_secret_file": str(tmp_path / "signing")}
    for key, value in changes.items():
        data["servers"][0][key] = value
    return yaml.safe_dump(data)


def test_the_interactive_secrets_are_the_watchers_own(tmp_path):
    config = parse_config(_config(tmp_path))
    assert {"MY_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN"} <= own_secret_names(config)
    with pytest.raises(ConfigError, match="MY_APP_TOKEN is one of the watcher's own secret variables"):
        parse_config(_config(tmp_path, env_from=["MY_APP_TOKEN"]))
    with pytest.raises(ConfigError, match="this is the watcher's Slack secret file"):
        parse_config(_config(tmp_path, env_files={"SIGNING": str(tmp_path / "signing")}))


def test_they_are_read_from_the_environment_or_a_file_and_never_shown(tmp_path):
    (tmp_path / "signing").write_text("sig-secret\n")
    config = parse_config(_config(tmp_path))
    credentials = slack_credentials(config.slack, {"MY_APP_TOKEN": "xapp-1-secret", "SLACK_BOT_TOKEN": "xoxb-1"})
    assert (credentials.app_token, credentials.signing_secret) == ("xapp-1-secret", "sig-secret")
    assert credentials.interactive
    shown = repr(credentials)
    assert "xapp-1-secret" not in shown and "sig-secret" not in shown and "app_token=set" in shown
    assert not SlackCredentials(app_token="xapp", signing_secret="s").interactive  # no bot token, no replies


def test_the_yaml_may_not_hold_them(tmp_path):
    data = yaml.safe_load(config_text(tmp_path / "s.db"))
    data["slack"] = {"secret": "abc"}
    with pytest.raises(ConfigError, match="slack.secret: secrets are never read from the YAML"):
        parse_config(yaml.safe_dump(data), "w.yaml")
