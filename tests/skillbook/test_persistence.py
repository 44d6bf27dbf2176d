"""JSON + npz persistence: round trips, sidecar handling, format errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ace.skillbook import InsightSource, Skillbook, SkillbookFormatError, TraceRef, embedding_sidecar_path


@pytest.fixture
def rich_book(source: InsightSource) -> Skillbook:
    """Skills with every kind of state: occurrences with trace refs, counters, an inactive skill, vectors."""
    book = Skillbook()
    ref = TraceRef(
        text_excerpt="cabin applies to all legs", json_path="$.messages[3]", step_indices=(2,), span_ids=("ab12",)
    )
    book.add_skill(
        "context", "Issue one.", ["airline"], "Insight one.", insight_source=source.replace(trace_refs=(ref,))
    )
    book.add_skill("harness", "Issue two.", ["tau2"])
    book.add_skill("context", "Issue three.", ["retail"], "Insight three.")
    book.tag_skill("context-00001", -1, insight_source=source)
    book.mark_used(["context-00001", "harness-00001"])
    book.remove_skill("context-00002", "superseded", insight_source=source)
    book.set_embeddings({"context-00001": [0.25, -1.0, 3.5], "harness-00001": [1.0, 2.0, 3.0]}, model="minilm")
    return book


def _state(book: Skillbook) -> list[tuple]:
    return [(s, None if s.embedding is None else s.embedding.tolist()) for s in book.skills(include_inactive=True)]


def test_save_then_load_reproduces_every_skill_and_embedding(tmp_path: Path, rich_book: Skillbook) -> None:
    rich_book.save_to_file(tmp_path / "sb.json")
    loaded = Skillbook.load_from_file(tmp_path / "sb.json")
    assert _state(loaded) == _state(rich_book)
    assert loaded.embedding_model == "minilm"


def test_save_writes_json_without_embeddings_and_a_sidecar(tmp_path: Path, rich_book: Skillbook) -> None:
    rich_book.save_to_file(tmp_path / "sb.json")
    document = json.loads((tmp_path / "sb.json").read_text())
    assert document["schema_version"] == "2"
    assert all("embedding" not in skill for skill in document["skills"].values())
    with np.load(tmp_path / "sb.embeddings.npz") as archive:
        assert archive["context-00001"].dtype == np.float32
        assert {"context-00001", "harness-00001"} <= set(archive.files)
        assert "context-00002" not in archive.files


def test_load_without_sidecar_has_no_embeddings(tmp_path: Path, rich_book: Skillbook) -> None:
    rich_book.save_to_file(tmp_path / "sb.json")
    (tmp_path / "sb.embeddings.npz").unlink()
    loaded = Skillbook.load_from_file(tmp_path / "sb.json")
    assert [s.embedding for s in loaded.skills(include_inactive=True)] == [None, None, None]
    assert [s for s, _ in _state(loaded)] == [s for s, _ in _state(rich_book)]


def test_vector_of_a_skill_edited_in_the_json_is_dropped(tmp_path: Path, rich_book: Skillbook) -> None:
    rich_book.save_to_file(tmp_path / "sb.json")
    document = json.loads((tmp_path / "sb.json").read_text())
    document["skills"]["context-00001"]["issue"] = "Edited by hand."
    (tmp_path / "sb.json").write_text(json.dumps(document))
    loaded = Skillbook.load_from_file(tmp_path / "sb.json")
    assert loaded.get_skill("context-00001").embedding is None
    assert loaded.get_skill("harness-00001").embedding is not None


def test_ids_keep_counting_after_reload(tmp_path: Path, rich_book: Skillbook) -> None:
    rich_book.purge("context-00002")
    rich_book.save_to_file(tmp_path / "sb.json")
    assert Skillbook.load_from_file(tmp_path / "sb.json").add_skill("context", "i", ["k"], "x").id == "context-00003"


def test_sidecar_path_replaces_the_json_suffix() -> None:
    assert embedding_sidecar_path(Path("runs/sb.json")) == Path("runs/sb.embeddings.npz")


def test_embedding_list_in_older_json_becomes_float32_vector(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(
        json.dumps(
            {
                "schema_version": "2",
                "skills": {
                    "harness-00001": {
                        "id": "harness-00001",
                        "section": "harness",
                        "keywords": ["k"],
                        "issue": "i",
                        "embedding": [1, 2],
                        "created_at": "2026-01-01T00:00:00+00:00",
                        "updated_at": "2026-01-01T00:00:00+00:00",
                    }
                },
            }
        )
    )
    vector = Skillbook.load_from_file(path).get_skill("harness-00001").embedding
    assert isinstance(vector, np.ndarray) and vector.dtype == np.float32 and vector.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("document", [{"skills": {}}, {"schema_version": "1", "skills": {}}, {"schema_version": 2}])
def test_load_of_other_schema_version_asks_to_regenerate(tmp_path: Path, document: dict) -> None:
    path = tmp_path / "sb.json"
    path.write_text(json.dumps(document))
    with pytest.raises(SkillbookFormatError) as caught:
        Skillbook.load_from_file(path)
    assert str(caught.value) == "Skillbook format v2 required — regenerate"
    assert isinstance(caught.value, ValueError)


def test_schema_version_error_notes_the_file_and_found_version(tmp_path: Path) -> None:
    path = tmp_path / "sb.json"
    path.write_text(json.dumps({"schema_version": "1"}))
    with pytest.raises(SkillbookFormatError) as caught:
        Skillbook.load_from_file(path)
    assert caught.value.__notes__ == [f"{path} has schema_version='1'"]


def test_load_of_malformed_json_raises_format_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "sb.json"
    path.write_text('{"schema_version": "2", "skills": {')
    with pytest.raises(SkillbookFormatError, match=r"sb\.json is not valid JSON"):
        Skillbook.load_from_file(path)


@pytest.mark.parametrize(
    "field, value",
    [
        ("section", "general"),
        ("keywords", []),
        ("issue", ""),
        ("insight", None),
        ("helpful_count", -1),
        ("active", "yes"),
    ],
)
def test_load_of_skill_breaking_an_invariant_names_skill_and_field(
    tmp_path: Path, rich_book: Skillbook, field: str, value: object
) -> None:
    rich_book.save_to_file(tmp_path / "sb.json")
    document = json.loads((tmp_path / "sb.json").read_text())
    document["skills"]["context-00002"][field] = value
    (tmp_path / "sb.json").write_text(json.dumps(document))
    with pytest.raises(SkillbookFormatError, match=rf"skill 'context-00002'.*{field}"):
        Skillbook.load_from_file(tmp_path / "sb.json")


def test_load_of_skill_with_unknown_field_names_the_field(tmp_path: Path, rich_book: Skillbook) -> None:
    rich_book.save_to_file(tmp_path / "sb.json")
    document = json.loads((tmp_path / "sb.json").read_text())
    document["skills"]["harness-00001"]["content"] = "v1 field"
    (tmp_path / "sb.json").write_text(json.dumps(document))
    with pytest.raises(SkillbookFormatError, match=r"skill 'harness-00001'.*'content'"):
        Skillbook.load_from_file(tmp_path / "sb.json")


def test_load_of_damaged_sidecar_raises_format_error_naming_it(tmp_path: Path, rich_book: Skillbook) -> None:
    rich_book.save_to_file(tmp_path / "sb.json")
    (tmp_path / "sb.embeddings.npz").write_bytes(b"not a zip file")
    with pytest.raises(SkillbookFormatError, match=r"sb\.embeddings\.npz.*delete it"):
        Skillbook.load_from_file(tmp_path / "sb.json")


def test_load_of_missing_file_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Skillbook.load_from_file(tmp_path / "absent.json")


def test_save_leaves_no_temporary_files(tmp_path: Path, rich_book: Skillbook) -> None:
    rich_book.save_to_file(tmp_path / "sb.json")
    rich_book.save_to_file(tmp_path / "sb.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sb.embeddings.npz", "sb.json"]


def test_to_dict_from_dict_round_trip(rich_book: Skillbook) -> None:
    restored = Skillbook.from_dict(rich_book.to_dict())
    assert [s for s, _ in _state(restored)] == [s for s, _ in _state(rich_book)]
