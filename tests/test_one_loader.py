"""One door for data from outside: no module of the watcher parses YAML, XML or TOML, or JSON that came
from outside, except through `watcher.core.untrusted` (and the strict YAML reader under it).

Read from the source with `ast` (as tests/import_graph.py reads the imports). What counts as parsing:

- YAML: any name of PyYAML but its writers (`safe_dump`, `dump`, …) and `YAMLError`, imported or used
  as an attribute (`yaml.load`, `yaml.safe_load`, `yaml.compose`, `yaml.SafeLoader`, `yaml.MappingNode`…);
  any other YAML library;
- XML: `xml.dom`, `xml.sax`, `xml.parsers` (expat), `pyexpat`, `lxml`, `defusedxml` and other XML readers
  imported at all; of `xml.etree.ElementTree` (which writes the JUnit report) the parsing names
  (`fromstring`, `parse`, `iterparse`, `XML`, `XMLParser`, …);
- TOML: `tomllib.load(s)` and any other TOML library;
- JSON: `json.load(s)`, `json.JSONDecoder`, `orjson.loads`, any `.raw_decode(…)`, pydantic's
  `.model_validate_json(…)` / `.validate_json(…)`, httpx's `response.json()` (any `.json()` called with no
  argument), and any other JSON library.

**JSON from outside** is every JSON text the watcher did not write itself: files in a team's repository,
in an installed suite or a run's results folder, CI artifacts, and every network answer (registries,
GitHub, model providers). JSON the watcher wrote itself may be read where it is written, only in the
places named in `OWN_JSON`, each with its reason.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.import_graph import PACKAGE, module_name

DOOR = {"watcher.core.untrusted", "watcher.core.yaml_strict"}
"""The one loader: the only modules that call parsers on outside data."""

OWN_JSON: dict[str, str] = {
    "watcher.core.store": "the state database's own columns, which the store wrote as JSON",
    "watcher.core.store_clusters": "the cluster tables' own columns, which the store wrote as JSON",
    "watcher.core.store_schema": "the runs and backtest_results rows' report column, which the store wrote as JSON",
    "watcher.core.store_backtests": "the backtest tables' own columns, which the store wrote as JSON",
    "watcher.decisions.records": "rows of the state database the records module wrote",
    "watcher.slackapp.app": "a view's private_metadata and a button's value, written by the watcher and "
    "returned unchanged in Slack's authenticated request",
    "watcher.suites.runner:read_report": "report.json, which the runner wrote into the run's folder",
    "watcher.suites.build.env:_read_marker": "an environment's marker, written by the watcher when it sealed it",
    "watcher.suites.judge.conformance:ensure_conformance": "the tool marker the watcher writes after the "
    "install (any file of the install's in its place removed first)",
    "watcher.evaluation.run:_save": "the report it has just serialised itself, read back after masking",
    "watcher.digest.model:Digest.to_json": "a round trip of its own dataclass through json.dumps",
    "watcher.digest.sections.exposure:snapshot_evidence": "server.json of a snapshot the watcher took (a run's "
    "folder) or of a path server's own baseline (the operator's; a git source's is not read here)",
    "watcher.contract.normalize": "snapshot files: written by `snapshot`; a team's committed baseline snapshot is "
    "checked by `untrusted.check_tree` first (no link, capped)",
    "watcher.boundary.sandbox:_read_info": "bubblewrap's own --info-fd JSON on a pipe of the watcher's",
    "watcher.boundary.guard:read_reports": "the room recorder's JSON lines (json.dumps of the watcher's own helper, "
    "on the host, outside the room) on a pipe of the watcher's",
    "watcher.evaluation.run:read_evaluation": "evaluation.json, which the evaluation wrote into the run's folder "
    "(an earlier release's included), then checked by load_evaluation",
    "watcher.boundary.stdio:parse_line": "not ours: a stdio server's JSON-RPC line, parsed and checked in one step "
    "by the mcp types' own validator, as the SDK's transport does (pydantic-core's parser caps the depth; its "
    "error quotes the line, which the snapshot's stdout-noise report shows)",
}
"""JSON the watcher wrote itself, read where it is: `module` (every read in it) or `module:function`."""

YAML_WRITERS = {"safe_dump", "safe_dump_all", "dump", "dump_all", "YAMLError"}
XML_PARSERS = {"fromstring", "fromstringlist", "parse", "iterparse", "XML", "XMLID", "XMLParser", "XMLPullParser"}
XML_READER_MODULES = ("xml.dom", "xml.sax", "xml.parsers", "pyexpat", "lxml", "defusedxml", "xmltodict", "bs4")
OTHER_YAML = ("ruamel", "strictyaml", "oyaml")
OTHER_TOML = ("tomli", "toml", "tomlkit", "rtoml")
OTHER_JSON = ("simplejson", "ujson", "rapidjson", "msgspec", "ijson", "simdjson", "hjson", "json5", "pysimdjson")
JSON_READERS = {"json": {"load", "loads", "JSONDecoder"}, "orjson": {"loads"}}
TOML_READERS = {"tomllib": {"load", "loads"}}
ANY_OBJECT_JSON_READERS = {"raw_decode", "model_validate_json", "validate_json"}
HTTP_JSON = ".json() (an HTTP answer's body parsed)"


@dataclass(frozen=True)
class Parse:
    module: str
    function: str
    """The enclosing function's qualified name ('' at module level)."""
    line: int
    kind: str
    """yaml, xml, toml or json."""
    what: str

    def place(self) -> str:
        return f"{self.module}:{self.function}" if self.function else self.module


def _matches(dotted: str, prefixes: tuple[str, ...]) -> bool:
    return any(dotted == p or dotted.startswith(p + ".") for p in prefixes)


class _Reader(ast.NodeVisitor):
    def __init__(self, module: str) -> None:
        self.module = module
        self.found: list[Parse] = []
        self.aliases: dict[str, str] = {}
        """Local name → the module it is (`ET` → `xml.etree.ElementTree`)."""
        self.scope: list[str] = []

    def _add(self, node: ast.AST, kind: str, what: str) -> None:
        self.found.append(Parse(self.module, ".".join(self.scope), getattr(node, "lineno", 0), kind, what))

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def _module_import(self, node: ast.AST, name: str) -> None:
        if _matches(name, XML_READER_MODULES):
            self._add(node, "xml", f"import {name}")
        elif _matches(name, OTHER_YAML) or (name.startswith("yaml.")):
            self._add(node, "yaml", f"import {name}")
        elif _matches(name, OTHER_TOML):
            self._add(node, "toml", f"import {name}")
        elif _matches(name, OTHER_JSON):
            self._add(node, "json", f"import {name}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._module_import(node, alias.name)
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                self.aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            return  # relative imports are the watcher's own modules
        self._module_import(node, base)
        for alias in node.names:
            local = alias.asname or alias.name
            full = f"{base}.{alias.name}"
            self.aliases[local] = full
            self._check_name(node, base, alias.name)

    def _check_name(self, node: ast.AST, module: str, name: str) -> None:
        """`module.name` used (as an attribute or imported by name)."""
        if module == "yaml" and name not in YAML_WRITERS:
            self._add(node, "yaml", f"yaml.{name}")
        elif module in ("xml.etree.ElementTree", "xml.etree.cElementTree", "xml.etree") and name in XML_PARSERS:
            self._add(node, "xml", f"{module}.{name}")
        elif name in JSON_READERS.get(module, ()):
            self._add(node, "json", f"{module}.{name}")
        elif name in TOML_READERS.get(module, ()):
            self._add(node, "toml", f"{module}.{name}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        dotted = _dotted(node.value)
        if dotted is not None:
            head, _, rest = dotted.partition(".")
            target = self.aliases.get(head)
            if target is not None:
                self._check_name(node, f"{target}.{rest}" if rest else target, node.attr)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr in ANY_OBJECT_JSON_READERS:
                self._add(node, "json", f".{func.attr}(…)")
            elif func.attr == "json" and not node.args and not node.keywords:
                self._add(node, "json", HTTP_JSON)
        self.generic_visit(node)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def parses_in(source: str, module: str) -> list[Parse]:
    """Every parse (as defined above) in one module's source."""
    reader = _Reader(module)
    reader.visit(ast.parse(source))
    return reader.found


def violations(found: list[Parse]) -> list[Parse]:
    """The parses outside the door that are not JSON of the watcher's own named in OWN_JSON."""
    bad = []
    for parse in found:
        if parse.module in DOOR:
            continue
        if parse.kind == "json" and (parse.module in OWN_JSON or _own_function(parse)):
            continue
        bad.append(parse)
    return bad


def _own_function(parse: Parse) -> bool:
    """The parse is inside a function named in OWN_JSON (or a function nested in it)."""
    parts = parse.function.split(".")
    return any(f"{parse.module}:{'.'.join(parts[:n])}" in OWN_JSON for n in range(1, len(parts) + 1))


def _every_parse() -> list[Parse]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        found += parses_in(path.read_text(encoding="utf-8"), module_name(path))
    return found


def test_nothing_outside_the_door_parses_yaml_xml_toml_or_outside_json() -> None:
    bad = violations(_every_parse())
    assert not bad, "parsed outside watcher.core.untrusted:\n" + "\n".join(
        f"  {p.module} line {p.line} ({p.function or 'module level'}): {p.what}" for p in bad
    )


def test_every_own_json_entry_is_still_a_place_that_reads_json() -> None:
    """A stale entry would let a later read of outside JSON through unnoticed: each names a real read."""
    found = {p.place() for p in _every_parse() if p.kind == "json"} | {
        p.module for p in _every_parse() if p.kind == "json"
    }
    stale = [key for key in OWN_JSON if key not in found and not any(f.startswith(key + ".") for f in found)]
    assert not stale, f"OWN_JSON entries with no JSON read there: {stale}"


def test_the_door_itself_is_where_the_parsers_are_called() -> None:
    """The reader sees the door's own calls (so a test that finds nothing elsewhere is not blind)."""
    door = {p.what for p in _every_parse() if p.module in DOOR}
    assert {"yaml.SafeLoader", "json.loads", "orjson.loads", "tomllib.loads", "import defusedxml"} <= door


PLANTED = [
    ("import yaml\nyaml.safe_load(text)\n", "yaml", "yaml.safe_load"),
    ("import yaml\nyaml.load(text, Loader=yaml.SafeLoader)\n", "yaml", "yaml.load"),
    ("import yaml\nnode = yaml.compose(text)\n", "yaml", "yaml.compose"),
    ("from yaml import safe_load\n", "yaml", "yaml.safe_load"),
    ("from yaml import CSafeLoader as L\n", "yaml", "yaml.CSafeLoader"),
    ("import yaml.composer\n", "yaml", "import yaml.composer"),
    ("from ruamel.yaml import YAML\n", "yaml", "import ruamel.yaml"),
    ("import xml.etree.ElementTree as ET\nET.fromstring(text)\n", "xml", "xml.etree.ElementTree.fromstring"),
    ("from xml.etree import ElementTree\nElementTree.parse(path)\n", "xml", "xml.etree.ElementTree.parse"),
    ("from xml.etree.ElementTree import XMLParser\n", "xml", "xml.etree.ElementTree.XMLParser"),
    ("from xml.dom import minidom\nminidom.parseString(text)\n", "xml", "import xml.dom"),
    ("import xml.sax\n", "xml", "import xml.sax"),
    ("from xml.parsers import expat\nexpat.ParserCreate()\n", "xml", "import xml.parsers"),
    ("import pyexpat\n", "xml", "import pyexpat"),
    ("from lxml import etree\netree.fromstring(text)\n", "xml", "import lxml"),
    ("import defusedxml.ElementTree\n", "xml", "import defusedxml.ElementTree"),
    ("import tomllib\ntomllib.loads(text)\n", "toml", "tomllib.loads"),
    ("import tomli\n", "toml", "import tomli"),
    ("import json\njson.loads(text)\n", "json", "json.loads"),
    ("import json\nwith open(p) as f:\n    json.load(f)\n", "json", "json.load"),
    ("from json import loads as parse_it\n", "json", "json.loads"),
    ("import json as j\nj.JSONDecoder().decode(text)\n", "json", "json.JSONDecoder"),
    ("import orjson\norjson.loads(body)\n", "json", "orjson.loads"),
    ("decoder.raw_decode(text)\n", "json", ".raw_decode(…)"),
    ("Model.model_validate_json(body)\n", "json", ".model_validate_json(…)"),
    (
        "async def f(client):\n    return (await client.get(url)).json()\n",
        "json",
        ".json() (an HTTP answer's body parsed)",
    ),
    ("import ujson\n", "json", "import ujson"),
]


@pytest.mark.parametrize(("source", "kind", "what"), PLANTED, ids=[p[2] for p in PLANTED])
def test_a_planted_parse_fails_the_check(source: str, kind: str, what: str) -> None:
    found = violations(parses_in(source, "watcher.planted"))
    assert [(p.kind, p.what) for p in found][:1] == [(kind, what)]


def test_writing_yaml_and_xml_and_json_is_no_parse() -> None:
    source = (
        "import json\nimport yaml\nimport xml.etree.ElementTree as ET\nimport orjson\n"
        "yaml.safe_dump(x)\nET.tostring(ET.Element('a'))\njson.dumps(x)\norjson.dumps(x)\n"
        "try:\n    pass\nexcept yaml.YAMLError:\n    pass\nresponse.json(strict=False)\n"
    )
    assert parses_in(source, "watcher.planted") == []


def test_own_json_is_allowed_only_where_it_is_named() -> None:
    source = (
        "import json\ndef read_report(p):\n    return json.loads(p.read_text())\ndef other(p):\n    json.loads(p)\n"
    )
    found = violations(parses_in(source, "watcher.suites.runner"))
    assert [(p.function, p.what) for p in found] == [("other", "json.loads")]
    assert violations(parses_in("import yaml\nyaml.safe_load(t)\n", "watcher.core.store")), "own JSON only"


def test_the_package_is_read() -> None:
    assert len(list(PACKAGE.rglob("*.py"))) > 100 and Path(PACKAGE / "core" / "untrusted.py").is_file()
