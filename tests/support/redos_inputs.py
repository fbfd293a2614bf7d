"""Inputs built to make a regular expression backtrack, 200 KB each (tests/linear_time/test_redaction_linear.py,
bench/redaction.py): long runs of what a detector's pattern repeats, with the one character that makes it
fail at the end or nowhere, and repeated prefixes that start a match at every few characters."""

from __future__ import annotations

SIZE = 200_000


def _repeat(unit: str, tail: str = "") -> str:
    return (unit * (SIZE // len(unit) + 1))[: SIZE - len(tail)] + tail


ADVERSARIAL: dict[str, str] = {
    "a-a-a-": _repeat("a-"),
    "a-a-a- then ://": _repeat("a-", "://"),
    "letters": _repeat("a", "!"),
    "digits": _repeat("4"),
    "digits and spaces": _repeat("4 "),
    "digit groups failing Luhn": _repeat("4111 4111 4111 4112 "),
    "digit groups passing Luhn": _repeat("4111 1111 1111 1111 "),
    "dash-separated digits": _repeat("1-"),
    "long digit groups": _repeat("4111111111111112 "),
    "@@@": _repeat("@"),
    "a@a@a@": _repeat("a@"),
    "a@b.": _repeat("a@b."),
    ":::": _repeat(":"),
    "a:a:a:": _repeat("a:"),
    "scheme://": _repeat("a://"),
    "x://u:p@": _repeat("x://u:p@"),
    "://@:": _repeat("://@:"),
    "password=": _repeat("password="),
    "pwd: ": _repeat("pwd: "),
    "key names": _repeat("a" * 41 + " "),
    "token prefixes": _repeat("ghp_sk-xoxb-AKIA"),
    "eyJ.": _repeat("eyJ."),
    "BEGIN PRIVATE KEY": _repeat("-----BEGIN PRIVATE KEY-----"),
    "BEGIN RSA": _repeat("-----BEGIN RSA "),
    "PuTTY headers": _repeat("PuTTY-User-Key-File-2:"),
    "Bearer": _repeat("Bearer "),
    "Basic": _repeat("Basic dXNlcjpwYXNz "),
    "base64": _repeat("Ab1/"),
    "mixed 40": _repeat("aB3" * 13 + "x "),
    "dots": _repeat("a."),
    "zero-width": _repeat("a\u200b"),
    "separators": _repeat("4\u2028"),
    "separators in a token": _repeat("ghp_A1b2C3d4\u2028"),
    "password for": _repeat("password for a "),
    "password is": _repeat("the password is a "),
    "wi-fi key": _repeat("wi-fi key "),
    "sk- words": _repeat("sk-learn-compatible-"),
    "path parts": _repeat("src/main/java/Auth2/"),
}
