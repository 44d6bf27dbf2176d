"""Interop with ace-framework 0.13.0, the public implementation of the v2 design.

Loading its files is tested on a fixture it wrote. Writing files it can load is checked against
what its `Skillbook.from_dict`/`load_from_file` (ace/core/skillbook.py, 0.13.0) require, recorded
below; the full round trip through 0.13 itself was checked by hand (see docs/skillbook.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from data_files import DATA_DIR

from ace.skillbook import InsightSource, Skillbook, TraceRef

# What ace-framework 0.13.0 reads from a skillbook file.
KAYBA013_TOP_LEVEL_KEYS = {"schema_version", "skills", "sections", "next_id", "similarity_decisions"}
KAYBA013_SKILL_FIELDS = {
    "id",
    "section",
    "keywords",
    "issue",
    "insight",
    "occurrences",
    "active",
    "used_count",
    "helpful_count",
    "harmful_count",
    "neutral_count",
    "created_at",
    "updated_at",
}
KAYBA013_REQUIRED_SKILL_FIELDS = {"id", "section", "keywords", "issue"}
KAYBA013_OCCURRENCE_FIELDS = {
    "trace_uid",
    "source_system",
    "trace_id",
    "display_name",
    "relation",
    "sample_question",
    "epoch",
    "operation_type",
    "error_identification",
    "learning_text",
}


@pytest.fixture
def fixture_json() -> Path:
    return DATA_DIR / "skillbooks" / "kayba013_skillbook.json"


def test_kayba013_file_loads_with_every_field_and_occurrence(fixture_json: Path) -> None:
    raw = json.loads(fixture_json.read_text())["skills"]
    loaded = Skillbook.load_from_file(fixture_json)
    assert {s.id: s.to_dict() for s in loaded.skills(include_inactive=True)} == raw


def test_kayba013_embeddings_load_as_float32_vectors(fixture_json: Path) -> None:
    loaded = Skillbook.load_from_file(fixture_json)
    with np.load(fixture_json.with_name("kayba013_skillbook.embeddings.npz")) as archive:
        expected = {key: archive[key] for key in archive.files}
    vectors = {s.id: s.embedding for s in loaded.skills(include_inactive=True) if s.embedding is not None}
    assert vectors.keys() == expected.keys()
    assert all(vectors[k].dtype == np.float32 and np.array_equal(vectors[k], expected[k]) for k in expected)


def test_kayba013_global_counter_is_respected_for_new_ids(fixture_json: Path) -> None:
    document = json.loads(fixture_json.read_text())
    loaded = Skillbook.load_from_file(fixture_json)
    new_id = loaded.add_skill("harness", "new", ["k"]).id
    assert int(new_id.rsplit("-", 1)[1]) > document["next_id"]


def test_saved_file_has_the_shape_kayba013_reads(tmp_path: Path, source: InsightSource) -> None:
    book = Skillbook()
    book.add_skill(
        "context", "Issue.", ["k"], "Insight.", insight_source=source.replace(display_name="t.md", relation="primary")
    )
    book.add_skill("harness", "Harness issue.", ["tau2"])
    book.set_embeddings({"context-00001": [1.0, 2.0]}, model="minilm")
    book.save_to_file(tmp_path / "sb.json")
    document = json.loads((tmp_path / "sb.json").read_text())

    assert KAYBA013_TOP_LEVEL_KEYS <= document.keys() and document["schema_version"] == "2"
    skills = document["skills"]
    assert all(set(skill) == KAYBA013_SKILL_FIELDS for skill in skills.values())
    assert all(KAYBA013_REQUIRED_SKILL_FIELDS <= skill.keys() for skill in skills.values())
    assert all(set(ids) <= skills.keys() for ids in document["sections"].values())
    assert document["next_id"] >= max(int(i.rsplit("-", 1)[1]) for i in skills)
    assert set(skills["context-00001"]["occurrences"][0]) <= KAYBA013_OCCURRENCE_FIELDS
    with np.load(tmp_path / "sb.embeddings.npz", allow_pickle=False) as archive:
        assert archive["context-00001"].dtype == np.float32


def test_fields_unknown_to_kayba013_survive_our_own_round_trip(tmp_path: Path, source: InsightSource) -> None:
    rich = source.replace(step=4, trace_refs=(TraceRef(text_excerpt="quote", message_indices=(3, 5)),))
    book = Skillbook()
    book.add_skill("harness", "Issue.", ["k"], insight_source=rich)
    book.save_to_file(tmp_path / "sb.json")
    assert Skillbook.load_from_file(tmp_path / "sb.json").get_skill("harness-00001").occurrences == (
        rich.replace(operation_type="ADD"),
    )
