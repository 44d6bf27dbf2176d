"""`ace.redaction`: the one place secrets in connection strings are masked."""

from __future__ import annotations

import logging

import pytest

from ace.redaction import RedactSecrets, redact, url_secrets


@pytest.mark.parametrize(
    "text, shown",
    [
        ("postgresql://ace:s3cret@db:5432/x?skillbook=a", "postgresql://ace:***@db:5432/x?skillbook=a"),
        ("postgres://ace:s%zzcret@db/x", "postgres://ace:***@db/x"),  # an invalid percent-escape
        ("postgresql://ace:p@ss/w@rd@db/x", "postgresql://ace:***@db/x"),  # raw '@' and '/' in the password
        ("postgresql://:tok3n@db/x", "postgresql://:***@db/x"),
        ("postgresql://db/x?sslpassword=k3y&sslmode=require", "postgresql://db/x?sslpassword=***&sslmode=require"),
        (
            "postgresql://ace@db/x?password=pw9&oauth_client_secret=c1",
            "postgresql://ace@db/x?password=***&oauth_client_secret=***",
        ),
        ("host=db password='two words' user=ace", "host=db password=*** user=ace"),
        ("connect: PASSWORD = hunter2 failed", "connect: PASSWORD = *** failed"),
    ],
)
def test_redact_masks_passwords_and_secret_parameters(text: str, shown: str) -> None:
    assert redact(text) == shown


@pytest.mark.parametrize(
    "text",
    ["postgresql://ace@db/x?skillbook=a", "see https://example.com/a@b for details", "password: given in a file"],
)
def test_redact_leaves_text_without_secrets_alone(text: str) -> None:
    assert redact(text) == text


def test_known_secrets_are_masked_wherever_a_driver_quotes_them() -> None:
    url = "postgresql://ace:s%zzcret@db/x"
    assert (
        redact('invalid percent-encoded token: "s%zzcret"', url_secrets(url)) == 'invalid percent-encoded token: "***"'
    )


def test_url_secrets_gives_the_raw_and_the_decoded_password() -> None:
    assert url_secrets("postgresql://ace:a%40b@db/x?sslpassword=k%2F1") == ("a%40b", "k%2F1", "a@b", "k/1")


def test_the_logging_filter_masks_arguments_and_keeps_their_shape() -> None:
    record = logging.LogRecord(
        "ace", logging.WARNING, __file__, 1, "cannot follow %s (%d)", ("postgresql://ace:s3cret@db/x", 3), None
    )
    assert RedactSecrets().filter(record)
    assert record.getMessage() == "cannot follow postgresql://ace:***@db/x (3)"
