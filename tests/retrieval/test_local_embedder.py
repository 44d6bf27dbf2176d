from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from ace.retrieval import Embedder, LocalEmbedder, ModelChecksumError, default_embedder


def test_local_embedder_returns_384d_unit_float32_rows(local_embedder):
    vectors = local_embedder.embed(["change a flight", "cancel a reservation", ""])

    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_local_embedder_follows_the_embedder_protocol(local_embedder):
    assert isinstance(local_embedder, Embedder)
    assert local_embedder.dim == 384
    assert local_embedder.name == "local/all-MiniLM-L6-v2-int8"


def test_local_embedder_ranks_related_pair_above_unrelated(local_embedder):
    query, related, unrelated = local_embedder.embed(
        [
            "The customer wants to change the date of their flight booking.",
            "Rebook the passenger's reservation onto a later flight.",
            "Bake the chocolate cake for forty minutes at 180 degrees.",
        ]
    )

    assert query @ related > query @ unrelated + 0.2


def test_local_embedder_vector_does_not_depend_on_other_texts_in_the_batch(local_embedder):
    texts = ["a much longer text about baggage allowance for economy passengers", "refund", "seat"]

    together = local_embedder.embed(texts)
    alone = np.vstack([local_embedder.embed([text]) for text in texts])

    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_local_embedder_truncates_input_at_256_tokens(local_embedder):
    long_text = " ".join(["baggage"] * 400)

    base, extended = local_embedder.embed([long_text, long_text + " refund policy for pets"])

    np.testing.assert_allclose(base, extended, atol=1e-6)


def test_local_embedder_embeds_no_texts_as_an_empty_matrix(local_embedder):
    assert local_embedder.embed([]).shape == (0, 384)


def test_local_embedder_rejects_a_model_file_with_the_wrong_checksum(tmp_path: Path):
    tampered = tmp_path / "model.onnx"
    tampered.write_bytes(b"not the pinned model")

    with pytest.raises(ModelChecksumError, match="sha256"):
        LocalEmbedder(model_path=tampered)


def test_local_embedder_rejects_zero_threads():
    with pytest.raises(ValueError, match="threads"):
        LocalEmbedder(threads=0)


def test_default_embedder_is_one_instance_across_threads():
    seen: list[LocalEmbedder] = []
    threads = [threading.Thread(target=lambda: seen.append(default_embedder())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len({id(embedder) for embedder in seen}) == 1
    assert seen[0] is default_embedder()


def test_normalise_rows_rejects_a_zero_vector():
    from ace.retrieval import EmbeddingError, normalise_rows

    with pytest.raises(EmbeddingError, match=r"\[1\]"):
        normalise_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))


def test_dense_search_with_the_local_embedder_finds_a_paraphrase(local_embedder):
    from ace.retrieval import retrieve_top_k
    from ace.skillbook import Skillbook

    skillbook = Skillbook()
    skillbook.add_skill(
        "context", "Customer wants to move their flight to another day", ["booking"], insight="Check fares"
    )
    skillbook.add_skill("context", "Questions about checked luggage weight limits", ["baggage"], insight="Check tier")
    skillbook.add_skill("harness", "The simulator crashes when the database file is missing", ["runtime"])

    found = retrieve_top_k(skillbook, "rebook my trip for tomorrow", top_k=1, mode="dense", embedder=local_embedder)

    assert [skill.id for skill in found] == ["context-00001"]
