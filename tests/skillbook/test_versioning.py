"""Version, change log, embeddings storage and the read-only view."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from ace.skillbook import (
    Skillbook,
    SkillbookError,
    SkillbookView,
    SkillNotFoundError,
    UpdateBatch,
    UpdateOperation,
)
from ace.skillbook._changelog import ChangeLog


@pytest.mark.parametrize(
    "mutate, changed_id",
    [
        (lambda b: b.add_skill("harness", "new", ["k"]), "harness-00002"),
        (lambda b: b.update_skill("harness-00001", issue="wider"), "harness-00001"),
        (lambda b: b.tag_skill("harness-00001", 1), "harness-00001"),
        (lambda b: b.remove_skill("harness-00001", "stale"), "harness-00001"),
        (lambda b: b.purge("harness-00001"), "harness-00001"),
        (lambda b: b.activate_skill(b.remove_skill("harness-00001", "stale").id), "harness-00001"),
        (lambda b: b.mark_used(["harness-00001"]), "harness-00001"),
        (lambda b: b.set_embeddings({"harness-00001": [1.0, 0.0]}, model="m"), "harness-00001"),
        (
            lambda b: b.apply_update(
                UpdateBatch("r", [UpdateOperation(type="TAG", skill_id="harness-00001", delta=0)])
            ),
            "harness-00001",
        ),
    ],
    ids=["add", "update", "tag", "remove", "purge", "remove+activate", "mark_used", "set_embeddings", "apply_update"],
)
def test_every_mutation_bumps_version_and_reports_the_changed_id(skillbook: Skillbook, mutate, changed_id: str) -> None:
    before = skillbook.version
    mutate(skillbook)
    assert skillbook.version > before
    assert skillbook.changed_ids_since(before) == {changed_id}


def test_recording_a_keep_decision_bumps_version_without_reporting_a_changed_skill(skillbook: Skillbook) -> None:
    before = skillbook.version
    skillbook.record_keep_decision("context-00001", "harness-00001", reasoning="distinct", similarity=0.91)
    assert skillbook.version > before
    assert skillbook.changed_ids_since(before) == frozenset()


def test_changed_ids_since_current_version_is_empty(skillbook: Skillbook) -> None:
    assert skillbook.changed_ids_since(skillbook.version) == frozenset()


def test_changed_ids_since_zero_lists_every_skill_ever_created(skillbook: Skillbook) -> None:
    skillbook.purge("harness-00001")
    assert skillbook.changed_ids_since(0) == {"context-00001", "harness-00001"}


def test_content_only_ignores_counters_and_embeddings(skillbook: Skillbook) -> None:
    before = skillbook.version
    skillbook.tag_skill("context-00001", 1)
    skillbook.mark_used(["context-00001"])
    skillbook.set_embeddings({"context-00001": [1.0]}, model="m")
    skillbook.remove_skill("harness-00001", "stale")
    assert skillbook.changed_ids_since(before, content_only=True) == {"harness-00001"}


def test_activation_is_a_content_change_so_indexes_refresh_the_skill(skillbook: Skillbook) -> None:
    skillbook.remove_skill("harness-00001", "stale")
    before = skillbook.version
    skillbook.activate_skill("harness-00001")
    assert skillbook.changed_ids_since(before, content_only=True) == {"harness-00001"}


def test_change_log_answers_none_once_it_no_longer_reaches_back() -> None:
    log = ChangeLog(capacity=3)
    for skill_id in "abcd":
        log.record([skill_id], content=True)
    assert (log.changed_since(0), log.changed_since(1)) == (None, {"b", "c", "d"})


def test_changed_ids_since_a_version_this_skillbook_never_had_is_none(skillbook: Skillbook) -> None:
    assert skillbook.changed_ids_since(skillbook.version + 1) is None


def test_loaded_skillbook_reports_all_ids_since_zero(tmp_path, skillbook: Skillbook) -> None:
    skillbook.save_to_file(tmp_path / "sb.json")
    loaded = Skillbook.load_from_file(tmp_path / "sb.json")
    assert loaded.changed_ids_since(0) == {"context-00001", "harness-00001"}


def test_set_embeddings_stores_read_only_float32_vectors(skillbook: Skillbook) -> None:
    skillbook.set_embeddings({"context-00001": [0.5, 1.5]}, model="m")
    vector = skillbook.get_skill("context-00001").embedding
    assert vector.dtype == np.float32 and vector.tolist() == [0.5, 1.5] and not vector.flags.writeable


def test_set_embeddings_records_the_model(skillbook: Skillbook) -> None:
    skillbook.set_embeddings({"context-00001": [1.0]}, model="minilm")
    assert skillbook.embedding_model == "minilm"


def test_set_embeddings_does_not_move_updated_at(skillbook: Skillbook) -> None:
    before = skillbook.get_skill("context-00001").updated_at
    assert skillbook.set_embeddings({"context-00001": [1.0]}, model="m") == {"context-00001"}
    assert skillbook.get_skill("context-00001").updated_at == before


def test_set_embeddings_with_new_model_clears_other_vectors(skillbook: Skillbook) -> None:
    skillbook.set_embeddings({"context-00001": [1.0], "harness-00001": [2.0]}, model="old")
    skillbook.set_embeddings({"context-00001": [3.0, 4.0]}, model="new")
    assert skillbook.get_skill("harness-00001").embedding is None


def test_set_embeddings_with_same_model_keeps_other_vectors(skillbook: Skillbook) -> None:
    skillbook.set_embeddings({"harness-00001": [2.0]}, model="m")
    skillbook.set_embeddings({"context-00001": [3.0]}, model="m")
    assert skillbook.get_skill("harness-00001").embedding.tolist() == [2.0]


def test_set_embeddings_with_mismatched_dimension_raises(skillbook: Skillbook) -> None:
    skillbook.set_embeddings({"harness-00001": [2.0, 1.0]}, model="m")
    with pytest.raises(SkillbookError, match=r"dimension.*\[2, 3\]"):
        skillbook.set_embeddings({"context-00001": [3.0, 1.0, 0.0]}, model="m")


@pytest.mark.parametrize("vector", [[[1.0, 2.0]], [], [float("nan")], ["a"]], ids=["2d", "empty", "nan", "text"])
def test_set_embeddings_rejects_invalid_vectors(skillbook: Skillbook, vector: list) -> None:
    with pytest.raises(SkillbookError, match="context-00001"):
        skillbook.set_embeddings({"context-00001": vector}, model="m")


def test_set_embeddings_skips_vectors_of_skills_changed_since_the_texts_were_read(skillbook: Skillbook) -> None:
    read_at = skillbook.version
    skillbook.update_skill("context-00001", issue="Rewritten while embedding ran.")
    stored = skillbook.set_embeddings(
        {"context-00001": [1.0], "harness-00001": [2.0]}, model="m", computed_at_version=read_at
    )
    assert stored == {"harness-00001"} and skillbook.get_skill("context-00001").embedding is None


def test_set_embeddings_skips_skills_purged_since_the_texts_were_read(skillbook: Skillbook) -> None:
    read_at = skillbook.version
    skillbook.purge("context-00001")
    stored = skillbook.set_embeddings(
        {"context-00001": [1.0], "harness-00001": [2.0]}, model="m", computed_at_version=read_at
    )
    assert stored == {"harness-00001"}


def test_set_embeddings_for_an_id_that_never_existed_raises_even_with_a_version(skillbook: Skillbook) -> None:
    with pytest.raises(SkillNotFoundError, match="context-00099"):
        skillbook.set_embeddings({"context-00099": [1.0]}, model="m", computed_at_version=skillbook.version)


def test_view_reads_like_the_skillbook_and_follows_it(skillbook: Skillbook) -> None:
    view = skillbook.view()
    skillbook.add_skill("harness", "later", ["k"])
    assert (view.skills(), view.as_prompt(), view.stats(), len(view), view.version) == (
        skillbook.skills(),
        skillbook.as_prompt(),
        skillbook.stats(),
        len(skillbook),
        skillbook.version,
    )
    assert view.get_skill("harness-00002") is skillbook.get_skill("harness-00002")


def test_view_has_no_mutating_method(skillbook: Skillbook) -> None:
    mutators = {
        "add_skill",
        "update_skill",
        "tag_skill",
        "remove_skill",
        "purge",
        "mark_used",
        "set_embeddings",
        "apply_update",
        "save_to_file",
    }
    assert mutators <= set(dir(skillbook))
    assert not mutators & {name for name, _ in inspect.getmembers(SkillbookView)}


def test_view_cannot_grow_attributes(skillbook: Skillbook) -> None:
    with pytest.raises(AttributeError):
        skillbook.view().add_skill = skillbook.add_skill  # type: ignore[attr-defined]
