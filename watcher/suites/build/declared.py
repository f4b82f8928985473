"""The generic environment (`language: other`): the server declares how to pin the SDK and build.

Each `prepare` step is an argument list run in a copy of the server's tree (the work folder), in
order, with `{version}`, `{package}` and `{workdir}` substituted; `python`, `uv`, `node` and `npm`
as the first argument are the watcher's own toolchain, other names come from PATH. Steps get the
installers' scrubbed environment, share the install timeout, and write to the environment's
install.log. A failed step names itself and keeps its last output lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from watcher.boundary import toolchain

if TYPE_CHECKING:  # env.py imports this module to build `language: other`
    from watcher.suites.build.env import BuildContext


def substitute(args: Sequence[str], *, version: str, package: str, workdir: str, port: int | None = None) -> list[str]:
    """Fill `{version}`, `{package}`, `{workdir}` (and `{port}` when known) into each argument."""
    values = {"{version}": version, "{package}": package, "{workdir}": workdir}
    if port is not None:
        values["{port}"] = str(port)
    out = []
    for arg in args:
        for name, value in values.items():
            arg = arg.replace(name, value)
        out.append(arg)
    return out


def toolchain_command(args: list[str]) -> list[str]:
    """`python`, `uv`, `node`, `npm` as the first argument resolve to the watcher's own copies."""
    exe, rest = args[0], args[1:]
    if exe in ("python", "python3"):
        return [toolchain.python(), *rest]
    if exe == "uv":
        uv = toolchain.uv()
        if uv is None:
            raise toolchain.ToolMissing("uv is not installed; a prepare step asks for it")
        return [uv, *rest]
    if exe == "node":
        return [toolchain.node(), *rest]
    if exe == "npm":
        return [*toolchain.npm_command(), *rest]
    return args


def build_declared(ctx: BuildContext, *, prepare: Sequence[Sequence[str]]) -> None:
    """Run the declared `prepare` steps in a copy of the server's tree, in order, within the install time."""
    ctx.start("prepare", [ctx.src])
    child = ctx.child_env()
    for number, step in enumerate(prepare, start=1):
        command = toolchain_command(
            substitute(step, version=ctx.sdk_version, package=ctx.sdk_package, workdir=str(ctx.src))
        )
        label = f"prepare step {number} ({' '.join(step)})"
        if not ctx.run(label, command, cwd=ctx.src, env=child, shown=f"[step {number}] {' '.join(command)}"):
            return
    ctx.result.ok = True
