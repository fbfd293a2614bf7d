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
