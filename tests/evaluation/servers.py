"""Small real MCP servers (the installed `mcp` SDK) for the evaluation tests, run over stdio:

    python -m tests.evaluation.servers VARIANT [--env-dump PATH]

VARIANT: baseline          add_note, count_notes, search_notes
         same              the baseline's contract, built separately
         candidate-desc    count_notes' description reworded so it shares no word with "how many notes"
         candidate-newtool the baseline plus `greet`, a tool for saying hello
         candidate-errors  count_notes answers with isError
         dies              count_notes kills the server (a crash mid-task)
--env-dump writes the server's whole environment as JSON at start (to prove no secret reached it).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from mcp.server import MCPServer

COUNT_BASELINE = "Count how many notes are stored."
COUNT_REWORDED = "Report the size of the notebook."


def build(variant: str) -> MCPServer:
    server = MCPServer("notes")
    notes: dict[str, str] = {"todo": "call the library", "ideas": "a garden", "books": "dune"}

    def add_note(title: str, text: str) -> str:
        notes[title] = text
        return f"saved {title}"

    def count_notes() -> str:
        if variant == "dies":
            os._exit(3)
        if variant == "candidate-errors":
            raise ValueError("the notebook is locked")
        return f"{len(notes)} notes"

    def search_notes(query: str) -> str:
        found = [title for title, text in notes.items() if query in text or query in title]
        return ", ".join(found) or "no notes match"

    server.add_tool(add_note, description="Save a note with a title and text.")
    count_description = COUNT_REWORDED if variant == "candidate-desc" else COUNT_BASELINE
    server.add_tool(count_notes, description=count_description)
    server.add_tool(search_notes, description="Search stored notes by keyword.")
    if variant == "candidate-newtool":

        def greet() -> str:
            return "hello"

        server.add_tool(greet, description="Say hello to the user and say nothing else.")
    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("variant")
    parser.add_argument("--env-dump")
    args = parser.parse_args()
    if args.env_dump:
        Path(args.env_dump).write_text(json.dumps(dict(os.environ)), encoding="utf-8")
    build(args.variant).run("stdio")


if __name__ == "__main__":
    main()
