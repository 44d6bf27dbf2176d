"""A skill's second vector, `match_embedding` (of `match_text()`): stored like `embedding`, with its
own model and dimension, cleared by the edits that change its text, kept in the same sidecar."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

from ace.skillbook import Skillbook, SkillbookError, SkillbookFormatError

CONTEXT, HARNESS = "context-00001", "harness-00001"


@pytest.fixture
def book() -> Skillbook:
    book = Skillbook()
    book.add_skill("context", "Integer division truncates rates.", ["sql", "integer_division"], "Cast to numeric.")
    book.add_skill("harness", "The sandbox has no network.", ["sandbox"])
    book.set_embeddings({CONTEXT: np.ones(4), HARNESS: np.ones(4)}, model="search-model")
    book.set_embeddings({CONTEXT: np.full(3, 2.0), HARNESS: np.full(3, 3.0)}, model="match-model", kind="match")
    return book


def test_match_text_is_the_issue_and_keywords_without_the_insight(book: Skillbook) -> None:
    skill = book.get_skill(CONTEXT)
    assert skill.match_text() == "Integer division truncates rates.\nKeywords: sql, integer division"
    assert skill.embedding_input("match") == skill.match_text()
    assert skill.embedding_input("search") == skill.embedding_text()


def test_each_kind_has_its_own_model_and_dimension(book: Skillbook) -> None:
    skill = book.get_skill(CONTEXT)
    assert (book.embedding_model, book.match_embedding_model) == ("search-model", "match-model")
    assert skill.embedding.shape == (4,) and skill.match_embedding.shape == (3,)
    assert skill.match_embedding.dtype == np.float32 and not skill.match_embedding.flags.writeable


def test_a_new_match_model_clears_only_the_other_match_vectors(book: Skillbook) -> None:
    book.set_embeddings({CONTEXT: np.ones(5)}, model="other-match-model", kind="match")

    assert book.get_skill(HARNESS).match_embedding is None
    assert book.get_skill(HARNESS).embedding is not None and book.embedding_model == "search-model"


def test_a_match_vector_of_another_dimension_is_refused(book: Skillbook) -> None:
    with pytest.raises(SkillbookError, match="one dimension"):
        book.set_embeddings({CONTEXT: np.ones(4)}, model="match-model", kind="match")


@pytest.mark.parametrize("vector", [[np.nan, 1.0], ["a", "b"], np.ones((2, 2))])
def test_a_bad_match_vector_is_refused(book: Skillbook, vector: object) -> None:
    with pytest.raises(SkillbookError):
        book.set_embeddings({CONTEXT: vector}, model="match-model", kind="match")


def test_an_unknown_kind_is_refused(book: Skillbook) -> None:
    with pytest.raises(SkillbookError, match="kind must be one of"):
        book.set_embeddings({CONTEXT: np.ones(3)}, model="m", kind="insight")  # type: ignore[arg-type]


def test_an_insight_edit_clears_the_search_vector_only(book: Skillbook) -> None:
    skill = book.update_skill(CONTEXT, insight="Cast one operand to numeric.")
    assert skill.embedding is None and skill.match_embedding is not None


@pytest.mark.parametrize("change", [{"issue": "Integer division gives 0."}, {"keywords": ["sql"]}])
def test_an_issue_or_keywords_edit_clears_both_vectors(book: Skillbook, change: dict) -> None:
    skill = book.update_skill(CONTEXT, **change)
    assert skill.embedding is None and skill.match_embedding is None


def test_counters_keep_both_vectors(book: Skillbook) -> None:
    book.tag_skill(CONTEXT, 1)
    book.mark_used([CONTEXT])
    skill = book.get_skill(CONTEXT)
    assert skill.embedding is not None and skill.match_embedding is not None


def test_a_match_vector_stale_since_its_texts_were_read_is_skipped(book: Skillbook) -> None:
    read_at = book.version
    book.update_skill(CONTEXT, keywords=["sql"])

    stored = book.set_embeddings(
        {CONTEXT: np.ones(3), HARNESS: np.ones(3)}, model="match-model", kind="match", computed_at_version=read_at
    )

    assert stored == {HARNESS} and book.get_skill(CONTEXT).match_embedding is None


def test_both_kinds_round_trip_through_one_sidecar(book: Skillbook, tmp_path: Path) -> None:
    book.save_to_file(tmp_path / "sb.json")

    loaded = Skillbook.load_from_file(tmp_path / "sb.json")

    assert sorted(p.name for p in tmp_path.iterdir()) == ["sb.embeddings.npz", "sb.json"]
    assert (loaded.embedding_model, loaded.match_embedding_model) == ("search-model", "match-model")
    for skill_id in (CONTEXT, HARNESS):
        before, after = book.get_skill(skill_id), loaded.get_skill(skill_id)
        assert np.array_equal(before.embedding, after.embedding)
        assert np.array_equal(before.match_embedding, after.match_embedding)


def test_a_sidecar_without_match_vectors_loads_with_none(book: Skillbook, tmp_path: Path) -> None:
    only_search = Skillbook.from_dict(book.to_dict())
    only_search.set_embeddings({CONTEXT: np.ones(4)}, model="search-model")
    only_search.save_to_file(tmp_path / "sb.json")
    with zipfile.ZipFile(tmp_path / "sb.embeddings.npz") as archive:
        assert not [name for name in archive.namelist() if "match" in name]

    loaded = Skillbook.load_from_file(tmp_path / "sb.json")

    assert loaded.match_embedding_model is None
    assert all(skill.match_embedding is None for skill in loaded.skills())
    assert loaded.get_skill(CONTEXT).embedding is not None


def test_a_match_vector_whose_text_changed_on_disk_is_dropped_and_the_search_one_kept(
    book: Skillbook, tmp_path: Path
) -> None:
    book.save_to_file(tmp_path / "sb.json")
    edited = Skillbook.load_from_file(tmp_path / "sb.json")
    document = edited.to_dict()
    document["skills"][HARNESS]["keywords"] = ["sandbox", "network"]  # changes both texts of HARNESS
    document["skills"][CONTEXT]["insight"] = "Use CAST(x AS numeric)."  # changes the search text only
    (tmp_path / "sb.json").write_text(__import__("json").dumps(document))

    loaded = Skillbook.load_from_file(tmp_path / "sb.json")

    assert loaded.get_skill(HARNESS).match_embedding is None and loaded.get_skill(HARNESS).embedding is None
    assert loaded.get_skill(CONTEXT).match_embedding is not None and loaded.get_skill(CONTEXT).embedding is None


def test_a_match_vector_in_the_json_is_refused(book: Skillbook) -> None:
    document = book.to_dict()
    document["skills"][CONTEXT]["match_embedding"] = [1.0, 2.0]
    with pytest.raises(SkillbookFormatError, match="unknown field"):
        Skillbook.from_dict(document)
