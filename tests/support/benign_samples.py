"""A larger benign corpus: technical text that holds no secret, which redaction must leave as it was.

Identifiers, file paths, code, configuration, URLs without credentials, versions and digests, and prose about
credentials, built from word lists with a seeded generator (the same 400 texts every run). Many name what
secrets are called (``token``, ``password``, ``auth``, ``OAuth2``, ``sk-``) because that is what technical notes
hold; none holds a value a detector should take. Used with tests/support/secrets_samples.py's corpus on every write
path (tests/support/redaction_paths.py): at most 2% of these may change.
"""

from __future__ import annotations

import random

_WORDS = (  # noqa: SIM905 - a word list, one string
    "user account session token auth oauth2 password secret key cache queue worker handler client server "
    "config settings request response retry timeout bucket table index schema migration payment invoice order "
    "customer profile avatar upload download stream event message notification webhook scheduler cron job "
    "metric logger tracer span vault credential rotation policy role permission scope tenant region cluster "
    "node pod service deployment ingress gateway proxy route controller model view template renderer parser"
).split()
_CAMEL = ("OAuth2", "S3", "K8s", "Http2", "Sha256", "Base64", "Utf8", "Ipv6", "Jwt", "Api", "Db", "Id", "Url")
_EXTENSIONS = ("py", "ts", "go", "rs", "java", "kt", "yaml", "json", "md", "sql", "tf", "sh", "toml")
_HOSTS = ("example.com", "api.example.org", "docs.python.org", "github.com", "registry.npmjs.org", "acme.internal")
_HEX = "0123456789abcdef"


def _pick(rng: random.Random, count: int) -> list[str]:
    return [rng.choice(_WORDS) for _ in range(count)]


def _camel(words: list[str]) -> str:
    return words[0] + "".join(word.capitalize() for word in words[1:])


def _pascal(rng: random.Random, words: list[str]) -> str:
    parts = [word.capitalize() for word in words]
    parts.insert(rng.randrange(len(parts) + 1), rng.choice(_CAMEL))
    return "".join(parts)


def _identifiers(rng: random.Random) -> list[str]:
    texts = []
    for _ in range(20):
        texts.append(f"rename {_camel(_pick(rng, 3))} to {_camel(_pick(rng, 3))} in the {rng.choice(_WORDS)} module")
        texts.append(f"{'_'.join(_pick(rng, 3))}() is called before {'_'.join(_pick(rng, 2))}()")
        texts.append(f"the {_pascal(rng, _pick(rng, 2))} class wraps {_pascal(rng, _pick(rng, 2))}")
        texts.append(f"{'_'.join(_pick(rng, 3)).upper()} defaults to {rng.choice(('true', 'false', '30', '5m'))}")
        texts.append(f"{rng.choice(('sk', 'pk', 'gh', 'ya'))}-{'-'.join(_pick(rng, 4))} is the package name")
    return texts


def _paths(rng: random.Random) -> list[str]:
    texts = []
    for _ in range(20):
        parts = _pick(rng, rng.randint(3, 6))
        parts.insert(rng.randrange(len(parts)), _pascal(rng, _pick(rng, 1)))
        texts.append(f"see {'/'.join(parts)}.{rng.choice(_EXTENSIONS)}")
        home = f"/home/{rng.choice(('alice', 'bob', 'ci'))}"
        texts.append(f"{home}/{'/'.join(_pick(rng, 3))}/{_pascal(rng, _pick(rng, 2))}")
        texts.append("src/main/java/com/acme/" + "/".join(_pick(rng, 2)) + "/" + _pascal(rng, _pick(rng, 1)) + ".java")
        texts.append(r"C:\Users\dev\source\repos" + "\\" + "\\".join(_pascal(rng, _pick(rng, 1)) for _ in range(3)))
    return texts


def _code(rng: random.Random) -> list[str]:
    texts = []
    for _ in range(12):
        a, b, c = _pick(rng, 3)
        texts += [
            f"def verify_{a}(plain: str, hashed: str) -> bool: return check_{b}(plain, hashed)",
            f"const {_camel([a, 'token'])} = await get{b.capitalize()}Token({c}Scope);",
            f"if (password.length < {rng.randint(8, 16)}) throw new Error('{a} too short');",
            f"SELECT id, {a}_id FROM {b}s WHERE password_hash IS NOT NULL AND {c} > now();",  # noqa: S608 - a text
            f"kubectl get secret {a}-{b}-credentials -n {c} -o yaml",
            f"export {a.upper()}_TOKEN_FILE=/run/secrets/{b}_{c}",
            f"token = os.environ['{a.upper()}_{b.upper()}_TOKEN']  # read at start",
            f"headers['Authorization'] = f'Bearer {{{a}_token}}'",
        ]
    return texts


def _configuration(rng: random.Random) -> list[str]:
    texts = []
    for _ in range(10):
        a, b = _pick(rng, 2)
        texts += [
            f"max_tokens: {rng.choice((256, 1024, 4096))} and token_ttl_seconds={rng.choice((60, 900, 3600))}",
            f"password_min_length: {rng.randint(8, 16)}, password_max_age_days: {rng.choice((30, 90, 365))}",
            f"{a}.{b}.secret-ref: ${{{a.upper()}_SECRET}}",
            f"auth: {{type: oidc, issuer: https://{rng.choice(_HOSTS)}/{a}}}",
            f"api_key_header: X-{a.capitalize()}-Key",
        ]
    return texts


def _urls(rng: random.Random) -> list[str]:
    texts = []
    for _ in range(12):
        a, b, c = _pick(rng, 3)
        host = rng.choice(_HOSTS)
        texts += [
            f"https://{host}/{a}/{b}?page={rng.randint(1, 9)}&sort={c}#top",
            f"git@github.com:acme/{a}-{b}.git",
            f"s3://acme-{a}/{b}/{rng.randint(2020, 2026)}/{c}.parquet",
            f"http://localhost:{rng.choice((3000, 8080, 5432))}/{a}/{_camel([b, c])}",
            f"postgres://{a}-db.internal:5432/{b} (the password comes from Secrets Manager)",
        ]
    return texts


def _versions(rng: random.Random) -> list[str]:
    texts = []
    for _ in range(8):
        sha = "".join(rng.choice(_HEX) for _ in range(40))
        digest = "".join(rng.choice(_HEX) for _ in range(64))
        texts += [
            f"bumped {rng.choice(_WORDS)} to {rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 12)}",
            f"reverted {sha} on main",
            f"image acme/{rng.choice(_WORDS)}@sha256:{digest}",
        ]
    return texts


_PROSE = (
    "rotate the password every 90 days",
    "the password is stored in Vault, never in the repo",
    "the API key lives in SSM Parameter Store under /prod/api",
    "ask Bob for the Wi-Fi password when you arrive",
    "the token expires after 1 hour and is refreshed silently",
    "the password was reset by the help desk on Monday",
    "reset your password from the login page",
    "the password for the staging box is in 1Password",
    "the Wi-Fi network is AcmeGuest and the password is on the whiteboard",
    "never paste a token into the chat",
    "pass the tests with pytest -x before pushing",
    "password managers: 1Password for the team, Bitwarden for personal",
    "the passphrase is read from the keychain at start",
    "network key rotation happens every quarter",
    "the secret is mounted at /var/run/secrets/app",
    "OAuth2 tokens are signed with RS256",
    "the session token is an opaque 32-byte value",
    "pw reset links expire after 15 minutes",
    "the password is at least 12 characters long",
    "the password field is hashed with argon2id",
)


def _benign() -> list[str]:
    rng = random.Random(43)
    texts = _identifiers(rng) + _paths(rng) + _code(rng) + _configuration(rng) + _urls(rng) + _versions(rng)
    return list(dict.fromkeys(texts + list(_PROSE)))  # each text once


BENIGN_TECHNICAL: list[str] = _benign()
