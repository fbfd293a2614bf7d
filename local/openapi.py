"""``make openapi``: write docs/openapi.json, the management API's OpenAPI document, from the code.

Powertools builds it from the routes and their annotations (``get_openapi_json_schema``); a test fails
when the committed file drifts from what the code would generate.
"""

from __future__ import annotations

import json
import sys

from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer

from local.template import ROOT, load_handler

OPENAPI = ROOT / "docs" / "openapi.json"


def generate() -> str:
    """The document as text, keys sorted, so that a diff shows only real changes."""
    app = sys.modules[load_handler("ManagementFunction").__module__].app
    schema = app.get_openapi_json_schema(
        title="Agent memory: management API",
        version="1.0.0",
        description="Personal and team memory for the dashboard, behind a JWT authorizer (CONTRACT §5).",
        security_schemes={"dashboardJwt": HTTPBearer(bearerFormat="JWT")},
        security=[{"dashboardJwt": []}],
    )
    return json.dumps(json.loads(schema), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    OPENAPI.write_text(generate())
    print(f"wrote {OPENAPI.relative_to(ROOT)}")
