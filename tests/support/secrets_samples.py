"""One sample of each kind of secret the service redacts (docs/api.md §6 "Redaction"), with the part of it
that must never be stored or logged. All are published examples or made up; none is a real credential."""

from __future__ import annotations

# kind -> (text holding the secret, the secret itself)
SAMPLES: dict[str, tuple[str, str]] = {
    "aws-access-key": ("my key is AKIAIOSFODNN7EXAMPLE for prod", "AKIAIOSFODNN7EXAMPLE"),
    "aws-secret-key": (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY ok",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    "private-key": (
        "deploy key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUtZXhhbXBsZQ\n"
        "-----END OPENSSH PRIVATE KEY----- keep safe",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUtZXhhbXBsZQ",
    ),
    "api-token": ("use ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 in CI", "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
    "password-in-url": ("db at postgres://admin:Hunter2Secret@db.example.com/app", "Hunter2Secret"),
    "card-number": ("pay with 4111 1111 1111 1111 next time", "4111 1111 1111 1111"),
    "email": ("write to jane.doe@example.com later", "jane.doe@example.com"),
    "phone": ("call +1 415 555 0134 after six", "415 555 0134"),
}

EXTRA = {"email", "phone"}


# --- the corpus: 150+ secrets across the kinds, and benign look-alikes (docs/security.md "Redaction") ------
#
# Every value is made up here, from a seeded generator, in the shape its provider documents: none is a real
# credential. ``Secret.secret`` is what must never be stored: a survivor is a secret whose characters, with
# white space and invisible characters taken out, appear in what was stored (taken out the same way).
# Each secret is also written six more ways (``inserted``): U+200B, U+202E, U+2060, U+2028 or U+2029 inside
# it, and a line or paragraph separator where it has white space (a card's groups, a key block's lines, a
# label's space) or, when it has none, around it.

import random  # noqa: E402
import re  # noqa: E402
import string  # noqa: E402
from base64 import b64encode  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from functools import cache  # noqa: E402

from agent_memory.domain.fence import INVISIBLE  # noqa: E402

_SPACE = re.compile(r"\s")  # str.isspace's characters (both read Unicode's White_Space through the same table)


@dataclass(frozen=True)
class Secret:
    kind: str
    text: str  # the text that holds it
    secret: str  # what must not survive


_RANDOM = random.Random(2026)
_ALNUM = string.ascii_letters + string.digits
_UPPER_DIGITS = string.ascii_uppercase + string.digits
_HEX = "0123456789abcdef"
_B64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "_-"
_PASSWORD = _ALNUM + "!#^*_+=.-~"


def _pick(alphabet: str, length: int) -> str:
    return "".join(_RANDOM.choice(alphabet) for _ in range(length))


def _password(length: int = 14, extra: str = "") -> str:
    return _RANDOM.choice(_ALNUM) + _pick(_PASSWORD + extra, length - 2) + _RANDOM.choice(string.digits)


def _mixed(alphabet: str, length: int) -> str:
    while True:
        value = _pick(alphabet, length)
        if any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value):
            return value


def _luhn_complete(prefix: str, length: int) -> str:
    body = prefix + "".join(_RANDOM.choice(string.digits) for _ in range(length - len(prefix) - 1))
    for check in string.digits:
        number = body + check
        total = sum(int(d) for d in number[-1::-2]) + sum(sum(divmod(2 * int(d), 10)) for d in number[-2::-2])
        if total % 10 == 0:
            return number
    raise AssertionError("unreachable")


def _groups(number: str, sizes: tuple[int, ...], separator: str = " ") -> str:
    parts, at = [], 0
    for size in sizes:
        parts.append(number[at : at + size])
        at += size
    return separator.join(parts)


_SAYINGS = (
    "note for later: {} (do not share)",
    "the staging box uses {} since Monday",
    "Alice pasted {} into the thread",
    "- deploy with {} then restart",
    "remember {} for the migration",
)


def _say(kind: str, value: str, secret: str | None = None) -> Secret:
    return Secret(kind, _RANDOM.choice(_SAYINGS).format(value), secret if secret is not None else value)


def _pem(label: str, lines: int = 4, *, end: bool = True) -> Secret:
    body = [_pick(_B64, 64) for _ in range(lines)]
    footer = f"\n-----END {label}-----" if end else ""
    text = (
        f"key for the bastion:\n-----BEGIN {label}-----\n"
        + "\n".join(body)
        + footer
        + ("\nkeep it safe" if end else "")
    )
    return Secret("private-key", text, body[1])


def _putty() -> Secret:
    private = _pick(_B64, 64)
    text = (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ops@bastion\nPublic-Lines: 2\n"
        f"{_pick(_B64, 64)}\n{_pick(_B64, 16)}\nPrivate-Lines: 1\n{private}\nPrivate-MAC: {_pick(_HEX, 64)}"
    )
    return Secret("private-key", f"the PuTTY key: {text} (Windows box)", private)


def _corpus() -> list[Secret]:
    secrets: list[Secret] = []
    add = secrets.append
    for prefix in ("AKIA", "AKIA", "AKIA", "ASIA", "ASIA", "AROA", "AIDA", "AKIA", "ASIA", "AKIA"):
        add(_say("aws-access-key", prefix + _pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)))
    for template in (
        "aws_secret_access_key = {}",
        "AWS_SECRET_ACCESS_KEY={}",
        '{{"AccessKeyId": "AKIA...", "SecretAccessKey": "{}"}}',
        "export AWS_SECRET_ACCESS_KEY='{}'",
        "the secret access key is {} for prod",
        "aws secret: {}",
        "{}",
        "creds: key id in 1Password, secret {} rotates monthly",
        "secret_access_key: {}",
        "aws_secret_key={}",
    ):
        value = _mixed(_B64, 40)
        add(Secret("aws-secret-key", template.format(value), value))
    for template in (
        "AWS_SESSION_TOKEN={}",
        'aws_session_token = "{}"',
        '{{"SessionToken": "{}"}}',
        "token {} expires at 3pm",
    ):
        value = _RANDOM.choice(("IQoJb3JpZ2luX2VjE", "FwoGZXIvYXdzE")) + _pick(_B64, 300)
        add(Secret("aws-session-token", template.format(value), value))
    for label in (
        "RSA PRIVATE KEY",
        "EC PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
        "DSA PRIVATE KEY",
    ):
        add(_pem(label))
    add(_pem("PGP PRIVATE KEY BLOCK", 6))
    add(_putty())
    add(_putty())
    tokens = [
        "ghp_" + _pick(_ALNUM, 36),
        "ghp_" + _pick(_ALNUM, 36),
        "gho_" + _pick(_ALNUM, 36),
        "ghs_" + _pick(_ALNUM, 36),
        "github_pat_" + _pick(_ALNUM, 22) + "_" + _pick(_ALNUM, 59),
        "github_pat_" + _pick(_ALNUM, 22) + "_" + _pick(_ALNUM, 59),
        "glpat-" + _pick(_URLSAFE, 20),
        "glpat-" + _pick(_URLSAFE, 20),
        "gldt-" + _pick(_URLSAFE, 20),
        "sk-proj-" + _pick(_URLSAFE, 74) + "T3BlbkFJ" + _pick(_URLSAFE, 74),
        "sk-proj-" + _pick(_URLSAFE, 74) + "T3BlbkFJ" + _pick(_URLSAFE, 74),
        "sk-proj-" + _pick(_URLSAFE, 48),
        "sk-svcacct-" + _pick(_URLSAFE, 60),
        "sk-" + _pick(_ALNUM, 48),
        "sk-" + _pick(_ALNUM, 20) + "T3BlbkFJ" + _pick(_ALNUM, 20),
        "sk-ant-api03-" + _pick(_URLSAFE, 93) + "AA",
        "sk-ant-api03-" + _pick(_URLSAFE, 93) + "AA",
        "sk-ant-admin01-" + _pick(_URLSAFE, 93) + "AA",
        "xoxb-" + _pick(string.digits, 12) + "-" + _pick(string.digits, 13) + "-" + _pick(_ALNUM, 24),
        "xoxp-" + _pick(string.digits, 12) + "-" + _pick(string.digits, 12) + "-" + _pick(_ALNUM, 32),
        "xoxe.xoxp-1-" + _pick(_ALNUM, 140),
        "xapp-1-A" + _pick(_UPPER_DIGITS, 10) + "-" + _pick(string.digits, 13) + "-" + _pick(_HEX, 64),
        "xapp-1-A" + _pick(_UPPER_DIGITS, 10) + "-" + _pick(string.digits, 13) + "-" + _pick(_HEX, 64),
        "AIza" + _pick(_URLSAFE, 35),
        "AIza" + _pick(_URLSAFE, 35),
        "GOCSPX-" + _pick(_URLSAFE, 28),
        "GOCSPX-" + _pick(_URLSAFE, 28),
        "ya29." + _pick(_URLSAFE, 150),
        "ya29." + _pick(_URLSAFE, 120),
        "1//0" + _pick(_URLSAFE, 99),
        "sk_live_" + _pick(_ALNUM, 99),
        "sk_test_" + _pick(_ALNUM, 24),
        "rk_live_" + _pick(_ALNUM, 99),
        "whsec_" + _pick(_ALNUM, 32),
        "whsec_" + _pick(_ALNUM, 32),
        "SK" + _pick(_HEX, 32),
        "SK" + _pick(_HEX, 32),
        "dop_v1_" + _pick(_HEX, 64),
        "dop_v1_" + _pick(_HEX, 64),
        "shpat_" + _pick(_HEX, 32),
        "shpss_" + _pick(_HEX, 32),
        "npm_" + _pick(_ALNUM, 36),
        "npm_" + _pick(_ALNUM, 36),
        "hf_" + _pick(_ALNUM, 34),
        "hf_" + _pick(_ALNUM, 34),
        "SG." + _pick(_URLSAFE, 22) + "." + _pick(_URLSAFE, 43),
        "SG." + _pick(_URLSAFE, 22) + "." + _pick(_URLSAFE, 43),
        "pypi-AgEIcHlwaS5vcmc" + _pick(_URLSAFE, 70),
        "dapi" + _pick(_HEX, 32),
        "gsk_" + _pick(_ALNUM, 52),
        "r8_" + _pick(_ALNUM, 37),
        "lin_api_" + _pick(_ALNUM, 40),
    ]
    for token in tokens:
        add(_say("api-token", token))
    for _ in range(3):
        jwt = "eyJhbGciOiJIUzI1NiJ9.eyJ" + _pick(_URLSAFE, 40) + "." + _pick(_URLSAFE, 43)
        add(_say("api-token", jwt))
    for template in ("Authorization: Bearer {}", "curl -H 'Authorization: Bearer {}' https://api.example.com"):
        value = _pick(_URLSAFE + ".", 48)
        add(Secret("api-token", template.format(value), value))
    for template in (
        "GITHUB_TOKEN={}",
        "client_secret: {}",
        'api_key = "{}"',
        '{{"apiKey": "{}"}}',
        "TWILIO_AUTH_TOKEN={}",
    ):
        value = _pick(_ALNUM, 32)
        add(Secret("api-token", template.format(value), value))
    for kind in ("services", "services", "workflows"):
        path = f"T{_pick(_UPPER_DIGITS, 8)}/B{_pick(_UPPER_DIGITS, 10)}/{_pick(_ALNUM, 24)}"
        add(Secret("webhook-url", f"alerts post to https://hooks.slack.com/{kind}/{path} now", path))
    for user in ("admin", "deploy", "ci-bot", "grafana"):
        value = b64encode(f"{user}:{_password()}".encode()).decode()
        add(Secret("basic-auth", f"Authorization: Basic {value}", value))
    urls = [
        ("postgres://app:{}@db.internal:5432/app", ""),
        ("postgresql://svc:{}@10.0.3.7/analytics", "@"),
        ("mysql://root:{}@127.0.0.1:3306/shop", "/"),
        ("mongodb+srv://reader:{}@cluster0.ab1cd.mongodb.net/?retryWrites=true", "@/"),
        ("redis://:{}@cache.internal:6379/0", ""),
        ("rediss://default:{}@redis-12345.cloud.example.com:12345", "@"),
        ("amqp://guest:{}@rabbit:5672/vhost", ""),
        ("https://bob:{}@git.example.com/team/repo.git", ":"),
        ("ftp://upload:{}@files.example.org/in", "@"),
        ("sftp://backup:{}@nas.local/backups", ""),
        ("smtp://mailer:{}@smtp.example.com:587", "/"),
        ("ldap://svc:{}@ldap.example.com", ""),
        ("jdbc:postgresql://db:5432/app?user=app&password={}", ""),
        ("http://user:{}@proxy.corp:3128", "@:"),
    ]
    for template, extra in urls:
        value = _password(14, extra) + (extra[:1] if extra else "")
        value = value[:6] + extra + value[6:]
        if template.startswith("ldap:"):
            value = "P@ssw0rd2026"  # the shape that leaked most of itself when split at the first @
        kind = "password" if "password=" in template else "password-in-url"
        value = value.replace("&", "")
        add(Secret(kind, f"connect with {template.format(value)}", value))
    for template in (
        "password: {}",
        "Password = {}",
        "pwd={}",
        "DB_PASSWORD={}",
        "PGPASSWORD={} psql -h db -U app",
        "MYSQL_ROOT_PASSWORD={}",
        '{{"username": "app", "password": "{}"}}',
        "Server=sql01;Database=shop;User Id=sa;Password={};",
        "Data Source=db;Initial Catalog=x;User ID=app;Pwd={};",
        'password: "{}"',
        "passwd {}".replace(" ", "="),
        "spring.datasource.password={}",
        "REDIS_PASSWORD: {}",
        '"passphrase": "{}"',
        "wifi password: {}",
        "admin_password => {}",
        "<password>{}</password>".replace("<password>", "password="),
        "SMTP_PASS={}",
    ):
        value = _password()
        add(Secret("password", f"setup: {template.format(value)} (rotate)", value))
    for template in (
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={};EndpointSuffix=core.windows.net",
        "AccountKey={}",
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={}",
    ):
        value = _pick(_B64, 86) + "=="
        add(Secret("azure-key", template.format(value), value))
    cards = [
        (_luhn_complete("4", 16), (4, 4, 4, 4), " ", ""),
        (_luhn_complete("4", 16), (16,), "", ""),
        (_luhn_complete("4", 16), (4, 4, 4, 4), "-", ""),
        (_luhn_complete("4", 16), (16,), "", " 123"),
        (_luhn_complete("4", 16), (4, 4, 4, 4), " ", " 12/28 cvv 123"),
        (_luhn_complete("51", 16), (4, 4, 4, 4), " ", ""),
        (_luhn_complete("55", 16), (16,), "", " 321"),
        (_luhn_complete("2221", 16), (4, 4, 4, 4), " ", ""),
        (_luhn_complete("34", 15), (4, 6, 5), " ", ""),
        (_luhn_complete("37", 15), (15,), "", " 1234"),
        (_luhn_complete("6011", 16), (4, 4, 4, 4), "-", ""),
        (_luhn_complete("65", 16), (16,), "", ""),
        (_luhn_complete("3530", 16), (4, 4, 4, 4), " ", ""),
        (_luhn_complete("36", 14), (4, 6, 4), " ", ""),
        (_luhn_complete("62", 19), (19,), "", ""),
        (_luhn_complete("4", 16), (4, 4, 4, 4), " ", " 4"),
    ]
    for number, sizes, separator, after in cards:
        written = _groups(number, sizes, separator) if separator else number
        add(Secret("card-number", f"card on file: {written}{after}, billing monthly", written))
    for template in (  # passwords in prose, Wi-Fi passwords among them
        "my password is {}",
        "the password for the staging box is {} until Friday",
        "the Wi-Fi password is {}",
        "Wi-Fi: AcmeGuest, password {}",
        "the wifi key is {} (guest network)",
        "the admin password was changed to {} yesterday",
    ):
        value = _password(12)
        add(Secret("password", template.format(value), value))
    add(_pem("RSA PRIVATE KEY", 3, end=False))  # last: an unterminated block runs to the end of its text
    return secrets


CORPUS: list[Secret] = _corpus()


# The characters inserted inside each secret: invisible ones (a zero-width space, a bidi override, a word
# joiner) and the separators cleaning turns into a space (a line and a paragraph separator).
INSIDE = {"U+200B": "\u200b", "U+202E": "\u202e", "U+2060": "\u2060", "U+2028": "\u2028", "U+2029": "\u2029"}


def inserted(secret: Secret) -> list[tuple[str, Secret]]:
    """The ways of writing ``secret`` with a character inserted: each of ``INSIDE`` in its middle (a bidi
    override a quarter in), and a separator where it has white space or around it."""
    value = secret.secret
    middle = len(value) // 2

    def within(character: str, at: int) -> Secret:
        return Secret(secret.kind, secret.text.replace(value, value[:at] + character + value[at:], 1), value)

    space = next((i for i, ch in enumerate(value) if ch in " \n"), None)
    if space is not None:
        separated = secret.text.replace(value, value[:space] + "\u2028" + value[space + 1 :], 1)
    else:  # around the word that holds it (a URL with a space in it is two words, not a URL)
        start = secret.text.index(value)
        end = start + len(value)
        while start > 0 and not secret.text[start - 1].isspace():
            start -= 1
        while end < len(secret.text) and not secret.text[end].isspace():
            end += 1
        word = secret.text[start:end]
        before, after = secret.text[:start], secret.text[end:]
        before = before[:-1] + "\u2029" if before.endswith((" ", "\n")) else before
        after = "\u2028" + after[1:] if after.startswith((" ", "\n")) else "\u2028" + after
        separated = before + word + after
    return [
        *(
            (name, within(character, max(1, middle // 2) if name == "U+202E" else middle))
            for name, character in INSIDE.items()
        ),
        ("separator", Secret(secret.kind, separated, secret.secret)),
    ]


@cache  # a path's stored text is squashed once, not once per secret looked for in it
def squashed(text: str) -> str:
    """``text`` without white space or invisible characters: what a reader copies back together."""
    return _SPACE.sub("", INVISIBLE.sub("", text))


def survives(secret: str, stored: str) -> bool:
    return squashed(secret) in squashed(stored)


def _isbn13(stem: str) -> str:
    total = sum(int(d) * (1 if i % 2 == 0 else 3) for i, d in enumerate(stem))
    number = stem + str((10 - total % 10) % 10)
    return f"{number[:3]}-{number[3]}-{number[4:7]}-{number[7:12]}-{number[12]}"


def _benign() -> list[str]:
    rng = random.Random(7)
    texts = []
    for _ in range(8):
        uuid = "-".join("".join(rng.choice(_HEX) for _ in range(size)) for size in (8, 4, 4, 4, 12))
        texts.append(f"request id {uuid} failed twice")
    for _ in range(8):
        texts.append(f"fixed in commit {''.join(rng.choice(_HEX) for _ in range(40))} on main")
    texts += [f"see {''.join(rng.choice(_HEX) for _ in range(7))} for the revert" for _ in range(3)]
    for stem in ("978030640615", "978316148410", "979109306105", "978147679007", "978019953556"):
        texts.append(f"read ISBN {_isbn13(stem)} before Friday")
    texts += ["ISBN 0-306-40615-2 is the old edition", "ISBN-10: 0262033844 (CLRS)", "isbn 9780262033848"]
    for tac in ("35209900", "49015420", "86123405", "01326900", "35391805", "35875405"):
        imei = _luhn_complete(tac, 15)
        texts.append(
            f"phone IMEI {imei} reported lost"
            if tac != "35391805"
            else f"IMEI {imei[:2]}-{imei[2:8]}-{imei[8:14]}-{imei[14]}"
        )
    texts += [
        "order 112-4810573-2938745 shipped",
        "Order #100234567 was refunded",
        "ORD-2026-000123 is on hold",
        "invoice 2026/11/000457 paid",
        "ticket 8841 2301 7765 0092 in the queue",
        "tracking 1Z999AA10123456784",
        "FedEx 7712 3456 7890",
        "order 9400 1000 0000 0000 0000 00 (USPS)",
        "account 123456789012 in eu-west-1",
        "timestamp 1796392251697 in the log",
    ]
    texts += [
        "/home/alice/.ssh/id_ed25519.pub",
        "config at /etc/postgresql/16/main/pg_hba.conf",
        r"C:\Users\bob\AppData\Roaming\Code\User\settings.json",
        "s3://acme-backups/2026/12/03/db.sql.gz",
        "arn:aws:iam::123456789012:role/MemoryBackendRole",
        "~/projects/agent-memory/layers/shared/agent_memory/redaction.py",
        "/var/run/secrets/kubernetes.io/serviceaccount/token",
        "./node_modules/.bin/tsc --noEmit",
    ]
    texts += [
        "clone git@github.com:acme/agent-memory.git",
        "remote: ssh://git@gitlab.example.com:2222/platform/infra.git",
        "push to git@bitbucket.org:team/app.git",
        "origin https://github.com/acme/agent-memory.git",
        "mirror at ssh://deploy@git.internal/srv/repos/app.git",
        "hg clone ssh://hg@bitbucket.org/acme/legacy",
    ]
    texts += [
        "dashboard at https://grafana.example.com:3000/d/abc?orgId=1",
        "profile https://mastodon.social/@alice",
        "postgres://db.internal:5432/app has no password in the URL",
        "http://user@proxy.corp:3128 asks for the password separately",
        "image nginx:1.25@sha256:" + "".join(rng.choice(_HEX) for _ in range(64)),
        "rotate the password every 90 days",
        "the token endpoint is /oauth2/token",
        "set max_tokens=4096 and temperature=0.2",
        "password_min_length=12 in the policy",
        "PGPASSWORD is read by psql from the environment",
        "IPv6 fe80::1ff:fe23:4567:890a on eth0",
        "version 2.14.4 (build 20261203.1)",
        "color #1f6feb and #ffffff",
        "meeting 2026-12-03 10:15 UTC, room 4B",
        "call extension 4021 at 09:30",
        "sk-learn-compatible-transformer-api wraps the model",
        "the handler is in src/main/java/com/acme/auth/OAuth2Config for now",
    ]
    return texts


BENIGN: list[str] = _benign()
