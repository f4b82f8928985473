"""Argument types shared by the subcommands of every capability."""

from __future__ import annotations

import argparse
from datetime import date


def iso_date(text: str) -> date:
    """An argparse type: a date written YYYY-MM-DD, else a usage error that quotes the text."""
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date written YYYY-MM-DD") from exc
