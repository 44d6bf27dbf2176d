from __future__ import annotations

import gc
import json
import threading
import weakref

import numpy as np
import pytest

from ace.retrieval import EmbeddingError, SkillIndex, retrieve_top_k, skill_index
from ace.skillbook import Skillbook, SkillbookError


def _ids(skills):
    return [skill.id for skill in skills]


def test_section_filter_returns_only_that_section(airline_skillbook, hashing_embedder):
    found = retrieve_top_k(airline_skillbook, "flight", top_k=10, section="harness", embedder=hashing_embedder)

    assert _ids(found) == ["harness-00002", "harness-00001"]


def test_keyword_filter_keeps_skills_with_any_given_keyword(airline_skillbook, hashing_embedder):
    found = retrieve_top_k(
        airline_skillbook, "flight", top_k=10, keywords=["Rate-Limit", "baggage"], embedder=hashing_embedder
    )

    assert sorted(_ids(found)) == ["context-00002", "harness-00001"]


def test_keyword_filter_with_unknown_keyword_returns_nothing(airline_skillbook, hashing_embedder):
    assert retrieve_top_k(airline_skillbook, "flight", keywords=["hotel"], embedder=hashing_embedder) == []


def test_keyword_filter_given_a_bare_string_raises(airline_skillbook, hashing_embedder):
    with pytest.raises(SkillbookError, match="list of strings"):
        retrieve_top_k(airline_skillbook, "flight", keywords="airline", embedder=hashing_embedder)


def test_inactive_skills_are_never_returned(airline_skillbook, hashing_embedder):
    found = retrieve_top_k(airline_skillbook, "refund cancelled flights", top_k=10, embedder=hashing_embedder)

    assert "context-00003" not in _ids(found)
    assert len(found) == 4


def test_skill_removed_after_indexing_disappears_from_results(airline_skillbook, hashing_embedder):
    assert "context-00002" in _ids(retrieve_top_k(airline_skillbook, "baggage", embedder=hashing_embedder))

    airline_skillbook.remove_skill("context-00002", "wrong")

    assert "context-00002" not in _ids(retrieve_top_k(airline_skillbook, "baggage", embedder=hashing_embedder))


def test_lexical_mode_returns_only_skills_sharing_a_term(airline_skillbook, hashing_embedder):
    found = retrieve_top_k(airline_skillbook, "baggage allowance", mode="lexical", embedder=hashing_embedder)

    assert _ids(found) == ["context-00002"]


def test_dense_mode_ranks_by_cosine(airline_skillbook, hashing_embedder):
    query = "The tau2 runner retries rate limits with long backoff"

    found = retrieve_top_k(airline_skillbook, query, top_k=1, mode="dense", embedder=hashing_embedder)

    assert _ids(found) == ["harness-00001"]


def test_hybrid_order_is_rrf_of_the_lexical_and_dense_orders(airline_skillbook, hashing_embedder):
    query = "flight date change for passengers"
    lexical = _ids(retrieve_top_k(airline_skillbook, query, top_k=10, mode="lexical", embedder=hashing_embedder))
    dense = _ids(retrieve_top_k(airline_skillbook, query, top_k=10, mode="dense", embedder=hashing_embedder))
    fused: dict[str, float] = {}
    for ranking in (lexical, dense):
        for rank, skill_id in enumerate(ranking, start=1):
            fused[skill_id] = fused.get(skill_id, 0.0) + 1 / (60 + rank)
    expected = sorted(fused, key=lambda skill_id: (-fused[skill_id], skill_id))

    found = retrieve_top_k(airline_skillbook, query, top_k=10, embedder=hashing_embedder)

    assert _ids(found) == expected


def test_equal_scores_are_ordered_by_skill_id(hashing_embedder):
    skillbook = Skillbook()
    for _ in range(40):
        skillbook.add_skill("harness", "same issue text", ["same"])

    found = retrieve_top_k(skillbook, "same issue", top_k=40, embedder=hashing_embedder)

    assert [skill.id for skill in found] == [f"harness-{number:05d}" for number in range(1, 41)]


def test_update_invalidates_the_skill_vector_and_its_index_entry(airline_skillbook, hashing_embedder):
    retrieve_top_k(airline_skillbook, "anything", embedder=hashing_embedder)

    updated = airline_skillbook.update_skill("context-00001", issue="Seat selection for families")
    found = retrieve_top_k(airline_skillbook, "seat selection families", mode="lexical", embedder=hashing_embedder)

    assert _ids(found) == ["context-00001"]
    stored = airline_skillbook.get_skill("context-00001").embedding
    np.testing.assert_allclose(stored, hashing_embedder.embed([updated.embedding_text()])[0], atol=1e-6)


def test_skill_vectors_are_computed_once_and_stored_on_the_skillbook(airline_skillbook, hashing_embedder):
    retrieve_top_k(airline_skillbook, "first query", embedder=hashing_embedder)
    retrieve_top_k(airline_skillbook, "second query", embedder=hashing_embedder)

    first_query, skill_texts, second_query = hashing_embedder.calls
    assert (first_query, second_query) == (["first query"], ["second query"])
    assert sorted(skill_texts) == sorted(skill.embedding_text() for skill in airline_skillbook.skills())
    assert airline_skillbook.embedding_model == hashing_embedder.name
    assert all(skill.embedding is not None for skill in airline_skillbook.skills())


def test_adding_a_skill_embeds_only_that_skill(airline_skillbook, hashing_embedder):
    retrieve_top_k(airline_skillbook, "warm up", embedder=hashing_embedder)
    hashing_embedder.calls.clear()

    added = airline_skillbook.add_skill("context", "Pets in the cabin", ["pets"], insight="Check the pet policy")
    retrieve_top_k(airline_skillbook, "pets", embedder=hashing_embedder)

    assert hashing_embedder.calls == [["pets"], [added.embedding_text()]]


def test_counter_changes_do_not_reembed(airline_skillbook, hashing_embedder):
    retrieve_top_k(airline_skillbook, "warm up", embedder=hashing_embedder)
    hashing_embedder.calls.clear()

    airline_skillbook.tag_skill("context-00001", 1)
    airline_skillbook.mark_used(["context-00002"])
    retrieve_top_k(airline_skillbook, "again", embedder=hashing_embedder)

    assert hashing_embedder.calls == [["again"]]


def test_stored_vectors_of_the_same_embedder_are_reused(airline_skillbook, hashing_embedder):
    skills = airline_skillbook.skills()
    airline_skillbook.set_embeddings(
        {skill.id: hashing_embedder.embed([skill.embedding_text()])[0] for skill in skills},
        model=hashing_embedder.name,
    )
    hashing_embedder.calls.clear()

    retrieve_top_k(airline_skillbook, "query", embedder=hashing_embedder)

    assert hashing_embedder.calls == [["query"]]


def test_stored_vectors_of_another_embedder_are_recomputed_not_mixed(airline_skillbook, hashing_embedder):
    stale = {skill.id: np.ones(64, dtype=np.float32) for skill in airline_skillbook.skills()}
    airline_skillbook.set_embeddings(stale, model="some/other-model")

    retrieve_top_k(airline_skillbook, "query", embedder=hashing_embedder)

    assert airline_skillbook.embedding_model == hashing_embedder.name
    for skill in airline_skillbook.skills():
        np.testing.assert_allclose(skill.embedding, hashing_embedder.embed([skill.embedding_text()])[0], atol=1e-6)


def test_two_embedders_keep_separate_indexes(airline_skillbook, hashing_embedder, make_hashing_embedder):
    other = make_hashing_embedder(name="test/other")

    first = skill_index(airline_skillbook, hashing_embedder)
    second = skill_index(airline_skillbook, other)

    assert first is not second
    assert skill_index(airline_skillbook, make_hashing_embedder()) is first


def test_a_view_shares_the_index_of_its_skillbook(airline_skillbook, hashing_embedder):
    assert skill_index(airline_skillbook.view(), hashing_embedder) is skill_index(airline_skillbook, hashing_embedder)


def test_search_through_a_view_persists_vectors_on_the_skillbook(airline_skillbook, hashing_embedder):
    retrieve_top_k(airline_skillbook.view(), "query", embedder=hashing_embedder)

    assert all(skill.embedding is not None for skill in airline_skillbook.skills())


def test_index_does_not_keep_its_skillbook_alive(hashing_embedder):
    skillbook = Skillbook()
    skillbook.add_skill("harness", "issue", ["k"])
    retrieve_top_k(skillbook, "issue", embedder=hashing_embedder)
    index = skill_index(skillbook, hashing_embedder)
    alive = weakref.ref(skillbook)

    del skillbook
    gc.collect()

    assert alive() is None
    with pytest.raises(ReferenceError):
        index.refresh()


def test_query_embedding_failure_raises_with_cause(airline_skillbook, make_hashing_embedder):
    embedder = make_hashing_embedder(fail_on="broken query")

    with pytest.raises(EmbeddingError, match="broken query") as caught:
        retrieve_top_k(airline_skillbook, "broken query", embedder=embedder)
    assert isinstance(caught.value.__cause__, ConnectionError)


def test_lexical_mode_does_not_embed_the_query(airline_skillbook, make_hashing_embedder):
    embedder = make_hashing_embedder(fail_on="baggage")

    found = retrieve_top_k(airline_skillbook, "baggage", mode="lexical", embedder=embedder)

    assert _ids(found) == ["context-00002"]


def test_skill_embedding_failure_raises(airline_skillbook, make_hashing_embedder):
    embedder = make_hashing_embedder(fail_on=airline_skillbook.get_skill("context-00001").embedding_text())

    with pytest.raises(EmbeddingError, match="skills") as caught:
        retrieve_top_k(airline_skillbook, "query", embedder=embedder)
    assert isinstance(caught.value.__cause__, ConnectionError)


def test_embedder_returning_the_wrong_shape_raises(airline_skillbook, make_hashing_embedder):
    class Truncating(make_hashing_embedder):
        def embed(self, texts):
            return super().embed(texts)[:, :10]

    with pytest.raises(EmbeddingError, match="shape"):
        retrieve_top_k(airline_skillbook, "query", embedder=Truncating())


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"top_k": 0}, "top_k"),
        ({"mode": "fuzzy"}, "mode"),
        ({"section": "general"}, "section"),
    ],
)
def test_invalid_arguments_raise_value_error(airline_skillbook, hashing_embedder, arguments, message):
    with pytest.raises(ValueError, match=message):
        retrieve_top_k(airline_skillbook, "query", embedder=hashing_embedder, **arguments)


def test_empty_skillbook_returns_nothing(hashing_embedder):
    assert retrieve_top_k(Skillbook(), "anything", embedder=hashing_embedder) == []


def test_explicit_index_equals_the_shared_one(airline_skillbook, hashing_embedder, make_hashing_embedder):
    own = SkillIndex(airline_skillbook, make_hashing_embedder())

    assert _ids(own.search("flight date", top_k=10)) == _ids(
        retrieve_top_k(airline_skillbook, "flight date", top_k=10, embedder=hashing_embedder)
    )


def test_search_is_traced_as_a_search_memory_span_with_the_ids_found(airline_skillbook, hashing_embedder, capfire):
    found = retrieve_top_k(airline_skillbook, "flight", embedder=hashing_embedder)

    spans = {span["name"]: span for span in capfire.exporter.exported_spans_as_dict()}
    search = spans["search_memory skillbook"]["attributes"]
    assert (search["gen_ai.operation.name"], search["ace.skillbook.operation"]) == ("search_memory", "SEARCH")
    assert json.loads(search["ace.skill_ids"]) == [skill.id for skill in found]
    assert search["gen_ai.memory.record.count"] == len(found)
    assert "retrieval.index.update" in spans


def test_index_catches_up_when_the_change_log_no_longer_reaches_back(airline_skillbook, hashing_embedder):
    retrieve_top_k(airline_skillbook, "warm up", embedder=hashing_embedder)
    airline_skillbook.remove_skill("context-00002", "outdated")
    airline_skillbook.update_skill("harness-00001", issue="Seat maps load slowly in the simulator")
    for _ in range(5000):  # more bumps than the skillbook's change log keeps
        airline_skillbook.tag_skill("context-00001", 0)
    assert airline_skillbook.changed_ids_since(0) is None
    hashing_embedder.calls.clear()

    found = retrieve_top_k(airline_skillbook, "seat maps baggage", top_k=10, mode="lexical", embedder=hashing_embedder)

    assert _ids(found) == ["harness-00001"]
    assert hashing_embedder.calls == [[airline_skillbook.get_skill("harness-00001").embedding_text()]]


def test_vectors_survive_save_and_load_so_a_reloaded_skillbook_is_not_reembedded(
    airline_skillbook, hashing_embedder, tmp_path
):
    retrieve_top_k(airline_skillbook, "warm up", embedder=hashing_embedder)
    path = tmp_path / "skillbook.json"
    airline_skillbook.save_to_file(path)
    reloaded = Skillbook.load_from_file(path)
    hashing_embedder.calls.clear()

    found = retrieve_top_k(reloaded, "baggage allowance", top_k=1, embedder=hashing_embedder)

    assert _ids(found) == ["context-00002"]
    assert hashing_embedder.calls == [["baggage allowance"]]


def test_lexical_search_matches_other_forms_of_a_word(airline_skillbook, hashing_embedder):
    found = retrieve_top_k(airline_skillbook, "rebooked passenger", mode="lexical", top_k=10, embedder=hashing_embedder)

    assert _ids(found) == ["context-00001", "context-00002"]


def test_concurrent_searches_and_mutations_leave_a_consistent_index(airline_skillbook, hashing_embedder):
    errors: list[BaseException] = []

    def search_repeatedly():
        try:
            for _ in range(30):
                retrieve_top_k(airline_skillbook, "flight passengers", embedder=hashing_embedder)
        except BaseException as error:  # collected and re-checked below
            errors.append(error)

    searchers = [threading.Thread(target=search_repeatedly) for _ in range(4)]
    for thread in searchers:
        thread.start()
    for number in range(30):
        airline_skillbook.add_skill("harness", f"Concurrent issue number {number}", ["load"])
    for thread in searchers:
        thread.join()

    index = skill_index(airline_skillbook, hashing_embedder)
    index.refresh()
    assert errors == []
    assert index.skill_ids == tuple(skill.id for skill in airline_skillbook.skills())


@pytest.mark.parametrize("value", [0.0, float("nan")])
def test_a_zero_or_non_finite_query_vector_raises_instead_of_ranking_by_id(
    airline_skillbook, make_hashing_embedder, value
):
    class BlankQueries(make_hashing_embedder):
        def embed(self, texts):
            vectors = super().embed(texts)
            if list(texts) == ["blank query"]:
                vectors[:] = value
            return vectors

    with pytest.raises(EmbeddingError, match="zero or non-finite"):
        retrieve_top_k(airline_skillbook, "blank query", mode="dense", embedder=BlankQueries())
