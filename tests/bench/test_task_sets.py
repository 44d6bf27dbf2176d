"""The benchmark's inputs: grading, the conventions family, and JSONL task files read line by line."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from ace_eval.bench.conventions import CONTROL_KINDS, RULES, conventions
from ace_eval.bench.items import BenchItem, normalise_answer
from ace_eval.bench.task_file import MAX_FIELD_CHARS, TaskFileError, load_task_file


@pytest.mark.parametrize(
    ("answer", "expected", "right"),
    [
        ("SMITH, John", "SMITH, John", True),
        ('"smith,  john."', "SMITH, John", True),  # quotes, case, spaces, a final period
        ("`2500g`", "2500 g", True),
        ("2024-03-05", "2024.03.05", False),
        ("John Smith", "SMITH, John", False),
        ("INV/2023/482 is the reference", "INV/2023/482", False),
    ],
)
def test_normalised_grading(answer: str, expected: str, right: bool) -> None:
    assert BenchItem("i", "test", "q", expected).is_correct(answer) is right


def test_exact_grading_only_strips_the_ends() -> None:
    item = BenchItem("i", "test", "q", "SMITH, John", grading="exact")
    assert item.is_correct("  SMITH, John\n")
    assert not item.is_correct("smith, john")
    assert normalise_answer("'A b.'") == "ab"


def test_an_item_cannot_be_both_a_control_and_under_a_rule() -> None:
    with pytest.raises(ValueError, match="control item is one no rule touches"):
        BenchItem("i", "test", "q", "a", rule="r", control=True)


def test_conventions_are_deterministic_by_seed_and_distinct_across_splits() -> None:
    first, again, other = conventions(7), conventions(7), conventions(8)
    assert first == again
    assert [i.question for i in first.items] != [i.question for i in other.items]
    questions = [item.question for item in first.items]
    assert len(set(questions)) == len(questions)  # no question is both a train and a test item
    assert len({item.id for item in first.items}) == len(first.items)


def test_conventions_hold_every_rule_in_both_splits_and_controls_beside_them() -> None:
    task_set = conventions(3, train_per_rule=2, test_per_rule=3, train_controls=1, test_controls=5)
    for split, per_rule, controls in (("train", 2, 1), ("test", 3, 5)):
        kinds = Counter(item.kind for item in task_set.split(split))
        assert kinds == {**{rule: per_rule for rule in RULES}, "control": controls}
    control_ids = [item.id for item in task_set.split("test") if item.control]
    assert [next(kind for kind in CONTROL_KINDS if kind in item_id) for item_id in control_ids] == list(CONTROL_KINDS)
    assert task_set.rules == RULES
    # every prefix of a split holds each rule and the controls in proportion (within one item)
    test = task_set.split("test")
    for n in range(1, len(test) + 1):
        counts = Counter(item.kind for item in test[:n])
        for kind, total in (*((rule, 3) for rule in RULES), ("control", 5)):
            assert abs(counts[kind] - n * total / len(test)) <= 1, (n, kind, counts)


def test_conventions_answers_follow_their_rules() -> None:
    patterns = {
        "delivery_date": r"20\d\d\.\d\d\.\d\d",
        "invoice_reference": r"INV/20\d\d/\d{3,4}",
        "directory_name": r"[A-Z]+, [A-Z][a-z]+",
        "label_weight": r"\d+ g",
        "clearance_refund": r"DENY",
    }
    for item in conventions(0).items:
        if item.rule is not None:
            assert re.fullmatch(patterns[item.rule], item.expected), item
            if item.rule != "clearance_refund":  # a refund question names both choices
                assert item.expected not in item.question  # the rule is hidden: only feedback shows the answer
    refunds = [item for item in conventions(0).items if "regular_refund" in item.id]
    assert refunds and all(item.expected == "APPROVE" for item in refunds)


def _write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_malformed_line_fails_alone_naming_its_line(tmp_path: Path) -> None:
    good = '{"id": "a", "split": "train", "question": "q1", "expected": "x"}'
    path = _write(
        tmp_path / "tasks.jsonl",
        good,
        "{not json",
        '{"id": "b", "split": "test", "question": "q2"}',
        "",
        '{"id": "c", "split": "dev", "question": "q3", "expected": "y"}',
        '{"id": "a", "split": "test", "question": "q4", "expected": "z"}',
        '{"id": "d", "split": "test", "question": "q5", "expected": 5}',
        '{"id": "e", "split": "test", "question": "q6", "expected": "w", "control": "yes"}',
        '{"id": "f", "split": "test", "question": "q7", "expected": "v", "answer": "v"}',
        '{"id": "g", "split": "test", "question": "q8", "expected": "u", "rule": "r1", "control": false, "grading": "exact"}',
        "[1, 2]",
    )

    task_file = load_task_file(path)

    assert [item.id for item in task_file.items] == ["a", "g"]
    assert task_file.items[1] == BenchItem("g", "test", "q8", "u", rule="r1", grading="exact")
    problems = task_file.problems
    assert [int(re.search(r" line (\d+):", p).group(1)) for p in problems] == [2, 3, 5, 6, 7, 8, 9, 11]  # type: ignore[union-attr]
    assert all(p.startswith(f"{path} line ") and "\n" not in p for p in problems)
    assert "not valid JSON" in problems[0]
    assert "missing expected" in problems[1]
    assert "split must be one of train, test; got 'dev'" in problems[2]
    assert "used by an earlier line" in problems[3]
    assert "expected must be a string, got a number" in problems[4]
    assert "control must be true or false" in problems[5]
    assert "unknown field(s) 'answer'" in problems[6]
    assert "not an object" in problems[7]


def test_an_overlong_field_fails_its_line(tmp_path: Path) -> None:
    long = "x" * (MAX_FIELD_CHARS + 1)
    task_file = load_task_file(
        _write(tmp_path / "t.jsonl", f'{{"id": "a", "split": "test", "question": "{long}", "expected": "y"}}')
    )
    assert task_file.items == () and "at most" in task_file.problems[0]


def test_an_unreadable_task_file_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(TaskFileError, match="no such task file"):
        load_task_file(tmp_path / "missing.jsonl")
    with pytest.raises(TaskFileError, match="is a folder"):
        load_task_file(tmp_path)
    (tmp_path / "latin1.jsonl").write_bytes(b'{"id": "\xe9"}\n')
    with pytest.raises(TaskFileError, match="UTF-8"):
        load_task_file(tmp_path / "latin1.jsonl")
