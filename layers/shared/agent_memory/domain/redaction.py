"""Secret redaction on every write path (docs/api.md §6 "Redaction"), before anything is stored or logged.

``DETECTORS`` is the table: one row per kind, a regular expression and, where a pattern alone matches too
much, a check of the match (Luhn for card numbers). A deployment extends it by adding rows (e.g. an internal
token format) with ``register``; ``email`` and ``phone`` are off unless ``MEMORY_REDACT_EXTRA`` names them.
Each secret found is replaced by ``[redacted: <kind>]``; the text around it is kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from agent_memory.basics.observability import metrics


def marker(kind: str) -> str:
    return f"[redacted: {kind}]"


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card(match: re.Match[str]) -> bool:
    digits = re.sub(r"\D", "", match.group(0))
    return 13 <= len(digits) <= 19 and _luhn(digits) and len(set(digits)) > 1


def _mixed(match: re.Match[str]) -> bool:
    """A bare 40-character AWS secret key looks random: upper and lower case letters and digits."""
    value = match.group("secret")
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)


def _phone(match: re.Match[str]) -> bool:
    digits = re.sub(r"\D", "", match.group(0))
    return 9 <= len(digits) <= 15


@dataclass(frozen=True, slots=True)
class Detector:
    kind: str
    pattern: re.Pattern[str]
    accept: Callable[[re.Match[str]], bool] = field(default=lambda _: True)
    # The named group to replace (the password of a URL, not the whole URL); the whole match when None.
    group: str | None = None
    extra: bool = False  # only when MEMORY_REDACT_EXTRA names the kind


_TOKEN_PREFIXES = (
    r"gh[pousr]_[A-Za-z0-9]{36,255}",  # GitHub
    r"github_pat_[A-Za-z0-9_]{22,255}",
    r"glpat-[A-Za-z0-9_-]{20,}",  # GitLab
    r"sk-(?:proj-|ant-(?:api|admin)\d{2}-)?[A-Za-z0-9_-]{20,}",  # OpenAI, Anthropic
    r"xox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
    r"AIza[0-9A-Za-z_-]{35}",  # Google
    r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}",  # Stripe secret and restricted keys
    r"npm_[A-Za-z0-9]{36}",
    r"hf_[A-Za-z0-9]{30,}",  # Hugging Face
    r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",  # SendGrid
    r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # a JWT
)

DETECTORS: list[Detector] = [
    Detector(
        "private-key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
    Detector(
        "aws-access-key",
        re.compile(
            r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}(?![A-Za-z0-9])"
        ),
    ),
    Detector(
        "aws-secret-key",
        re.compile(
            r"(?i:aws.{0,20}?secret|secret.?access.?key).{0,20}?(?P<secret>(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=]))"
        ),
        group="secret",
    ),
    Detector(
        "aws-secret-key",
        re.compile(r"(?<![A-Za-z0-9/+])(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        accept=_mixed,
        group="secret",
    ),
    Detector("api-token", re.compile(r"(?<![A-Za-z0-9_-])(?:" + "|".join(_TOKEN_PREFIXES) + r")")),
    Detector("api-token", re.compile(r"(?i:bearer)\s+(?P<secret>[A-Za-z0-9._~+/-]{20,}=*)"), group="secret"),
    Detector(
        "password-in-url",
        re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:(?P<secret>[^\s@/]+)@"),
        group="secret",
    ),
    Detector("card-number", re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])"), accept=_card),
    Detector(
        "email", re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"), extra=True
    ),
    Detector(
        "phone",
        re.compile(r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]\d{2,4}){1,4}(?![\w-])"),
        accept=_phone,
        extra=True,
    ),
]

EXTRA_KINDS = frozenset(detector.kind for detector in DETECTORS if detector.extra)


def register(detector: Detector) -> None:
    """A deployment's own detector, checked after the built-in ones."""
    DETECTORS.append(detector)


@dataclass(frozen=True, slots=True)
class Redacted:
    text: str
    kinds: list[str]  # each kind found, once, in the table's order

    def warnings(self) -> list[str]:
        return [f"redacted: {kind}" for kind in self.kinds]


def redact(text: str, *, extra: frozenset[str] = frozenset()) -> Redacted:
    """``text`` with every secret replaced by its marker, and the kinds found. Counted in ``SecretsRedacted``."""
    found: list[str] = []
    for detector in DETECTORS:
        if detector.extra and detector.kind not in extra:
            continue
        text, count = _apply(detector, text)
        if count and detector.kind not in found:
            found.append(detector.kind)
        if count:
            metrics.add_metric(name="SecretsRedacted", unit="Count", value=count)
    return Redacted(text, found)


def _apply(detector: Detector, text: str) -> tuple[str, int]:
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        if not detector.accept(match):
            return match.group(0)
        count += 1
        if detector.group is None:
            return marker(detector.kind)
        start, end = match.span(detector.group)
        whole_start = match.start()
        value = match.group(0)
        return value[: start - whole_start] + marker(detector.kind) + value[end - whole_start :]

    return detector.pattern.sub(replace, text), count
