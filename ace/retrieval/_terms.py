"""The one tokeniser of ace.retrieval: BM25 search and task matching both turn text into terms here.

A term is a lowercased run of 2+ letters or digits (`_` splits too, so the keyword `booking_api`
also gives `booking`), not an English stopword, Snowball-stemmed with PyStemmer (so "refunds" meets
"refund" and a task about "price matching" meets a skill that says "match a competitor's price").
"""

from __future__ import annotations

import re

import Stemmer

__all__ = ["STOPWORDS", "terms_of"]

_TERM = re.compile(r"[^\W_]{2,}")

STOPWORDS = frozenset(
    """a about after again all also am an and any are as at be been before being both but by can
    cannot could did do does doing done down during each even every few for from further had has have
    having he her here hers him his how i if in into is it its itself just me more most my no nor not
    now of off on once only or other our ours out over own same she should so some such than that the
    their theirs them then there these they this those through to too under until up us very was we
    were what when where which while who whom why will with would you your yours via per""".split()
)
"""Words that carry no topic. A superset of bm25s's (Lucene's) 33-word list: the pronouns and
question words of task prose ("how do I ...", "my", "what") would otherwise count as shared terms.
The matching reranker's coefficients were fitted with this list; changing it means refitting
(`python benchmarks/matching_dev_eval.py --fit`)."""

_STEMMER = Stemmer.Stemmer("english")


def terms_of(text: str) -> list[str]:
    """The terms of `text` in order, repeats kept (BM25 counts them; matching takes the set)."""
    return _STEMMER.stemWords([term for term in _TERM.findall(text.lower()) if term not in STOPWORDS])
