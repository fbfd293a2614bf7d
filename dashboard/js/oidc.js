// Sign-in with the deployment's OIDC provider: authorization code with PKCE (RFC 7636, S256), for a public
// client (no secret in the page). The issuer and client id come from config.json; the endpoints from the
// issuer's discovery document. The API's JWT authorizer checks the same issuer and the client id as audience.

import { jwtClaims } from './session.js';

const FLOW_KEY = 'agent-memory.oidc-flow';

export function base64UrlEncode(bytes) {
  let binary = '';
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A high-entropy random string (43 characters for 32 bytes): the code verifier, the state, the nonce. */
export function randomToken(bytes = 32) {
  return base64UrlEncode(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** The S256 code challenge of a verifier: BASE64URL(SHA-256(ASCII(verifier))). */
export async function codeChallenge(verifier) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64UrlEncode(digest);
}

export function redirectUri() {
  return new URL('callback', document.baseURI).href;
}

/** The issuer's discovery document; its issuer must be the configured one (OpenID Connect Discovery §4.3). */
export async function discover(issuer) {
  const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  let response;
  try {
    response = await fetch(url, { headers: { accept: 'application/json' } });
  } catch (error) {
    throw new Error(`Cannot reach the sign-in provider at ${url}: ${error.message}`);
  }
  if (!response.ok) throw new Error(`The sign-in provider's discovery document answered HTTP ${response.status}.`);
  const metadata = await response.json();
  if (metadata.issuer?.replace(/\/$/, '') !== issuer.replace(/\/$/, '')) {
    throw new Error(`The sign-in provider says its issuer is ${metadata.issuer}, not ${issuer}.`);
  }
  for (const field of ['authorization_endpoint', 'token_endpoint']) {
    if (typeof metadata[field] !== 'string') throw new Error(`The sign-in provider publishes no ${field}.`);
  }
  return metadata;
}

/** Leave for the provider's sign-in page, remembering the verifier, the state and the nonce for the way back. */
export async function beginSignIn(config, returnTo) {
  const metadata = await discover(config.issuer);
  const flow = { verifier: randomToken(), state: randomToken(), nonce: randomToken(), returnTo };
  sessionStorage.setItem(FLOW_KEY, JSON.stringify(flow));
  const url = new URL(metadata.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: config.client_id,
    redirect_uri: redirectUri(),
    scope: config.scopes || 'openid profile',
    state: flow.state,
    nonce: flow.nonce,
    code_challenge: await codeChallenge(flow.verifier),
    code_challenge_method: 'S256',
  }).toString();
  window.location.assign(url.href);
}

/**
 * Back from the provider at /dashboard/callback?code=...&state=...: check the state, exchange the code (with
 * the verifier) at the token endpoint, check the ID token's issuer, audience and nonce, and return the token
 * the API takes (`config.api_token`: "id_token", the default, or "access_token") and where to go next.
 */
export async function completeSignIn(config, location) {
  const params = new URL(location).searchParams;
  const flow = JSON.parse(sessionStorage.getItem(FLOW_KEY) || 'null');
  sessionStorage.removeItem(FLOW_KEY);
  if (params.get('error')) {
    throw new Error(`The sign-in provider refused: ${params.get('error_description') || params.get('error')}`);
  }
  if (!flow || !params.get('state') || params.get('state') !== flow.state) {
    throw new Error('This sign-in answer does not belong to a sign-in started here (state mismatch). Sign in again.');
  }
  const code = params.get('code');
  if (!code) throw new Error('The sign-in provider sent no authorization code.');
  const metadata = await discover(config.issuer);
  let response;
  try {
    response = await fetch(metadata.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri(),
        client_id: config.client_id,
        code_verifier: flow.verifier,
      }).toString(),
    });
  } catch (error) {
    throw new Error(`Cannot reach the sign-in provider's token endpoint: ${error.message}`);
  }
  const tokens = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new Error(`The sign-in provider refused the code: ${tokens.error_description || tokens.error || response.status}`);
  }
  const claims = jwtClaims(tokens.id_token);
  if (!claims) throw new Error('The sign-in provider sent no ID token.');
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (claims.iss?.replace(/\/$/, '') !== config.issuer.replace(/\/$/, '')) {
    throw new Error('The ID token was issued by another provider.');
  }
  if (!audiences.includes(config.client_id)) throw new Error('The ID token is for another application.');
  if (claims.nonce !== flow.nonce) throw new Error('The ID token does not answer this sign-in (nonce mismatch).');
  const token = config.api_token === 'access_token' ? tokens.access_token : tokens.id_token;
  if (!token) throw new Error(`The sign-in provider sent no ${config.api_token}.`);
  return { token, returnTo: flow.returnTo || '' };
}
