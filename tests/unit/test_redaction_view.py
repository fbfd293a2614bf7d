"""The view the detectors read (agent_memory.domain.redaction): invisible characters left out, every space a space,
and what is found there replaced in the text itself."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from agent_memory.domain.fence import INVISIBLE
from agent_memory.domain.notes import clean_note_text
from agent_memory.domain.redaction import redact

_NOT_FORMAT_YET_INVISIBLE = "\u115f\u1160\u3164\uffa0\u034f"  # Hangul fillers, the combining grapheme joiner


def test_the_invisible_class_is_every_format_character_and_the_fillers():
    """``fence.INVISIBLE`` (what cleaning removes and the detectors read through) is Unicode category Cf plus the
    characters that show nothing although they are not Cf, for every code point of this Python's Unicode."""
    differ = [
        hex(code)
        for code in range(sys.maxunicode + 1)
        if bool(INVISIBLE.fullmatch(chr(code)))
        != (unicodedata.category(chr(code)) == "Cf" or chr(code) in _NOT_FORMAT_YET_INVISIBLE)
    ]

    assert differ == []


def test_cleaning_removes_every_control_and_invisible_character():
    """Line breaks become a space; every other control or invisible character is gone."""
    kept = [
        hex(code)
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) in ("Cc", "Cf") or chr(code) in _NOT_FORMAT_YET_INVISIBLE
        if clean_note_text(f"a{chr(code)}b").text not in ("ab", "a b")
    ]

    assert kept == []


@pytest.mark.parametrize(
    "invisible", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u202e", "\u2066", "\u00ad", "\U000e0041"]
)
def test_an_invisible_character_inside_a_secret_goes_with_it(invisible):
    result = redact(f"key AKIAIOSF{invisible}ODNN7EXAMPLE{invisible} end")

    assert result.text == f"key [redacted: aws-access-key]{invisible} end"


# Unicode's default-ignorable code points that are neither Cf nor a filler (DerivedCoreProperties.txt): they show
# nothing and cleaning keeps them (a variation selector makes ❤ the emoji ❤️), so a secret with one inside shows and
# copies as the secret.
_IGNORABLE_YET_KEPT = ["\u17b4", "\u17b5", "\u180b", "\u180d", "\u180f", "\u2065", "\ufe00", "\ufe0f", "\ufff0"]
_IGNORABLE_YET_KEPT += ["\U000e0000", "\U000e0002", "\U000e0080", "\U000e0100", "\U000e01ef", "\U000e0fff"]


@pytest.mark.parametrize("ignorable", _IGNORABLE_YET_KEPT, ids=lambda c: f"U+{ord(c):04X}")
def test_a_variation_selector_inside_a_secret_goes_with_it(ignorable):
    result = redact(f"key AKIA{ignorable}IOSFODNN7EXAMPLE, card 4111{ignorable}111111111111, end")

    assert result.text == "key [redacted: aws-access-key], card [redacted: card-number], end"
    assert clean_note_text(f"a{ignorable}b").text == f"a{ignorable}b"  # kept by cleaning: only read through


@pytest.mark.parametrize("space", ["\u00a0", "\u2007", "\u202f", "\u2028", "\u2029", "\x85", "\u3000"])
def test_any_space_separates_the_groups_of_a_card(space):
    result = redact(f"card 4111{space}1111{space}1111{space}1111 ok")

    assert result.text == "card [redacted: card-number] ok"


def test_text_without_secrets_is_returned_as_it_was_invisible_characters_included():
    text = "a\u200bb \u202eright-to-left\u202c and 👩\u200d💻 and e\u0301 and ❤\ufe0f 4111\ufe0f"

    assert redact(text).text == text


def test_redaction_is_idempotent():
    once = redact("AKIAIOSFODNN7EXAMPLE, postgres://u:p4ss@h/db, password=hunter22, 4111 1111 1111 1111").text

    assert redact(once).text == once
    assert redact(once).kinds == []


def test_a_text_over_the_bound_is_refused_before_any_detector_runs():
    from agent_memory.basics.errors import InvalidInput
    from agent_memory.domain.redaction import MAX_CHARS

    with pytest.raises(InvalidInput):
        redact("x" * (MAX_CHARS + 1))
