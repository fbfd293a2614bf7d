"""Who is calling the management API (docs/api.md §5): one place that turns a request into a principal.

In AWS the HTTP API's JWT authorizer has verified the token already and the handler reads the claims it
passes on (API Gateway flattens them to strings: an array becomes ``"[w1 w2]"``, ``true`` becomes
``"true"``). The local stack has no authorizer, so when ``MEMORY_LOCAL_JWT_SECRET`` is set (only the
local stack sets it) the handler verifies the bearer token itself: HS256 only, issuer ``memory-local``,
audience ``memory-dashboard``, ``exp`` required and checked against the real clock with 60 s leeway.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Any

from agent_memory.basics.errors import Forbidden, Unauthorized
from agent_memory.edges.requests.reading import is_id

LOCAL_ISSUER = "memory-local"
LOCAL_AUDIENCE = "memory-dashboard"
LEEWAY_S = 60
_TIME_CLAIMS = ("exp", "nbf", "iat")
_SEPARATORS = re.compile(r"[\s,]+")


@dataclass(frozen=True, slots=True)
class Principal:
    user_id: str
    workspaces: frozenset[str]
    admin: bool

    def require_member(self, workspace_id: str) -> None:
        if workspace_id not in self.workspaces:
            raise Forbidden("you are not a member of this workspace")

    def require_admin(self) -> None:
        if not self.admin:
            raise Forbidden("this route is for operators (memory_admin)")


def parse_workspaces(value: object) -> frozenset[str]:
    """A JSON array of ids, or one string of ids separated by spaces or commas, optionally in brackets.

    Any other shape makes the user a member of nothing. Membership is exact equality of ids.
    """
    if isinstance(value, list):
        items = value if all(isinstance(item, str) for item in value) else []
    elif isinstance(value, str):
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1]
        items = [item for item in _SEPARATORS.split(text) if item]
    else:
        items = []
    return frozenset(item for item in items if is_id(item))


def verify_local_token(authorization: str | None, secret: str) -> dict[str, Any]:
    """The claims of a valid local bearer token, else Unauthorized."""
    import jwt
    from jwt.warnings import InsecureKeyLengthWarning

    if not authorization or not authorization.startswith("Bearer "):
        raise Unauthorized("a bearer token is required: Authorization: Bearer <JWT>")
    token = authorization.removeprefix("Bearer ").strip()
    try:
        if jwt.get_unverified_header(token).get("alg") != "HS256":
            raise Unauthorized("the token must be signed with HS256")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InsecureKeyLengthWarning)  # the contract's local secret is short
            claims: dict[str, Any] = jwt.decode(
                token,
                secret,
                algorithms=["HS256"],
                audience=LOCAL_AUDIENCE,
                issuer=LOCAL_ISSUER,
                leeway=LEEWAY_S,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
    except (jwt.PyJWTError, OverflowError, ValueError, TypeError) as error:  # exp = 1e999: int(inf) overflows
        raise Unauthorized(f"the token is not valid: {error}") from None
    for name in _TIME_CLAIMS:  # PyJWT would read "9999999999" as a number; the contract wants JSON numbers
        value = claims.get(name)
        if name in claims and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise Unauthorized(f"the token's `{name}` must be a JSON number")
    return claims


def principal_from_event(event: dict[str, Any], local_secret: str | None) -> Principal:
    """The caller of a management route; Unauthorized if there is none."""
    if local_secret is not None:
        headers = {key.lower(): value for key, value in (event.get("headers") or {}).items()}
        claims = verify_local_token(headers.get("authorization"), local_secret)
        admin = claims.get("memory_admin") is True
    else:
        claims = ((event.get("requestContext") or {}).get("authorizer") or {}).get("jwt", {}).get("claims") or {}
        admin = claims.get("memory_admin") in (True, "true")  # the authorizer flattens JSON true to "true"
    subject = claims.get("sub")
    if not is_id(subject):
        raise Unauthorized("the token's subject is missing or not a valid user id")
    return Principal(user_id=subject, workspaces=parse_workspaces(claims.get("workspaces")), admin=admin)


def require_backend_caller(event: dict[str, Any], role_arn: str | None) -> None:
    """The check of every chat backend's route (``edges.callers.BACKEND``: the tools, ``context``, the platform's
    routes). With ``MEMORY_BACKEND_ROLE_ARN`` set, the SigV4 caller the IAM authorizer passes on
    (``requestContext.authorizer.iam.userArn``, an assumed-role session of that role, or the role itself) must
    be it: IAM lets in whoever may invoke the routes (a policy granting ``execute-api:Invoke`` on ``*`` is
    enough), and this is the role the conversation context is trusted from. Unset (the local stack, which has
    no IAM), no role is checked. Either way a dashboard token (``Authorization: Bearer``) never stands for the
    backend: in AWS it cannot pass the ``AWS_IAM`` authorizer, and where nothing checks a signature it is
    refused here."""
    if role_arn:
        caller = (((event.get("requestContext") or {}).get("authorizer") or {}).get("iam") or {}).get("userArn")
        if not isinstance(caller, str) or not _same_role(caller, role_arn):
            raise Forbidden("only the chat backend's role may call this route (MEMORY_BACKEND_ROLE_ARN)")
    headers = {key.lower(): value for key, value in (event.get("headers") or {}).items()}
    if str(headers.get("authorization", "")).lstrip().lower().startswith("bearer"):
        raise Forbidden("a dashboard token grants nothing on the chat backend's routes; sign the request with SigV4")


def _same_role(caller: str, role_arn: str) -> bool:
    """``arn:aws:sts::<account>:assumed-role/<name>/<session>`` or ``arn:aws:iam::<account>:role/<path/><name>``
    against the role's ARN: the same partition, account and role name (an assumed-role ARN has no path)."""
    partition, account, name = role_arn.split(":")[1], role_arn.split(":")[4], role_arn.rsplit("/", 1)[-1]
    parts = caller.split(":", 5)
    if len(parts) != 6 or parts[1] != partition or parts[4] != account:
        return False
    if parts[2] == "sts" and parts[5].startswith("assumed-role/"):
        return parts[5].split("/")[1] == name
    return parts[2] == "iam" and caller == role_arn
