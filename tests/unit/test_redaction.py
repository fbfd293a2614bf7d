"""The detector table (docs/api.md §6 "Redaction"): what each kind catches, and what it leaves alone."""

from __future__ import annotations

import re

import pytest

from agent_memory.domain.redaction import Detector, redact, register
from tests.support.secrets_samples import EXTRA, SAMPLES

ALL_EXTRA = frozenset(EXTRA)


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_kind_is_replaced_by_its_marker_and_the_text_around_it_kept(kind):
    text, secret = SAMPLES[kind]

    result = redact(text, extra=ALL_EXTRA)

    assert secret not in result.text
    assert f"[redacted: {kind}]" in result.text
    assert result.kinds == [kind]
    assert result.text.split()[0] == text.split()[0]  # the words before the secret are kept


@pytest.mark.parametrize("kind", sorted(EXTRA))
def test_email_and_phone_are_kept_unless_the_deployment_names_them(kind):
    text, _ = SAMPLES[kind]

    assert redact(text).text == text


@pytest.mark.parametrize(
    "text",
    [
        "Prefers metric units and ISO dates like 2026-12-03",
        "order 4111 1111 1111 1112 is not a card (Luhn fails)",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b is a git hash",
        "the url https://example.com/a:b@c has no password field",
        "ticket ABC-1234 and version 1.2.3",
        "the bearer of bad news",
        "[redacted: api-token] stays as it is",
    ],
)
def test_ordinary_text_is_left_alone(text):
    result = redact(text, extra=ALL_EXTRA)

    assert (result.text, result.kinds) == (text, [])


def test_a_password_in_a_url_keeps_the_user_and_host():
    result = redact("https://bob:s3cr3t@example.com/x")

    assert result.text == "https://bob:[redacted: password-in-url]@example.com/x"


@pytest.mark.parametrize(
    "token",
    [
        "sk-proj-" + "Ab1" * 12,
        "sk-ant-api03-" + "Xy9_" * 10,
        "xoxb-1234567890-abcdefghij",
        "AIza" + "B" * 35,
        "sk_live_" + "9a" * 12,
        "glpat-" + "Q" * 20,
        "github_pat_" + "A1" * 20,
        "Bearer " + "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1LTEifQ.c2lnbmF0dXJlLWhlcmU",
    ],
)
def test_tokens_of_the_common_providers(token):
    result = redact(f"token {token} end")

    assert result.kinds == ["api-token"]
    assert token.split()[-1] not in result.text


def test_an_unterminated_private_key_block_is_redacted_to_the_end():
    result = redact("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC")

    assert result.text == "[redacted: private-key]"


def test_every_kind_found_is_listed_once_in_the_tables_order():
    text = f"{SAMPLES['card-number'][0]} {SAMPLES['aws-access-key'][0]} {SAMPLES['aws-access-key'][0]}"

    assert redact(text).kinds == ["aws-access-key", "card-number"]


def test_a_deployment_can_extend_the_table(monkeypatch):
    from agent_memory.domain import secret_detectors

    monkeypatch.setattr(secret_detectors, "DETECTORS", list(secret_detectors.DETECTORS))
    register(Detector("internal-token", re.compile(r"itk-[0-9a-f]{16}")))

    assert redact("use itk-0123456789abcdef now").text == "use [redacted: internal-token] now"


def test_memory_redact_extra_is_validated(monkeypatch):
    from agent_memory.basics.settings import get_settings

    monkeypatch.setenv("MEMORY_REDACT_EXTRA", " Email, phone ")
    get_settings.cache_clear()
    assert get_settings().redact_extra == {"email", "phone"}
    monkeypatch.setenv("MEMORY_REDACT_EXTRA", "email,ssn")
    get_settings.cache_clear()
    with pytest.raises(ValueError, match="ssn"):
        get_settings()
    get_settings.cache_clear()


def test_the_settings_offer_exactly_the_extra_detectors_redaction_has():
    from agent_memory.basics.settings import REDACT_EXTRA_KINDS
    from agent_memory.domain.redaction import EXTRA_KINDS

    assert EXTRA_KINDS == REDACT_EXTRA_KINDS
