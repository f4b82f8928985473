"""Contract snapshots and the change classifier: what an MCP server offers (its contract), recorded as
files, and every difference between two recordings named and graded.

- `snapshot`: `take_snapshot(SnapshotTarget(url=… | command=…), out_dir, era="both")` connects to a
  server and writes its tools, resources, resource templates, prompts, server record and error answers,
  per protocol era and client-capability profile (typical and none by default), as plain JSON
  (`normalize` keeps those files stable).
- `schema_diff`: finds the structural differences between two JSON Schemas (2020-12), with their paths
  and whether each accepts fewer or more values, judged by containment (`patterns` decides regular
  expressions by automaton inclusion).
- `rules`: one module per rule family; each names and grades the changes of one part of the contract.
  The rules document, docs/contract-rules.md, is generated from them.
- `diff`: `diff_snapshots(baseline, candidate)` compares two snapshot folders → the report as JSON.
- `report`: the report's record and JSON form, `render(report, "json" | "markdown" | "junit" | "github")`,
  `worst_level(report)`.
- `commands`: `register(subparsers)` adds `snapshot` and `diff` to the CLI.
"""
