"""The source stage's step of a run: the configured commit checked out into the run's folder (`checkout`), the
run's project and repository root pointed at it. A path server has its tree already: nothing to do."""

from __future__ import annotations

from pathlib import Path

from watcher.core import progress, vault
from watcher.core.run_report import SourcePart
from watcher.suites.source import checkout
from watcher.suites.state import ERROR, RunState


def fetch_source(run: RunState) -> bool:
    """Check out the configured commit into the run's folder; False (an error result) when it fails."""
    source = run.server.source
    if source is None and run.server.path is None:
        run.mark(ERROR, "the server has no path or source here (its executor runs it on GitHub Actions)")
        return False
    if source is None:
        return True
    progress.stage(f"fetching the source ({checkout.display_url(source.git)} {source.ref})")
    try:
        token = checkout.read_token(run.loaded, run.server, vault.environ())
    except checkout.CheckoutError as exc:
        run.report["source"] = {"ok": False, "git": checkout.display_url(source.git), "error": str(exc)}
        run.mark(ERROR, f"source: {exc}")
        return False
    result = checkout.checkout(
        checkout.fetch_url(run.loaded, source),
        source,
        cache_root=run.loaded.resolve(run.config.suites.git_cache_dir),
        dest=run.run_dir / "source",
        token=token,
        timeout=run.server.timeouts.install,
        secret_names=run.secret_names,
        cancel=run.cancel,
        protocols=run.config.suites.git_protocols,
    )
    run.report["source"] = _source_part(result)
    if not result.ok:
        run.check_cancel()
        run.mark(ERROR, f"source: {result.error}")
        return False
    run.repo_root, run.project = Path(result.root), Path(result.project)
    return True


def _source_part(result: checkout.Checkout) -> SourcePart:
    """The checkout as the report keeps it (its fields, in their order)."""
    return {
        "ok": result.ok,
        "git": result.git,
        "ref": result.ref,
        "subdir": result.subdir,
        "commit": result.commit,
        "root": result.root,
        "project": result.project,
        "seconds": result.seconds,
        "error": result.error,
        "evidence": result.evidence,
    }
