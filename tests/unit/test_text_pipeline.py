"""The text pipeline every write goes through (agent_memory.domain.text_pipeline): normalise, then detect and
redact, then clean and bound; and the detectors' cases it closed (docs/security.md "Redaction")."""

from __future__ import annotations

import sys

import pytest

from agent_memory.domain.redaction import SEPARATORS, redact
from agent_memory.domain.text_pipeline import DOCUMENT, NOTE, Form, StoredText, checked, prepare

NONE: frozenset[str] = frozenset()
TOKEN = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
KEY = "AKIAIOSFODNN7EXAMPLE"


def note(text: str, max_chars: int = 2000) -> str:
    return prepare(text, "remember", Form(one_line=True, max_chars=max_chars), extra=NONE).text


def document(text: str) -> str:
    return prepare(text, "tool", DOCUMENT, extra=NONE).text


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\u00a0", "\u3000"])
@pytest.mark.parametrize("secret", [TOKEN, KEY, "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc" * 2])
def test_a_separator_inside_a_secret_splits_it_for_no_form(separator, secret):
    """Cleaning turns the separator into a space, a reader or a model joins it again: the secret goes whole."""
    split = secret[:10] + separator + secret[10:]
    marker = f"[redacted: {redact(secret).kinds[0]}]"

    assert note(f"use {split} in CI") == f"use {marker} in CI"
    assert document(f"# Keys\n- use {split} in CI\n") == f"# Keys\n- use {marker} in CI\n"


def test_a_separator_between_the_groups_of_a_card_still_reads_as_a_space():
    assert note("card 4111\u20281111\u20291111\u00a01111 ok") == "card [redacted: card-number] ok"


def test_a_line_separator_in_prose_stays_a_line_break_in_a_document_and_a_space_in_a_note():
    text = "first line\u2028second line"

    assert document(text) == text
    assert note(text) == "first line second line"


def test_the_separators_are_every_white_space_character_but_the_space_the_tab_and_the_line_breaks():
    spaces = {chr(code) for code in range(sys.maxunicode + 1) if chr(code).isspace()}

    assert set(SEPARATORS) == spaces - set(" \t\n\r")


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("my password is hunter2x.", "my password is [redacted: password]."),
        ("the password for the staging box is Tr0ub4dor&3 until Friday", None),
        ("the Wi-Fi password is Sunny2026", None),
        ("Wi-Fi: AcmeGuest, password Latte#2026", None),
        ("the wifi key is latte2026 (guest network)", None),
        ("the admin password was changed to Zebra-44 yesterday", None),
        ("pw: s3cret!!", None),
    ],
)
def test_a_password_in_prose_is_redacted(text, redacted):
    result = redact(text)

    assert result.kinds == ["password"]
    assert "[redacted: password]" in result.text
    if redacted is not None:
        assert result.text == redacted


@pytest.mark.parametrize(
    "text",
    [
        "sk-learn-compatible-transformer-api wraps the model",
        "the handler is in src/main/java/com/acme/auth/OAuth2Config for now",
        "services/auth/OAuth2Provider/handlers/v1",
        "rotate the password every 90 days",
        "the password is stored in 1Password",
        "the password is at least 12 characters long",
        "PGPASSWORD is read by psql from the environment",
        "token = os.environ['PAYMENT_QUEUE_TOKEN']  # read at start",
    ],
)
def test_a_benign_look_alike_is_kept(text):
    assert redact(text).text == text


@pytest.mark.parametrize(
    "text", ["client_secret=Zq8fK2mPx7Lw(prod)", "api_key: 9fK2mPx7LwQz4rT1[old]", "secret=Zq8fK2mP.x7Lw(eu)"]
)
def test_a_labelled_secret_followed_by_a_bracket_is_still_redacted(text):
    """Only a value of names and dots that is called or indexed is code; a secret followed by a note is not."""
    result = redact(text)

    assert result.kinds and "[redacted:" in result.text, result.text


def test_a_random_key_with_sk_is_still_a_token_and_a_random_path_like_key_still_a_secret_key():
    assert redact("sk-" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9fG1hJ3").kinds == ["api-token"]
    assert redact("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY").kinds == ["aws-secret-key"]


def test_a_note_is_normalised_redacted_then_cleaned_and_cut():
    raw = "- deploy\u200b with " + TOKEN[:8] + "\u2028" + TOKEN[8:] + " " + "x" * 600
    prepared = prepare(raw, "flush", NOTE, extra=NONE)

    assert prepared.text.startswith("deploy with [redacted: api-token] x")
    assert prepared.redacted == ["api-token"]
    assert not prepared.truncated
    assert prepare("y" * 600, "flush", Form(one_line=True, max_chars=500), extra=NONE).truncated


def test_what_the_pipeline_makes_is_stored_text_with_its_path_and_nothing_else_is():
    made = prepare("a fact", "load", NOTE, extra=NONE).text

    assert isinstance(made, StoredText) and made.path == "load"
    assert checked(made) is made
    for other in ("a fact", made.strip(), made + "!"):
        with pytest.raises(TypeError):
            checked(other)
