/**
 * SigV4 for `execute-api`, by AWS's own signer (`@smithy/signature-v4`, what the AWS SDK for JavaScript
 * signs with), credentials from the SDK's standard chain (`@aws-sdk/credential-provider-node`:
 * environment, profile, SSO, web identity, container and instance roles, refreshed before they expire).
 *
 * `test/sigv4.test.ts` checks the signatures against botocore's `SigV4Auth` on fixed requests (known
 * credentials and time), byte for byte, so that both clients sign exactly as AWS documents.
 */

import { Sha256 } from "@aws-crypto/sha256-js";
import { defaultProvider } from "@aws-sdk/credential-provider-node";
import { loadConfig, NODE_REGION_CONFIG_FILE_OPTIONS, NODE_REGION_CONFIG_OPTIONS } from "@smithy/core/config";
import { SignatureV4 } from "@smithy/signature-v4";
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from "@smithy/types";

export const SERVICE = "execute-api";

export type Credentials = AwsCredentialIdentity | AwsCredentialIdentityProvider;

/** A request as it will go on the wire: `url` already percent-encoded, `body` the exact bytes' text. */
export interface OutgoingRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | undefined;
}

/** Whether `url` points at this machine (the local stack), where nothing is signed. */
export function isLoopback(url: string | URL): boolean {
  const host = new URL(url).hostname.toLowerCase();
  return host === "localhost" || host === "[::1]" || host.startsWith("127.");
}

/** The region in an `execute-api` host name: `abc123.execute-api.eu-west-1.amazonaws.com`. */
export function regionOf(url: string | URL): string | undefined {
  const labels = new URL(url).hostname.split(".");
  return labels.length >= 5 && labels[1] === SERVICE && labels.at(-2) === "amazonaws" ? labels[2] : undefined;
}

/** The SDK's own region chain (`AWS_REGION`, then the profile's `region`), or undefined when none is set. */
export async function defaultRegion(): Promise<string | undefined> {
  try {
    return await loadConfig(NODE_REGION_CONFIG_OPTIONS, NODE_REGION_CONFIG_FILE_OPTIONS)();
  } catch {
    return undefined;
  }
}

/** The standard credential chain, memoized and refreshed by the SDK as the credentials rotate. */
export function defaultCredentials(): AwsCredentialIdentityProvider {
  return defaultProvider();
}

/**
 * The headers to send for `request`: its own, plus `authorization`, `x-amz-date` and, for temporary
 * credentials, `x-amz-security-token`. Every header given is signed (with `host`, which fetch sends itself).
 */
export async function signRequest(
  request: OutgoingRequest,
  options: { region: string; credentials: Credentials; signingDate?: Date },
): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    service: SERVICE,
    region: options.region,
    credentials: options.credentials,
    sha256: Sha256,
    applyChecksum: false, // x-amz-content-sha256 is S3's; API Gateway (and botocore's SigV4Auth) do without it
  });
  const query: Record<string, string> = {};
  for (const [name, value] of request.url.searchParams) query[name] = value;
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: request.url.protocol,
      hostname: request.url.hostname,
      path: request.url.pathname,
      query,
      headers: { ...request.headers, host: request.url.host },
      body: request.body,
    },
    options.signingDate ? { signingDate: options.signingDate } : {},
  );
  const { host: _host, ...headers } = signed.headers;
  return headers;
}
