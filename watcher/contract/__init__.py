"""Contract snapshots and the change classifier.

- `snapshot`: `take_snapshot(SnapshotTarget(url=… | command=…), out_dir, era="both")` writes a normalized
  snapshot folder (tools, resources, resource templates, prompts, server, error probes) per era.
- `schema_diff`: structural JSON Schema 2020-12 diff with paths (phase one).
- `rules`: one module per rule family and the single RULES table (phase two); see RULES.md.
- `diff`: `diff_snapshots(baseline, candidate)` → the report (the seeds' JSON shape).
- `report`: `render(report, "json" | "markdown" | "junit" | "github")`, `worst_level(report)`.
- `commands`: `register(subparsers)` adds `snapshot` and `diff` to the CLI.
"""
