"""The shapes that survived redaction before (docs/security.md "Redaction"), each caught and named for what it is."""

from __future__ import annotations

import pytest

from agent_memory.domain.redaction import redact


@pytest.mark.parametrize(
    ("text", "expected", "kind"),
    [
        ("password: hunter2!x", "password: [redacted: password]", "password"),
        ("pwd=s3cret99", "pwd=[redacted: password]", "password"),
        ("DB_PASSWORD=Tr0ub4dor", "DB_PASSWORD=[redacted: password]", "password"),
        ("PGPASSWORD=Tr0ub4dor psql", "PGPASSWORD=[redacted: password] psql", "password"),
        ('{"user": "a", "password": "x y z 1"}', '{"user": "a", "password": "[redacted: password]"}', "password"),
        ("Server=db;User Id=sa;Password=Secr3t!;", "Server=db;User Id=sa;Password=[redacted: password];", "password"),
        ("card 4242424242424242 123", "card [redacted: card-number] 123", "card-number"),
        ("card 4242 4242 4242 4242 12/28", "card [redacted: card-number] 12/28", "card-number"),
        ("ref 77 4242-4242-4242-4242", "ref 77 [redacted: card-number]", "card-number"),
        (
            "ldap://svc:P@ssw0rd2026@ldap.example.com/dc=x",
            "ldap://svc:[redacted: password-in-url]@ldap.example.com/dc=x",
            "password-in-url",
        ),
        ("mysql://root:a/b@c@db/shop", "mysql://root:[redacted: password-in-url]@db/shop", "password-in-url"),
        ("redis://:s3cretpw@cache:6379", "redis://:[redacted: password-in-url]@cache:6379", "password-in-url"),
        ("Authorization: Basic YWRtaW46czNjcjN0IQ==", "Authorization: Basic [redacted: basic-auth]", "basic-auth"),
        ("AccountKey=" + "A" * 86 + "==;", "AccountKey=[redacted: azure-key];", "azure-key"),
        (
            "AWS_SESSION_TOKEN=IQoJb3JpZ2luX2VjE" + "x" * 80,
            "AWS_SESSION_TOKEN=[redacted: aws-session-token]",
            "aws-session-token",
        ),
        (
            "https://hooks.slack.com/services/T0000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
            "https://hooks.slack.com/services/[redacted: webhook-url]",
            "webhook-url",
        ),
        ("-----BEGIN PRIVATE KEY----- MIIE abc", "[redacted: private-key]", "private-key"),
        (
            "PuTTY-User-Key-File-3: ssh-ed25519 Private-Lines: 1 QUJD Private-MAC: abc123",
            "[redacted: private-key]",
            "private-key",
        ),
    ],
)
def test_each_shape_is_caught_and_named(text, expected, kind):
    result = redact(text)

    assert (result.text, result.kinds) == (expected, [kind])


@pytest.mark.parametrize(
    "token",
    [
        "sk-proj-" + "Ab1_x" * 30,
        "xapp-1-A0123456789-1234567890123-" + "a" * 64,
        "GOCSPX-" + "a1B2" * 7,
        "ya29." + "a0Ab" * 30,
        "whsec_" + "Ab12" * 8,
        "SK" + "0123456789abcdef" * 2,
        "dop_v1_" + "0123456789abcdef" * 4,
        "shpat_" + "0123456789abcdef" * 2,
        "sk-ant-api03-" + "Xy9_" * 20,
    ],
)
def test_provider_tokens_are_api_tokens_whole(token):
    result = redact(f"use {token} today")

    assert (result.text, result.kinds) == ("use [redacted: api-token] today", ["api-token"])


@pytest.mark.parametrize(
    "text",
    [
        "IMEI 490154203237518",
        "ISBN 978-0-306-40615-7",
        "order 112-4810573-2938745",
        "git@github.com:acme/app.git",
        "ssh://git@gitlab.example.com:2222/platform/infra.git",
        "https://example.com/users/@alice",
        "bypass: yes, compass: north, max_tokens=300",
        "password=${DB_PASSWORD} and password: <your password> and password=****",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    ],
)
def test_look_alikes_are_left_alone(text):
    assert redact(text).text == text
