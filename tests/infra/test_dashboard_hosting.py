"""The hosted dashboard (DashboardHosting "true"): a private bucket behind CloudFront, CORS for that origin
only, the OIDC client accepted by the JWT authorizer, and no trace of the local development sign-in."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from local.template import TEMPLATE, load_template
from tests.support.checkov import needs_checkov, scan

DASHBOARD_RESOURCES = {
    "DashboardBucket",
    "DashboardBucketPolicy",
    "DashboardOriginAccess",
    "DashboardSecurityHeaders",
    "DashboardDistribution",
}


def hosted_template(tmp_path: Path) -> Path:
    """template.yaml with DashboardHosting "true" by default (checkov scans only what the defaults deploy)."""
    text = TEMPLATE.read_text()
    hosting = '  DashboardHosting:\n    Type: String\n    Default: "false"'
    client = '  DashboardClientId:\n    Type: String\n    Default: ""'
    assert hosting in text and client in text
    text = text.replace(hosting, hosting.replace('"false"', '"true"'))
    text = text.replace(client, client.replace('""', "dashboard-client"))
    (tmp_path / "template.yaml").write_text(text)
    return tmp_path / "template.yaml"


def resources() -> dict[str, Any]:
    found: dict[str, Any] = load_template()["Resources"]
    return found


def test_the_dashboard_exists_only_when_hosted() -> None:
    template = load_template()
    assert template["Parameters"]["DashboardHosting"]["Default"] == "false"
    assert template["Conditions"]["HostDashboard"] == {
        "Fn::And": [{"Fn::Condition": "HasDashboard"}, {"Fn::Equals": [{"Ref": "DashboardHosting"}, "true"]}]
    }
    dashboard = {name for name in resources() if name.startswith("Dashboard")}
    assert dashboard == DASHBOARD_RESOURCES
    assert all(resources()[name]["Condition"] == "HostDashboard" for name in dashboard)
    outputs = {name for name, output in template["Outputs"].items() if output.get("Condition") == "HostDashboard"}
    assert outputs == {"DashboardUrl", "DashboardBucketName", "DashboardConfig"}


def test_the_bucket_is_private_encrypted_and_read_only_by_the_distribution_over_tls() -> None:
    bucket = resources()["DashboardBucket"]["Properties"]
    assert set(bucket["PublicAccessBlockConfiguration"].values()) == {True}
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]
    assert bucket["OwnershipControls"]["Rules"] == [{"ObjectOwnership": "BucketOwnerEnforced"}]
    deny, allow = resources()["DashboardBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    assert deny["Effect"] == "Deny" and deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert allow["Principal"] == {"Service": "cloudfront.amazonaws.com"} and allow["Action"] == "s3:GetObject"
    assert "${DashboardDistribution}" in allow["Condition"]["StringEquals"]["AWS:SourceArn"]["Fn::Sub"]
    origin = resources()["DashboardDistribution"]["Properties"]["DistributionConfig"]["Origins"][0]
    assert origin["OriginAccessControlId"] == {"Fn::GetAtt": "DashboardOriginAccess.Id"}
    behaviour = resources()["DashboardDistribution"]["Properties"]["DistributionConfig"]["DefaultCacheBehavior"]
    assert behaviour["ViewerProtocolPolicy"] == "redirect-to-https" and behaviour["AllowedMethods"] == ["GET", "HEAD"]


def test_cors_admits_only_the_distribution_and_the_authorizer_takes_the_client_id() -> None:
    api = resources()["MemoryApi"]["Properties"]
    condition, cors, otherwise = api["CorsConfiguration"]["Fn::If"]
    assert (condition, otherwise) == ("HostDashboard", {"Ref": "AWS::NoValue"})
    assert cors["AllowOrigins"] == [{"Fn::Sub": "https://${DashboardDistribution.DomainName}"}]
    assert "authorization" in cors["AllowHeaders"]
    audience = api["Auth"]["Authorizers"]["DashboardJwt"]["JwtConfiguration"]["audience"]
    assert {"Fn::If": ["HasDashboardClientId", {"Ref": "DashboardClientId"}, {"Ref": "AWS::NoValue"}]} in audience
    config = load_template()["Outputs"]["DashboardConfig"]["Value"]["Fn::Sub"]
    assert '"issuer": "${DashboardIssuer}"' in config and '"client_id": "${DashboardClientId}"' in config


def test_the_local_development_sign_in_is_no_route_of_the_template() -> None:
    paths = [
        event["Properties"].get("Path", "")
        for resource in resources().values()
        for event in resource.get("Properties", {}).get("Events", {}).values()
    ]
    assert not any("dashboard" in path or "token" in path for path in paths)


def test_cfn_lint_passes_with_the_dashboard_hosted(tmp_path: Path) -> None:
    template = hosted_template(tmp_path)
    result = subprocess.run(
        [str(Path(sys.executable).parent / "cfn-lint"), str(template)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


@needs_checkov
def test_checkov_finds_nothing_with_the_dashboard_hosted(tmp_path: Path) -> None:
    report = scan(hosted_template(tmp_path))
    assert report["summary"]["resource_count"] > len(DASHBOARD_RESOURCES)
