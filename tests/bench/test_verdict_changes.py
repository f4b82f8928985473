"""bench/verdict_changes.py: the verdicts two reports of one case differ in, paired and each given the rule of the
diff that explains it, or none (which bench/verdicts_unchanged.py fails on)."""

from __future__ import annotations

from bench.verdict_changes import (
    EXPERIMENTAL,
    FORMAT_ALONE,
    IN_VIEW,
    NOT_SPEC,
    VALUE_SETS,
    Verdict,
    changed_verdicts,
    verdicts,
)


def _v(path: str, rule: str, grade: str, name: str = "search", list_name: str = "tools") -> Verdict:
    return Verdict(list_name, name, path, "legacy", "typical", rule, grade)


def test_a_report_is_read_into_verdicts() -> None:
    report = {
        "changes": [
            {"list": "tools", "name": "t", "path": "inputSchema", "era": "legacy", "profile": None, "rule": "r"}
            | {"grade": "info"}
        ]
    }
    assert verdicts(report) == {Verdict("tools", "t", "inputSchema", "legacy", None, "r", "info")}
    assert verdicts({}) == set()


def test_a_regrading_at_one_place_is_paired_and_explained() -> None:
    before = [_v("inputSchema.properties.url.format", "type_narrowed", "breaking")]
    after = [_v("inputSchema.properties.url.format", "format_changed", "dangerous")]
    [change] = changed_verdicts(before, after)
    assert (change.before, change.after, change.reason) == (before[0], after[0], FORMAT_ALONE)
    assert change.was_breaking and not change.is_breaking


def test_a_verdict_gone_on_a_string_keyword_was_judged_in_view() -> None:
    [change] = changed_verdicts([_v("inputSchema.properties.location.minLength", "type_narrowed", "breaking")], [])
    assert change.after is None and change.reason == IN_VIEW


def test_a_union_verdict_moved_below_its_old_path_is_one_change_of_value_sets() -> None:
    before = [
        _v("inputSchema.properties.mode.anyOf", "type_narrowed", "breaking"),
        _v("inputSchema.properties.mode.anyOf", "type_widened", "models"),
    ]
    after = [_v("inputSchema.properties.mode.anyOf[string].enum", "type_narrowed", "breaking")]
    changes = changed_verdicts(before, after)
    assert [(c.before is not None, c.after is not None, c.reason) for c in changes] == [
        (True, True, VALUE_SETS),
        (True, False, VALUE_SETS),
    ]


def test_capabilities_the_spec_does_not_define_and_experimental_entries() -> None:
    old = [_v("capabilities.elicitation", "capability_removed", "breaking", "elicitation", "server")]
    new = [_v("capabilities.elicitation", "non_spec_capability_changed", "info", "elicitation", "server")]
    assert [c.reason for c in changed_verdicts(old, new)] == [NOT_SPEC]
    # The whole map's removal (entry "experimental") became one removal per entry (entry "experimental.<name>"):
    # not one place, so not paired, and each explained on its own.
    name = "experimental.io.example/x"
    old = [_v("capabilities.experimental", "capability_removed", "breaking", "experimental", "server")]
    new = [_v(f"capabilities.{name}", "experimental_capability_removed", "dangerous", name, "server")]
    assert [(c.before is not None, c.reason) for c in changed_verdicts(old, new)] == [
        (True, EXPERIMENTAL),
        (False, EXPERIMENTAL),
    ]


def test_a_change_no_rule_explains_has_no_reason() -> None:
    [change] = changed_verdicts([_v("inputSchema.required", "required_parameter_added", "breaking")], [])
    assert change.reason is None and "UNEXPLAINED" in change.shown()
    assert changed_verdicts([_v("x", "r", "info")], [_v("x", "r", "info")]) == []
