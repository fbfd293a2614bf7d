// Who is signed in: the bearer token kept for this browser tab (sessionStorage), and its claims as the page
// reads them to build the memory picker. The API checks the token; the page only decodes it.

const TOKEN_KEY = 'agent-memory.token';
const ID_PATTERN = /^[A-Za-z0-9._@-]{1,128}$/;

export function base64UrlDecode(text) {
  const padded = text.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(text.length / 4) * 4, '=');
  const bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

/** The payload of a JWT, unverified (the API verifies it). Null when the token is not a JWT. */
export function jwtClaims(token) {
  const parts = typeof token === 'string' ? token.split('.') : [];
  if (parts.length !== 3) return null;
  try {
    const claims = JSON.parse(base64UrlDecode(parts[1]));
    return claims && typeof claims === 'object' ? claims : null;
  } catch {
    return null;
  }
}

/** The `workspaces` claim in any shape docs/api.md §5 accepts: an array, or ids separated by spaces or commas, maybe in brackets. */
export function parseWorkspaces(value) {
  let items = [];
  if (Array.isArray(value)) {
    items = value.every((item) => typeof item === 'string') ? value : [];
  } else if (typeof value === 'string') {
    let text = value.trim();
    if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
    items = text.split(/[\s,]+/).filter(Boolean);
  }
  return [...new Set(items.filter((item) => ID_PATTERN.test(item)))];
}

export function storedToken() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const claims = jwtClaims(token);
  if (!claims) return null;
  if (typeof claims.exp === 'number' && claims.exp * 1000 < Date.now()) {
    sessionStorage.removeItem(TOKEN_KEY);
    return null;
  }
  return token;
}

export function storeToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** What the page shows of the signed-in user: their id, the workspaces of the picker, the operator flag. */
export function currentUser() {
  const token = storedToken();
  const claims = jwtClaims(token);
  if (!claims) return null;
  return {
    sub: String(claims.sub ?? ''),
    workspaces: parseWorkspaces(claims.workspaces),
    admin: claims.memory_admin === true,
  };
}
