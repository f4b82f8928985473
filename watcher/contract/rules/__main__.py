"""`python -m watcher.contract.rules`: print the rules as JSON, or with --markdown the rules document
(docs/contract-rules.md)."""

from __future__ import annotations

import argparse
import json

from watcher.contract.rules import RULES
from watcher.contract.rules.document import rules_document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m watcher.contract.rules", description=__doc__)
    parser.add_argument("--markdown", action="store_true", help="print the rules document (default: JSON)")
    args = parser.parse_args(argv)
    if args.markdown:
        print(rules_document(), end="")
    else:
        rows = [
            {
                "id": r.id,
                "family": r.family,
                "kind": r.reported_kind,
                "doc": r.doc,
                "breaksClients": r.breaks_clients,
                "affectsModels": r.affects_models,
                "gray": r.gray,
            }
            for r in RULES.values()
        ]
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
