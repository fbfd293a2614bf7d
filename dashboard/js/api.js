// The memory API (docs/api.md §5): every call goes through `request`, and every failure becomes an ApiError
// whose message is the API's own ({"error": {"code", "message"}}), so the page can always show it.

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** The page's settings: `config.json` beside the page (the local stack serves it; in AWS it is uploaded). */
export async function loadConfig() {
  let response;
  try {
    response = await fetch('config.json', { cache: 'no-store' });
  } catch (error) {
    throw new ApiError(0, 'unreachable', `Cannot load the page's configuration: ${error.message}`);
  }
  if (!response.ok) {
    throw new ApiError(response.status, 'no_config', `Cannot load the page's configuration (HTTP ${response.status}).`);
  }
  const config = await response.json();
  return { mode: 'local', api_base_url: '', ...config };
}

/** The API's error as an ApiError: its message when it sent one, else what HTTP says. */
export async function errorFrom(response) {
  let body = null;
  const text = await response.text();
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  const error = body && typeof body === 'object' ? body.error : null;
  if (error && typeof error.message === 'string') {
    return new ApiError(response.status, error.code || 'error', error.message, body.details || error.details);
  }
  const reason = response.statusText ? ` ${response.statusText}` : '';
  return new ApiError(response.status, 'http_error', `The memory API answered HTTP ${response.status}${reason}.`);
}

export class Api {
  /** @param {string} baseUrl the API's origin ('' for the page's own), @param {() => string|null} token */
  constructor(baseUrl, token, onUnauthorized) {
    this.baseUrl = baseUrl.replace(/\/$/, '');
    this.token = token;
    this.onUnauthorized = onUnauthorized;
  }

  async request(method, path, body) {
    const headers = { accept: 'application/json' };
    const token = this.token();
    if (token) headers.authorization = `Bearer ${token}`;
    const init = { method, headers };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(this.baseUrl + path, init);
    } catch (error) {
      throw new ApiError(0, 'unreachable', `Cannot reach the memory API: ${error.message}`);
    }
    if (response.status === 204) return null;
    if (!response.ok) {
      const error = await errorFrom(response);
      if (error.status === 401 && this.onUnauthorized) this.onUnauthorized(error);
      throw error;
    }
    try {
      return await response.json();
    } catch {
      throw new ApiError(response.status, 'bad_answer', 'The memory API answered something that is not JSON.');
    }
  }
}

/** `{base}` of docs/api.md §5 for a memory: personal (the token's subject) or a workspace's team memory. */
export function memoryBase(memory) {
  return memory.kind === 'personal'
    ? '/v1/memory/personal'
    : `/v1/memory/workspaces/${encodeURIComponent(memory.workspace)}`;
}

export function query(params) {
  const pairs = Object.entries(params).filter(([, value]) => value !== undefined && value !== null && value !== '');
  return pairs.length ? `?${new URLSearchParams(pairs).toString()}` : '';
}
