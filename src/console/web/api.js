// api.js — the console's JSON API client. Every URL is relative ("api/..."), so the console
// works under any prefix. Same-origin cookies, no caching; every POST carries
// Content-Type: application/json and the CSRF token, which lives only in this module's
// variable (never in storage or cookies). A non-2xx answer is thrown as an ApiError with
// .status and the server's {"error"} message; a 401 also tells the app (sign-in page).

let csrf = '';
let unauthorized = () => {};

export function setCsrf(token) {
  csrf = typeof token === 'string' ? token : '';
}

// fn(message) is called on every 401 (not signed in, session expired).
export function onUnauthorized(fn) {
  unauthorized = fn;
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

// Percent-encodes one path segment (an id from the data).
export const seg = (s) => encodeURIComponent(String(s));

async function request(method, path, { query, body, headers = {}, quiet401 = false } = {}) {
  let url = 'api/' + path;
  if (query) {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined && v !== null && v !== '') qs.set(k, String(v));
    }
    const s = qs.toString();
    if (s) url += '?' + s;
  }
  const init = {
    method,
    credentials: 'same-origin',
    cache: 'no-store',
    headers: { Accept: 'application/json', ...headers },
  };
  if (method !== 'GET') {
    init.headers['Content-Type'] = 'application/json';
    if (csrf) init.headers['X-CSRF-Token'] = csrf;
    init.body = body === undefined ? '' : JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(url, init);
  } catch (e) {
    throw new ApiError(0, `cannot reach the server (${e.message})`);
  }
  const text = await res.text().catch(() => '');
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!res.ok) {
    const msg = data && typeof data.error === 'string' && data.error
      ? data.error : `${res.status} ${res.statusText || 'error'}`;
    if (res.status === 401 && !quiet401) unauthorized(msg);
    throw new ApiError(res.status, msg);
  }
  if (text && data === null) throw new ApiError(res.status, 'the server answered with something that is not JSON');
  return data ?? {};
}

export const get = (path, query, opts) => request('GET', path, { ...opts, query });
export const post = (path, body, opts) => request('POST', path, { ...opts, body });
