"""The team's task file (YAML) → typed tasks. Errors name the file, line and key, like the config's."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator

from watcher.core import untrusted
from watcher.core.configfile import LocatedError, StrictModel, validate_with_lines


class Expect(StrictModel):
    """The checker: exactly one of `tool` (with argument constraints), `no_tool`, `answer_matches`."""

    tool: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    """Arguments the call must carry with exactly these values (other arguments are free)."""
    no_tool: bool = False
    answer_matches: str | None = None
    """A regular expression searched in the final answer."""

    @field_validator("answer_matches")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from exc
        return value

    @model_validator(mode="after")
    def _one_checker(self) -> Expect:
        chosen = [
            k
            for k, on in (("tool", self.tool), ("no_tool", self.no_tool), ("answer_matches", self.answer_matches))
            if on
        ]
        if len(chosen) != 1:
            raise ValueError(f"expected exactly one of tool, no_tool: true, answer_matches (got {chosen or 'none'})")
        if self.args and not self.tool:
            raise ValueError("args constrain a tool call: give `tool` too")
        return self

    def describe(self) -> str:
        if self.tool:
            return f"calls {self.tool}" + (f" with {self.args}" if self.args else "")
        if self.no_tool:
            return "calls no tool"
        return f"answer matches /{self.answer_matches}/"


class Task(StrictModel):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    prompt: str = Field(min_length=1)
    expect: Expect


class TaskFile(StrictModel):
    tasks: list[Task] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> TaskFile:
        seen: set[str] = set()
        for i, task in enumerate(self.tasks):
            if task.id in seen:
                raise LocatedError(("tasks", i, "id"), f"duplicate task id {task.id!r}; ids must be unique")
            seen.add(task.id)
        return self


def parse_tasks(text: str | bytes, filename: str = "<tasks>") -> list[Task]:
    data, lines = untrusted.yaml_document(
        text, filename, limits=untrusted.TASK_FILE, expect=dict, shape="a mapping with a `tasks:` list"
    )
    return validate_with_lines(TaskFile, data, filename, lines).tasks


def load_tasks(path: Path, root: Path | None = None) -> list[Task]:
    """The task file; with `root` (a tree someone else filled) it is reached without following a link."""
    return parse_tasks(untrusted.read_bytes(root, path, limits=untrusted.TASK_FILE), str(path))
