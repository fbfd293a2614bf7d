"""The hosted dashboard's Content-Security-Policy lets the page connect to the region's HTTP APIs, the OIDC
issuer and its token endpoint's origin, by name: no ``https:`` (any host), so an injected script could not
send a token anywhere else (docs/dashboard.md, docs/security.md)."""

from __future__ import annotations

from local.template import load_template


def policy() -> tuple[str, dict]:
    headers = load_template()["Resources"]["DashboardSecurityHeaders"]["Properties"]["ResponseHeadersPolicyConfig"]
    text, values = headers["SecurityHeadersConfig"]["ContentSecurityPolicy"]["ContentSecurityPolicy"]["Fn::Sub"]
    return text, values


def test_connect_src_names_the_api_the_issuer_and_the_token_origin_only():
    text, values = policy()
    connect = next(part for part in text.split(";") if part.strip().startswith("connect-src")).split()[1:]

    assert connect == [
        "'self'",
        "https://*.execute-api.${AWS::Region}.${AWS::URLSuffix}",
        "https://${IssuerHost}${TokenOrigin}",
    ]
    assert values["IssuerHost"] == {"Fn::Select": [2, {"Fn::Split": ["/", {"Ref": "DashboardIssuer"}]}]}
    assert values["TokenOrigin"]["Fn::If"][0] == "HasDashboardTokenOrigin"


def test_no_source_allows_any_https_host():
    text, _ = policy()

    assert "https:;" not in text.replace(" ", "") and " https: " not in f" {text} "
    assert "frame-ancestors 'none'" in text and "script-src 'self'" in text
