"""Property: an index kept current through random mutations equals one built from scratch."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ace.retrieval import SkillIndex
from ace.skillbook import Skillbook

WORDS = ["flight", "refund", "seat", "baggage", "delay", "voucher", "cabin", "pet", "tier", "fare"]
QUERIES = ["flight refund", "seat baggage", "pet cabin fare", "delay"]

text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join)
keywords = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)
operation = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(["context", "harness"]), text, text, keywords),
    st.tuples(st.just("update"), st.integers(0, 50), text, st.none() | text, st.none() | keywords),
    st.tuples(st.just("tag"), st.integers(0, 50), st.sampled_from([-1, 0, 1])),
    st.tuples(st.just("remove"), st.integers(0, 50)),
    st.tuples(st.just("purge"), st.integers(0, 50)),
    st.tuples(st.just("search"), st.sampled_from(QUERIES)),
)


def _apply(skillbook: Skillbook, index: SkillIndex, op: tuple) -> None:
    kind, *args = op
    ids = [skill.id for skill in skillbook.skills(include_inactive=True)]
    if kind == "add":
        section, issue, insight, labels = args
        skillbook.add_skill(section, issue, labels, insight=insight)
    elif kind == "search":
        index.search(args[0], top_k=3)
    elif not ids:
        return
    elif kind == "update":
        position, issue, insight, labels = args
        skill_id = ids[position % len(ids)]
        if insight is None and skillbook.get_skill(skill_id).section == "context":
            insight = skillbook.get_skill(skill_id).insight
        skillbook.update_skill(skill_id, issue=issue, insight=insight, keywords=labels)
    elif kind == "tag":
        skillbook.tag_skill(ids[args[0] % len(ids)], args[1])
    elif kind == "remove":
        skillbook.remove_skill(ids[args[0] % len(ids)], "property test")
    elif kind == "purge":
        skillbook.purge(ids[args[0] % len(ids)])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=st.lists(operation, max_size=25))
def test_incrementally_updated_index_equals_one_built_from_scratch(make_hashing_embedder, operations):
    embedder = make_hashing_embedder()
    skillbook = Skillbook()
    incremental = SkillIndex(skillbook, embedder)
    for op in operations:
        _apply(skillbook, incremental, op)
    incremental.refresh()
    scratch = SkillIndex(skillbook, make_hashing_embedder(name="test/scratch"))
    scratch.refresh()

    active = skillbook.skills()
    assert incremental.skill_ids == scratch.skill_ids == tuple(skill.id for skill in active)
    expected = {skill.id: embedder.embed([skill.embedding_text()])[0] for skill in active}
    for vectors in (incremental.vectors(), scratch.vectors()):
        assert vectors.keys() == expected.keys()
        for skill_id, vector in vectors.items():
            np.testing.assert_allclose(vector, expected[skill_id], atol=1e-6)
    for query in QUERIES:
        for mode in ("lexical", "dense", "hybrid"):
            assert [s.id for s in incremental.search(query, top_k=50, mode=mode)] == [
                s.id for s in scratch.search(query, top_k=50, mode=mode)
            ]
