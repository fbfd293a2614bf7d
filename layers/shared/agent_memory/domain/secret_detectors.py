"""The table of secret detectors that ``redaction`` runs (docs/security.md "Redaction").

Each detector is linear in its input, whatever the input is; that is how the table is written, not a hope:

- a pattern starts only where its secret can start: a literal prefix (``AKIA``, ``ghp_``, ``-----BEGIN ``)
  behind a lookbehind that refuses the middle of a word, so that inside a long run of word characters
  only the run's first position is tried;
- before a match is certain, the work per start is bounded (``{m,n}`` quantifiers with small ``n``);
- an unbounded scan (a key block's body, a URL's authority) is possessive (``*+``, ``{m,n}+``) and only
  runs once the match is certain, so it consumes what it reads: no character is read twice by one
  detector, and nothing backtracks;
- a check done in Python (Luhn, the last ``@`` of a URL, a key's name) is bounded per match.

``tests/linear_time/test_redaction_linear.py`` times every detector on 200 KB inputs built to make a regular
expression backtrack (``a-a-a-…``, digit runs, ``@`` and ``:`` runs, repeated prefixes).
"""

from __future__ import annotations

import base64
import binascii
import re
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate

Span = tuple[int, int, str]  # start, end, kind
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _lower(text: str) -> str:
    """``text`` in lower case, each character where it was (``str.lower`` unless a character grows, as İ does)."""
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)


# Every kind the table can report, in the order ``Redacted.kinds`` lists them.
KINDS = (
    "private-key",
    "aws-access-key",
    "aws-secret-key",
    "aws-session-token",
    "azure-key",
    "api-token",
    "webhook-url",
    "basic-auth",
    "password-in-url",
    "password",
    "card-number",
    "email",
    "phone",
)


@dataclass(frozen=True, slots=True)
class Detector:
    """One kind of secret: a pattern, and what of each match to replace.

    ``accept`` vets a match (Luhn, mixed case); ``group`` names the part to replace (the password of a URL,
    not the whole URL), the whole match when None; ``locate``, when given, returns the spans to replace
    for each match instead, each with its kind (the card numbers within a run of digits, the value of a
    ``key=value`` whose key names its kind). ``extra`` kinds run only when ``MEMORY_REDACT_EXTRA`` names them.
    """

    kind: str
    pattern: re.Pattern[str]
    accept: Callable[[re.Match[str]], bool] = field(default=lambda _: True)
    group: str | None = None
    extra: bool = False
    locate: Callable[[re.Match[str]], Iterator[Span]] | None = None
    lower: bool = False  # match the text with ASCII letters in lower case (same offsets): no (?i) to slow it

    def spans(self, text: str) -> Iterator[Span]:
        for match in self.pattern.finditer(_lower(text) if self.lower else text):
            if self.locate is not None:
                yield from self.locate(match)
            elif self.accept(match):
                start, end = match.span(self.group) if self.group else match.span()
                if end > start:
                    yield start, end, self.kind


# --- cards: Luhn on the 13-19 digit windows of a run of digits ------------------------------------------

# A run: digits, each group separated by one space or dash. Possessive: read once, never given back.
_DIGIT_RUN = re.compile(r"(?<![0-9])[0-9]++(?:[ -][0-9]++)*+")
_DOUBLE = str.maketrans("0123456789", "0246813579")
# Issuer prefixes (first digits) and the lengths their cards have: Visa, Mastercard, Amex, Diners, Discover,
# JCB, UnionPay, Maestro, Mir. A Luhn-valid number outside them (an IMEI, an ISBN) is not taken for a card.
_ISSUERS: dict[str, frozenset[int]] = {
    "4": frozenset({16, 19}),  # 13-digit Visa numbers are no longer issued
    **{str(p): frozenset({16}) for p in range(51, 56)},
    **{str(p): frozenset({16}) for p in range(22, 28)},
    **{str(p): frozenset({15}) for p in (34, 37)},
    **{str(p): frozenset({14, 16, 19}) for p in (30, 36, 38, 39)},
    "60": frozenset({16, 17, 18, 19}),
    **{str(p): frozenset({16, 19}) for p in (64, 65)},
    **{str(p): frozenset({16, 17, 18, 19}) for p in (35, 62)},
    **{str(p): frozenset(range(13, 20)) for p in (50, 56, 57, 58, 59, 63, 67)},
}
CARD_MIN, CARD_MAX = 13, 19


def luhn(digits: str) -> bool:
    total = sum(map(int, digits[-1::-2])) + sum(map(int, digits[-2::-2].translate(_DOUBLE)))
    return total % 10 == 0


# The lengths of the cards whose numbers start with these two digits (one-digit prefixes spread over ten).
_BY_PREFIX: dict[str, frozenset[int]] = {
    f"{first}{second}": _ISSUERS.get(f"{first}{second}") or _ISSUERS.get(str(first), frozenset())
    for first in range(10)
    for second in range(10)
}


def _luhn_prefix_sums(digits: str) -> tuple[list[int], list[int]]:
    """Luhn's sum of any window in O(1): ``even`` doubles the digits at even indexes, ``odd`` those at odd
    ones (a window doubles every second digit from its right end); byte values, each digit 48 too many."""
    plain = digits.encode()
    doubled = digits.translate(_DOUBLE).encode()
    even, odd = bytearray(plain), bytearray(plain)
    even[0::2], odd[1::2] = doubled[0::2], doubled[1::2]
    return [0, *accumulate(even)], [0, *accumulate(odd)]


def _card_windows(match: re.Match[str]) -> Iterator[Span]:
    """The card numbers in a run of digits: every window of 13-19 digits that starts where a group starts
    and ends where a group ends, or as the first 15 or 16 digits of one longer group (a card and its code
    written together), whose first digits name an issuer with that length, that passes Luhn and is not one
    digit repeated. The longest such window at a start wins, and the search goes on after it. A window
    starts only at a group of four digits or of thirteen and more (how cards are written); each start tries
    at most seven windows, each in O(1): linear in the run."""
    if len(match.group(0)) < CARD_MIN:
        return
    groups = re.split(r"[ -]", match.group(0))
    digits = "".join(groups)
    starts = [0, *accumulate(map(len, groups))]  # the digit index of each group's start, and the end
    even, odd = _luhn_prefix_sums(digits)
    base = match.start()  # a digit's offset in the text: base + its index + the separators before it
    resume = 0
    for group, start in enumerate(starts[:-1]):
        size = starts[group + 1] - start
        if (size != 4 and size < CARD_MIN) or start < resume:
            continue
        lengths = _BY_PREFIX[digits[start : start + 2]]
        if not lengths:
            continue
        if size >= CARD_MIN:  # one long group: the whole group, or a card with more digits written after it
            ends = [start + length for length in (size, 16, 15) if CARD_MIN <= length <= min(size, CARD_MAX)]
        elif starts[group + 4 : group + 5] == [start + 16] and starts[group + 5 : group + 6] != [start + 19]:
            ends = [start + 16]  # four groups of four (the common case, in O(1)), not followed by three digits
        else:
            ends = [
                end
                for end in starts[bisect_right(starts, start + CARD_MAX) - 1 : group : -1]
                if end - start >= CARD_MIN
            ]
        for end in ends:
            table = even if end % 2 == 0 else odd  # the digit at end-2 is doubled: its index has end's parity
            if (
                end - start in lengths
                and (table[end] - table[start] - 48 * (end - start)) % 10 == 0
                and digits.count(digits[start], start, end) < end - start
            ):
                last_group = bisect_right(starts, end - 1) - 1
                yield base + start + group, base + end + last_group, "card-number"
                resume = end
                break


# --- URLs: the password between the user and the last @ of the authority ------------------------------

_SCHEME_SEPARATOR = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}+://")
_AUTHORITY_MAX = 512
_URL_END = re.compile(r"[\s\"'<>`]")


def _url_password(match: re.Match[str]) -> Iterator[Span]:
    """``scheme://user:password@host``: the password, which may itself hold ``@``, ``/`` or ``:`` (split at
    the last ``@`` before the URL ends, the user being what precedes the first ``:``), and ``redis://:pw@``
    (no user). The user holds no ``/``: ``https://host/a:b@c`` has no password. Reads up to the next ``://``
    or 512 characters, whichever comes first, so no character is read for two URLs."""
    text = match.string
    start = match.end()
    limit = min(len(text), start + _AUTHORITY_MAX)
    following = text.find("://", start, limit)  # a second URL glued on: its own match
    if following != -1:
        limit = following
    end_match = _URL_END.search(text, start, limit)
    end = end_match.start() if end_match else limit
    at = text.rfind("@", start, end)
    if at == -1:
        return
    colon = text.find(":", start, at)
    if colon == -1 or colon + 1 == at or "/" in text[start:colon]:
        return
    yield colon + 1, at, "password-in-url"


# --- labelled secrets: key = value, "key": "value", Key=value; ------------------------------------------

_LABEL = (
    r"password|passwd|passphrase|pwd|pass|secret|token|api[_-]?key|apikey|access[_-]?key|accountkey"
    r"|sharedaccesskey|auth[_-]?key|private[_-]?key|credentials?"
)
# Anchored on the label (a literal, which the engine looks for first), not on the key's start: the rest of
# the key (``DB_``, ``spring.datasource.``) is read backwards, at most 40 characters, only for a match.
_KEY_VALUE = re.compile(
    r"(?P<label>" + _LABEL + r")(?![a-z0-9_.-])"
    r"[\"']?+[ \t]{0,4}+(?::=|=>|[:=])[ \t]{0,4}+"
    r"(?:\"(?P<dq>[^\"\n]{1,512}+)|'(?P<sq>[^'\n]{1,512}+)|(?P<bare>[^\s\"'`;,&<>(){}\[\]]{1,512}+))"
)
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_KEY_MAX = 40
_KEY_SEPARATORS = re.compile(r"[_.-]+")
_PASSWORD_WORDS = ("password", "passwd", "passphrase", "pwd", "pass")
_TOKEN_WORDS = ("secret", "token", "apikey", "accesskey", "authkey", "privatekey", "credential", "credentials")
_STS = {"sessiontoken", "securitytoken"}
_PLACEHOLDER = re.compile(r"[$%<{\[]|\.\.\.|(?:x{3,}|\*+|null|none|true|false|changeme|redacted|your[_-]\w*)$")


def _key_kind(key: str) -> str | None:
    """The kind a value labelled ``key`` (lower case) is, or None when the label is only part of a word
    (``bypass``, ``compass``)."""
    words = [word for word in _KEY_SEPARATORS.split(key) if word]
    flat = "".join(words)
    last = words[-1] if words else ""
    if "secretaccesskey" in flat or ("aws" in flat and "secret" in flat):
        return "aws-secret-key"
    if flat.endswith(("sessiontoken", "securitytoken")) and (flat.startswith("aws") or "aws" in words or flat in _STS):
        return "aws-session-token"
    if flat.endswith(("accountkey", "sharedaccesskey")):
        return "azure-key"
    if last.endswith(("password", "passwd", "passphrase")) or last in _PASSWORD_WORDS:
        return "password"
    if last.endswith(_TOKEN_WORDS) or last == "key":
        return "api-token"
    return None


def _key_before(text: str, label_start: int, label_end: int) -> str | None:
    """The whole key whose last word starts at ``label_start``: the key characters before it, at most 40."""
    start = label_start
    while start > 0 and text[start - 1] in _KEY_CHARS:
        start -= 1
        if label_start - start > _KEY_MAX:
            return None
    return text[start:label_end]


_CODE_NAME = re.compile(r"[A-Za-z_][A-Za-z_.]*")  # os.environ, load, config.get: a name, never a secret


def _labelled(match: re.Match[str]) -> Iterator[Span]:
    """The value of ``key = value`` (``key: value``, ``"key": "value"``, ``Key=value;``) whose key names a
    secret, with the kind the key says; placeholders (``${X}``, ``<password>``, ``****``) are kept, and so is
    code: an unquoted value of names and dots that is called or indexed (``token = os.environ['X']``,
    ``secret: load(path)``). A value holding a digit or a symbol stays a secret whatever follows it
    (``client_secret=Zq8fK2mPx7Lw(prod)``)."""
    name = "dq" if match.group("dq") is not None else "sq" if match.group("sq") is not None else "bare"
    called = match.string[match.end() : match.end() + 1] in ("(", "[")
    if name == "bare" and called and _CODE_NAME.fullmatch(match.group(name)):
        return
    key = _key_before(match.string, match.start(), match.end("label"))
    kind = _key_kind(key) if key is not None else None
    value = match.group(name)
    if kind is None or _PLACEHOLDER.match(value) or len(value) < (4 if kind == "password" else 8):
        return
    start, end = match.span(name)
    yield start, end, kind


_WORD = re.compile(r"[a-z]{3,}|[A-Z][a-z]{2,}")


# --- passwords in prose: "the password for the staging box is Tr0ub4dor&3", "Wi-Fi: Home, password Falcon88" ---

# Anchored on the word (``password``, ``passphrase``, ``pw``, a Wi-Fi or network ``key``...), then how the value
# is given: ``is``, ``was``, ``set to``, ``:`` or ``=``, after at most four words of what it is for (``for the
# guest network``), or nothing but a space. Every repetition is bounded: the work per start is constant.
_PROSE = re.compile(
    r"(?<![A-Za-z0-9_-])(?i:(?:wi-?fi|wlan|wpa2?|network)[ \t]?+(?:key|code)|password|passphrase|passcode|passwd"
    r"|pwd|pw|pass)(?P<link>(?:[ \t]{1,4}+(?i:for|of|to|on|at)(?:[ \t]{1,4}+[^\s:=]{1,40}+){1,4}?)?"
    r"(?:[ \t]{0,4}+[:=][ \t]{0,4}+"
    r"|[ \t]{1,4}+(?i:(?:(?:is|was|has been)[ \t]{1,4}+)?+(?:now|(?:set|changed|reset)[ \t]{1,4}+to)|is|was)"
    r"[ \t]{1,4}+)"
    r"|[ \t]{1,4}+)"
    r"(?P<value>[\"']?+[^\s\"'`<>]{6,64}+)"
)
_SYMBOLS = frozenset("!#$%&*+=?@^_|~/\\")
_TRAILING = ".,;:)]}\"'"


def _prose_password(match: re.Match[str]) -> Iterator[Span]:
    """The value given for a password in prose, when it looks like one: letters with digits or symbols (when
    the value only follows the word, a space between them, it also needs upper case or a symbol, and eight
    characters). ``the password is stored in Vault`` and ``rotate the password every 90 days`` keep theirs."""
    start, end = match.span("value")
    text = match.string
    while start < end and text[start] in "\"'":
        start += 1
    while end > start and text[end - 1] in _TRAILING:
        end -= 1
    value = text[start:end]
    if len(value) < 6 or _PLACEHOLDER.match(value.lower()) or not any(c.isalpha() for c in value):
        return
    digits, symbols = any(c.isdigit() for c in value), any(c in _SYMBOLS for c in value)
    if not (digits or symbols):
        return
    if not match.group("link").strip() and (len(value) < 8 or not (symbols or any(c.isupper() for c in value))):
        return
    yield start, end, "password"


def _mixed(match: re.Match[str]) -> bool:
    """A bare 40-character AWS secret key looks random: upper and lower case letters and digits, and it is not a
    path whose parts are mostly words (``src/main/java/com/acme/auth/OAuth2Config``: 47 in a million random
    keys are taken for one)."""
    value = match.group(0)
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)):
        return False
    parts = value.split("/")
    return len(parts) < 3 or 2 * sum(1 for part in parts if _WORD.fullmatch(part)) < len(parts)


def _not_words(match: re.Match[str]) -> bool:
    """An OpenAI or Anthropic key is random, not lower-case words joined by dashes (``sk-learn-compatible-api``)."""
    body = match.group("body")
    parts = [part for part in re.split(r"[-_]", body) if part]
    return any(c.isupper() for c in body) or len(parts) < 2 or any(len(part) > 20 for part in parts)


def _basic_credentials(match: re.Match[str]) -> bool:
    """``Basic <base64 of user:password>``: only what decodes to printable text with a colon."""
    value = match.group("secret")
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


_BOUNDARY = r"(?<![A-Za-z0-9_-])"
# Provider tokens: a prefix the provider documents, then a bounded run of its alphabet (possessive).
_TOKEN_PREFIXES = (
    r"gh[pousr]_[A-Za-z0-9]{36,255}+",  # GitHub
    r"github_pat_[A-Za-z0-9_]{22,255}+",
    r"gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,255}+",  # GitLab
    r"xox[abposre]-[A-Za-z0-9-]{10,255}+",  # Slack
    r"xapp-[0-9]-[A-Za-z0-9-]{10,255}+",  # Slack app-level tokens
    r"AIza[0-9A-Za-z_-]{35}",  # Google API keys
    r"GOCSPX-[A-Za-z0-9_-]{24,64}+",  # Google OAuth client secrets
    r"ya29\.[A-Za-z0-9_-]{20,2048}+",  # Google OAuth access tokens
    r"1//0[A-Za-z0-9_-]{40,512}+",  # Google OAuth refresh tokens
    r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,255}+",  # Stripe secret and restricted keys
    r"whsec_[A-Za-z0-9+/=]{24,255}+",  # Stripe webhook signing secrets
    r"SK[0-9a-fA-F]{32}",  # Twilio API keys
    r"do[opr]_v1_[a-f0-9]{64}",  # DigitalOcean
    r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",  # Shopify
    r"npm_[A-Za-z0-9]{36}",
    r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,512}+",  # PyPI
    r"hf_[A-Za-z0-9]{30,255}+",  # Hugging Face
    r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",  # SendGrid
    r"dapi[0-9a-f]{32}",  # Databricks
    r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}",  # Postman
    r"lin_api_[A-Za-z0-9]{40}",  # Linear
    r"gsk_[A-Za-z0-9]{48,64}+",  # Groq
    r"r8_[A-Za-z0-9]{37}",  # Replicate
    r"AGE-SECRET-KEY-1[0-9A-Z]{58}",  # age
    r"eyJ[A-Za-z0-9_-]{8,4096}+\.eyJ[A-Za-z0-9_-]{8,4096}+\.[A-Za-z0-9_-]{8,4096}+",  # a JWT
)

# The private-key block: a header, then everything up to its footer or, unterminated, to the end.
_PEM = re.compile(
    r"-----BEGIN (?:(?!PRIVATE )[A-Z0-9]{1,12}+ ){0,3}+PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[^-]++|-(?!----END ))*+(?:-----END[A-Z0-9 ]{1,60}+-----)?+"
)
_PUTTY = re.compile(
    r"PuTTY-User-Key-File-[0-9]:(?:[^P]++|P(?!rivate-MAC:))*+(?:Private-MAC:[ \t]*+[0-9a-fA-F]{0,128}+)?+"
)

DETECTORS: list[Detector] = [
    Detector("private-key", _PEM),
    Detector("private-key", _PUTTY),
    Detector(
        "aws-access-key",
        re.compile(
            r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])"
        ),
    ),
    Detector("password", _KEY_VALUE, locate=_labelled, lower=True),  # the kind is the key's: password, api-token...
    Detector("password", _PROSE, locate=_prose_password),
    Detector(
        "aws-session-token",
        re.compile(r"(?<![A-Za-z0-9/+])(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdz)[A-Za-z0-9/+=]{60,4096}+"),
    ),
    Detector("api-token", re.compile(_BOUNDARY + r"(?:" + "|".join(_TOKEN_PREFIXES) + r")(?![A-Za-z0-9_-])")),
    Detector(  # OpenAI, Anthropic
        "api-token",
        re.compile(
            _BOUNDARY + r"sk-(?:proj-|svcacct-|admin-|ant-(?:api|admin|sid)\d{2}-)?"
            r"(?P<body>[A-Za-z0-9_-]{20,255}+)(?![A-Za-z0-9_-])"
        ),
        accept=_not_words,
    ),
    Detector(
        "api-token",
        re.compile(r"(?<![A-Za-z0-9])(?i:bearer)[ \t]{1,8}+(?P<secret>[A-Za-z0-9._~+/-]{20,4096}+=*+)"),
        group="secret",
    ),
    Detector(
        "webhook-url",
        re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9/_-]{20,255}+)"),
        group="secret",
    ),
    Detector(
        "basic-auth",
        re.compile(r"(?<![A-Za-z0-9])(?i:basic)[ \t]{1,8}+(?P<secret>[A-Za-z0-9+/]{8,1024}+={0,2}+)(?![A-Za-z0-9+/=])"),
        accept=_basic_credentials,
        group="secret",
    ),
    Detector("password-in-url", _SCHEME_SEPARATOR, locate=_url_password),
    Detector(
        "aws-secret-key",
        re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
        accept=_mixed,
    ),
    Detector("card-number", _DIGIT_RUN, locate=_card_windows),
    Detector(
        "email",
        re.compile(r"(?<![\w.+-])[\w.+-]{1,64}+@[A-Za-z0-9-]{1,63}+(?:\.[A-Za-z0-9-]{1,63}+){1,8}+(?![\w-])"),
        accept=lambda match: (
            match.group(0).rsplit(".", 1)[-1].isalpha() and len(match.group(0).rsplit(".", 1)[-1]) >= 2
        ),
        extra=True,
    ),
    Detector(
        "phone",
        re.compile(
            r"(?<![\w+])(?:\+[0-9]{1,3}+[ .-]?+)?+(?:\([0-9]{1,4}+\)[ .-]?+)?+"
            r"[0-9]{2,4}+(?:[ .-][0-9]{2,4}+){1,4}+(?![\w-])"
        ),
        accept=lambda match: 9 <= sum(c.isdigit() for c in match.group(0)) <= 15,
        extra=True,
    ),
]


def register(detector: Detector) -> None:
    """A deployment's own detector, checked after the built-in ones."""
    DETECTORS.append(detector)


def find(view: str, extra: frozenset[str]) -> list[Span]:
    """Every detector's spans, in the text's order. Where two overlap, the detector listed first in the
    table wins (a provider's token over the bare 40-character rule inside it, a URL's password over an
    e-mail address made of it and the host)."""
    starts: list[int] = []
    kept: list[Span] = []
    for detector in DETECTORS:
        if detector.extra and detector.kind not in extra:
            continue
        for span in detector.spans(view):
            place = bisect_right(starts, span[0])
            if (place and kept[place - 1][1] > span[0]) or (place < len(kept) and kept[place][0] < span[1]):
                continue
            starts.insert(place, span[0])
            kept.insert(place, span)
    return kept
