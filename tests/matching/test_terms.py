"""Lexical evidence: stemmed terms, IDF-weighted coverage, and the matched_on rule."""

from __future__ import annotations

from ace.retrieval._matching_terms import TermStatistics, field_terms, terms_of


def test_terms_are_stemmed_lowercased_and_split_on_underscores_without_stopwords():
    assert terms_of("The price_matching of Rates") == frozenset({"price", "match", "rate"})


def test_coverage_weighs_rare_terms_more_than_common_ones():
    statistics = TermStatistics([frozenset({"pod", "crash"}), frozenset({"pod", "image"}), frozenset({"pod"})])
    skill_terms = frozenset({"pod", "crash"})

    assert statistics.coverage(skill_terms, frozenset({"crash"})) > statistics.coverage(skill_terms, frozenset({"pod"}))
    assert statistics.coverage(frozenset(), skill_terms) == 0.0


def test_a_short_field_repeated_whole_counts_as_less_covered_than_a_long_one():
    short = frozenset({"book", "api"})
    long = frozenset(f"term{n}" for n in range(60))
    statistics = TermStatistics([short, long])

    assert 0.0 < statistics.coverage(short, short) < statistics.coverage(long, long) < 1.0


def test_matched_on_is_keywords_when_the_task_names_labels_the_issue_does_not_use():
    fields = field_terms("Pods restart and their logs look empty.", ["k8s", "crashloopbackoff"])
    statistics = TermStatistics([fields.all, terms_of("unrelated skill about invoices")])

    assert statistics.matched_field(fields, terms_of("k8s crashloopbackoff help")) == "keywords"
    assert statistics.matched_field(fields, terms_of("my pods restart with empty logs")) == "issue"
    assert statistics.matched_field(fields, terms_of("write a haiku")) == "issue"
