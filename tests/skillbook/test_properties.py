"""Property-based tests: keyword normalisation and save/load round trips."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ace.skillbook import MAX_KEYWORD_LENGTH, InsightSource, Skillbook, SkillbookError, normalize_keywords

keyword_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)
keyword_lists = st.lists(
    keyword_text | st.sampled_from(["Booking API", "booking-api", " Cabin  class", "--", ""]), max_size=8
)


def _normalised_or_none(keywords: list[str]) -> tuple[str, ...] | None:
    try:
        return normalize_keywords(keywords)
    except SkillbookError:
        return None


@given(keyword_lists)
def test_normalised_keywords_are_lowercase_identifiers_without_separators(keywords: list[str]) -> None:
    normalised = _normalised_or_none(keywords)
    if normalised is None:
        return
    for keyword in normalised:
        assert keyword and keyword == keyword.lower() and len(keyword) <= MAX_KEYWORD_LENGTH
        assert not re.search(r"[\s\-]", keyword) and not keyword.startswith("_") and not keyword.endswith("_")


@given(keyword_lists)
def test_normalisation_is_idempotent(keywords: list[str]) -> None:
    normalised = _normalised_or_none(keywords)
    if normalised is not None:
        assert normalize_keywords(normalised) == normalised


@given(keyword_lists)
def test_normalised_keywords_are_unique_and_keep_first_occurrence_order(keywords: list[str]) -> None:
    normalised = _normalised_or_none(keywords)
    if normalised is None:
        return
    assert len(set(normalised)) == len(normalised)
    singles = [_normalised_or_none([k]) for k in keywords]
    first_seen = list(dict.fromkeys(s[0] for s in singles if s))
    assert list(normalised) == first_seen


@given(keyword_lists)
def test_normalisation_rejects_only_lists_without_any_label(keywords: list[str]) -> None:
    has_label = any(_normalised_or_none([k]) for k in keywords)
    assert (_normalised_or_none(keywords) is not None) == has_label


text = st.text(min_size=1, max_size=40).filter(lambda t: t.strip())
labels = st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True), min_size=1, max_size=4)
sources = st.builds(
    InsightSource,
    source_system=st.from_regex(r"[a-z0-9\-]{1,10}", fullmatch=True),
    trace_id=st.from_regex(r"[a-z0-9\-]{1,10}", fullmatch=True),
    epoch=st.none() | st.integers(0, 5),
    learning_text=st.none() | text,
)
actions = st.lists(
    st.one_of(
        st.tuples(st.just("add_context"), text, labels, text, st.none() | sources),
        st.tuples(st.just("add_harness"), text, labels, st.none() | text, st.none() | sources),
        st.tuples(st.just("tag"), st.integers(0, 9), st.sampled_from([-1, 0, 1]), st.none() | sources),
        st.tuples(st.just("remove"), st.integers(0, 9), text),
        st.tuples(
            st.just("embed"), st.integers(0, 9), st.lists(st.floats(-1e3, 1e3, width=32), min_size=3, max_size=3)
        ),
    ),
    max_size=12,
)


def _build(steps: list[tuple]) -> Skillbook:
    book = Skillbook()
    for step in steps:
        existing = [s.id for s in book.skills(include_inactive=True)]
        if step[0] == "add_context":
            book.add_skill("context", step[1], step[2], step[3], insight_source=step[4])
        elif step[0] == "add_harness":
            book.add_skill("harness", step[1], step[2], step[3], insight_source=step[4])
        elif existing and step[0] == "tag":
            book.tag_skill(existing[step[1] % len(existing)], step[2], insight_source=step[3])
        elif existing and step[0] == "remove":
            book.remove_skill(existing[step[1] % len(existing)], step[2])
        elif existing and step[0] == "embed":
            book.set_embeddings({existing[step[1] % len(existing)]: step[2]}, model="m")
    return book


@settings(max_examples=60, deadline=None)
@given(actions)
def test_save_then_load_round_trips_any_skillbook(steps: list[tuple]) -> None:
    book = _build(steps)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sb.json"
        book.save_to_file(path)
        loaded = Skillbook.load_from_file(path)
    assert loaded.skills(include_inactive=True) == book.skills(include_inactive=True)
    for original, restored in zip(book.skills(include_inactive=True), loaded.skills(include_inactive=True)):
        assert (original.embedding is None) == (restored.embedding is None)
        if original.embedding is not None:
            assert np.array_equal(original.embedding, restored.embedding)
    assert loaded.add_skill("harness", "next", ["k"]).id == book.add_skill("harness", "next", ["k"]).id
