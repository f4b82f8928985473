"""Reading snapshots with orjson and comparing nodes by its bytes give exactly what the standard library gives."""

from __future__ import annotations

import json
import math
from pathlib import Path

import orjson
import pytest

from watcher.contract.diff import SnapshotError, load_snapshot
from watcher.contract.normalize import CompactEntries, read_json, stream_elements
from watcher.contract.schema_diff import canonical, json_equal

TEXTS = {
    "plain": '{"a": [1, 2.5, true, null, "x"]}',
    "NaN": '{"maximum": NaN}',
    "Infinity": "[Infinity, -Infinity]",
    "integer beyond 64 bits": '{"maximum": 123456789012345678901234567890}',
    "integer below -2**63": "[-9223372036854775809]",
    "19 digits": "[9223372036854775807]",
    "long fraction": "[0.1234567890123456789012]",
    "lone surrogate": '["\\ud800"]',
    "duplicate key": '{"a": 1, "a": 2}',
    "CRLF": '{\r\n  "a": 1\r\n}\r\n',
    "unicode": '{"é": "ü\\u00e9"}',
    "null": "null",
}


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
def test_read_json_reads_what_json_loads_reads(tmp_path: Path, text: str):
    path = tmp_path / "f.json"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    expected, got = json.loads(path.read_text(encoding="utf-8")), read_json(path)
    assert canonical(got) == canonical(expected)
    assert type(got) is type(expected)


@pytest.mark.parametrize(
    "text", ['{"a": 1', "\ufeff{}", "[1,]", ""], ids=["truncated", "BOM", "trailing comma", "empty"]
)
def test_read_json_raises_json_s_own_error(tmp_path: Path, text: str):
    path = tmp_path / "f.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(path.read_text(encoding="utf-8"))
    with pytest.raises(json.JSONDecodeError) as got:
        read_json(path)
    assert (got.value.msg, got.value.lineno, got.value.colno) == (
        expected.value.msg,
        expected.value.lineno,
        expected.value.colno,
    )


def test_an_indent_2_array_streams_element_by_element_and_a_minified_one_does_not():
    entries = [{"name": f"t{i}", "inputSchema": {"type": "object", "x": [i, {"y": None}]}} for i in range(5)]
    streamed = stream_elements(json.dumps(entries, indent=2).encode())
    assert streamed is not None and list(streamed) == entries
    # Not split at the boundaries: one span that is not one value, so the caller reads the file whole.
    for text in (json.dumps(entries), "[]"):
        elements = stream_elements(text.encode())
        assert elements is not None
        with pytest.raises(orjson.JSONDecodeError):
            list(elements)
    assert stream_elements(b'{"a": 1}') is None


def test_a_list_file_is_held_compact_and_an_unusual_one_is_read_whole(tmp_path: Path):
    tools = [{"name": "b", "description": "B"}, {"name": "a", "description": "A"}]
    for name in ("resources.json", "resource-templates.json", "prompts.json"):
        (tmp_path / name).write_text("[]")
    (tmp_path / "tools.json").write_text(json.dumps(tools, indent=2))
    ((era, snapshot),) = load_snapshot(tmp_path)[0].items()
    listed = snapshot.lists["tools"]
    assert isinstance(listed, CompactEntries) and dict(listed) == {"b": tools[0], "a": tools[1]}
    # NaN (which orjson refuses) is read the standard library's way, as before.
    (tmp_path / "tools.json").write_text(json.dumps([{"name": "a", "x": math.nan}], indent=2))
    ((_, snapshot),) = load_snapshot(tmp_path)[0].items()
    assert math.isnan(snapshot.lists["tools"]["a"]["x"])
    # Deeper than orjson writes (255 levels): held as read, compared the standard library's way.
    deep: object = []
    for _ in range(300):
        deep = [deep]
    (tmp_path / "tools.json").write_text(json.dumps([{"name": "a", "x": deep}], indent=2))
    ((_, snapshot),) = load_snapshot(tmp_path)[0].items()
    assert not isinstance(snapshot.lists["tools"], CompactEntries) and snapshot.lists["tools"]["a"]["x"] == deep
    # A duplicate is reported with its index, exactly as before.
    (tmp_path / "tools.json").write_text(json.dumps([tools[0], tools[0]], indent=2))
    with pytest.raises(SnapshotError, match=r"entry 1: duplicate name 'b'"):
        load_snapshot(tmp_path)


NAN = math.nan
PAIRS = [
    (1, True),
    (1, 1.0),
    (0.0, -0.0),
    (None, NAN),
    (NAN, NAN),
    (math.inf, None),
    ({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}),
    ([1, 2], [2, 1]),
    (2**70, 2**70),
    (2**70, float(2**70)),
    ("\ud800", "\ud800"),
    ({"x": [True]}, {"x": [1]}),
    ({"x": NAN}, {"x": None}),
    ("é", "e\u0301"),
]


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[repr(p) for p in PAIRS])
def test_json_equal_agrees_with_canonical_equality(a: object, b: object):
    assert json_equal(a, b) == (canonical(a) == canonical(b))
    assert json_equal(b, a) == (canonical(b) == canonical(a))
