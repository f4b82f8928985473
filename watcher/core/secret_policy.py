"""What is a secret, by name and by value, and the one masker that hides them in text.

Every part that must tell a secret from other text asks here: the early vault (`vault.seal_early`, which runs
before anything heavy is imported), the child environments (`boundary.process.scrubbed_env`), the log
filter, the status pages, the snapshot files, the model providers' error texts and the configuration
loader (which refuses a secret written inline in the YAML).

Standard library only, and the name and value checks use plain string operations: this module is imported
by `watcher.entry` before the CLI. The masker's regular expression is compiled on its first use.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

MASK = "[secret]"
"""What a masked secret is replaced with, everywhere."""

SECRET_NAME_PARTS = (
    "TOKEN",
    "SECRET",
    "PASSW",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
    "APIKEY",
    "API_KEY",
    "WEBHOOK",
)
"""An environment variable whose upper-cased name holds one of these is a secret (SLACK_BOT_TOKEN,
SLACK_WEBHOOK_URL, GITHUB_TOKEN, MCP_WATCHER_PAGE_TOKEN, DB_PASSWORD, OPENAI_API_KEY, …)."""
SECRET_NAME_WORDS = frozenset({"KEY", "PAT"})
"""…and so is one with one of these as a whole `_`-separated word (AWS_SECRET_KEY, KEY_FILE_PASS, GH_PAT)."""

SECRET_VALUE_PREFIXES = (
    "xoxb-",  # Slack bot token
    "xoxp-",  # Slack user token
    "xoxa-",
    "xoxo-",
    "xoxr-",  # Slack refresh token
    "xoxs-",
    "xoxe.",  # Slack rotating tokens (xoxe.xoxp-…)
    "xoxe-",
    "xapp-",  # Slack app-level token (Socket Mode)
    "ghp_",  # GitHub personal access token (classic)
    "gho_",  # GitHub OAuth token
    "ghu_",  # GitHub user-to-server token
    "ghs_",  # GitHub server-to-server (app installation) token
    "ghr_",  # GitHub refresh token
    "github_pat_",  # GitHub fine-grained personal access token
    "sk-ant-",  # Anthropic API key
    "sk-proj-",  # OpenAI project key
    "glpat-",  # GitLab personal access token
)
"""A value that starts with one of these is a secret, whatever its variable is called."""
LOOSE_PREFIX = "sk-"
"""OpenAI's keys and the bearer-like keys of other providers: a secret when at least `LOOSE_MIN_LENGTH` long
(shorter, it is an ordinary word such as `sk-learn`)."""
LOOSE_MIN_LENGTH = 20
SECRET_VALUE_PARTS = ("hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/")
"""A value that holds one of these is a Slack webhook URL: anyone who has it can post."""

INLINE_SECRET_KEYS = frozenset(
    {"token", "bot_token", "app_token", "webhook", "webhook_url", "secret", "signing_secret", "password"}
    | {"api_key", "auth_token"}
)
"""Configuration keys that would hold a secret's text in the YAML; the configuration names a variable or a
file instead (`token_env`, `token_file`, …), so these are refused with a pointer to those."""


def is_secret_name(name: str) -> bool:
    """True for an environment variable whose name says it holds a credential."""
    upper = name.upper()
    if any(part in upper for part in SECRET_NAME_PARTS):
        return True
    return not SECRET_NAME_WORDS.isdisjoint(upper.split("_"))


def is_secret_value(value: str) -> bool:
    """True for a value that looks like a credential: a Slack or GitHub token, a provider key, a Slack
    webhook URL (also as the value of a variable with an innocent name)."""
    text = value.strip()
    if text.startswith(SECRET_VALUE_PREFIXES) or any(part in text for part in SECRET_VALUE_PARTS):
        return True
    return text.startswith(LOOSE_PREFIX) and len(text) >= LOOSE_MIN_LENGTH


def is_secret(name: str, value: str = "") -> bool:
    """True when the variable's name or its value looks like a credential."""
    return is_secret_name(name) or is_secret_value(value)


def is_inline_secret_key(key: str) -> bool:
    """True for a configuration key that would carry a secret in the YAML itself."""
    return key in INLINE_SECRET_KEYS


@functools.cache
def _value_pattern() -> re.Pattern[str]:
    """Secret values inside free text: each prefix with the token's characters after it; a Slack webhook
    URL's path; the credential after `Bearer ` (an HTTP header)."""
    prefixes = "|".join(re.escape(prefix) for prefix in SECRET_VALUE_PREFIXES)
    loose = rf"{re.escape(LOOSE_PREFIX)}[A-Za-z0-9_-]{{{LOOSE_MIN_LENGTH - len(LOOSE_PREFIX)},}}"
    token = rf"(?<![A-Za-z0-9_-])(?:(?:{prefixes})[A-Za-z0-9_.=-]+|{loose})"
    webhook = r"(?P<hook>hooks\.slack\.com/)(?:services|workflows|triggers)/[A-Za-z0-9/_-]+"
    header = r"(?P<scheme>\b(?i:bearer)\s+)[A-Za-z0-9._~+/-]{8,}=*"
    return re.compile(f"{token}|{webhook}|{header}")


def _masked(match: re.Match[str]) -> str:
    return (match["hook"] or match["scheme"] or "") + MASK


def mask(text: str, known: Iterable[str] = ()) -> str:
    """`text` with every secret replaced by `MASK`: first the `known` values (the watcher's held secrets, a
    server's granted ones, a provider's key; longest first, so a value holding another goes whole), then
    anything that looks like a credential by its shape."""
    for value in sorted({v for v in known if v and len(v) >= 4}, key=len, reverse=True):
        text = text.replace(value, MASK)
    return _value_pattern().sub(_masked, text)


def mask_data(value: Any, known: Iterable[str] = ()) -> Any:
    """`value` with every secret masked (`mask`) in every string of a JSON-like structure, keys too."""
    if isinstance(value, str):
        return mask(value, known)
    if isinstance(value, dict):
        return {mask_data(key, known): mask_data(item, known) for key, item in value.items()}
    if isinstance(value, list):
        return [mask_data(item, known) for item in value]
    return value


def masked_json(value: Any, known: Iterable[str] = ()) -> str:
    """`value` as the state stores a report: JSON (keys sorted, what JSON cannot hold as its text), every
    secret in it masked, so no stored report holds one whatever a build or a server printed."""
    import json  # here, not at the top: the early vault imports this module before anything else

    return json.dumps(mask_data(value, tuple(known)), sort_keys=True, default=str)
