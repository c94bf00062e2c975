// router.js — hash routing (#/page/arg?query=...). Matches the hash against the route table,
// unmounts the previous page (its cleanup stops timers), and mounts the new one with a
// context: the route's params and query, alive() (false once the user navigated away, so late
// answers are dropped), fail(err) (shows an error unless it was a 401, handled by the app).

import { showError } from './dom.js';

export function parseHash(hash) {
  const raw = String(hash || '').replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  const segments = path.split('/').filter(Boolean).map((s) => {
    try { return decodeURIComponent(s); } catch { return s; }
  });
  return { segments, query };
}

// Pattern ['audit', 'run', ':id'] against segments: the ':' parts as params, or null.
function match(pattern, segments) {
  if (pattern.length !== segments.length) return null;
  const params = [];
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i].startsWith(':')) params.push(segments[i]);
    else if (pattern[i] !== segments[i]) return null;
  }
  return params;
}

export class Router {
  // routes: [{path: ['proposals', ':id'], nav: 'proposals', mount(outlet, ctx) -> cleanup?}]
  // onRoute(route): called before each page mounts. fallback: the hash for unknown routes.
  constructor(outlet, routes, { onRoute = () => {}, fallback = '#/proposals', context = {} } = {}) {
    this.outlet = outlet;
    this.routes = routes;
    this.onRoute = onRoute;
    this.fallback = fallback;
    this.context = context;
    this.cleanup = null;
    this.token = 0;
    this.listening = false;
    this.listener = () => this.render();
  }

  start() {
    if (!this.listening) {
      window.addEventListener('hashchange', this.listener);
      this.listening = true;
    }
    this.render();
  }

  stop() {
    if (this.listening) window.removeEventListener('hashchange', this.listener);
    this.listening = false;
    this.unmount();
  }

  unmount() {
    this.token++;
    const cleanup = this.cleanup;
    this.cleanup = null;
    if (cleanup) {
      try { cleanup(); } catch (e) { console.error(e); }
    }
    this.outlet.replaceChildren();
  }

  render() {
    const { segments, query } = parseHash(location.hash);
    let route = null;
    let params = null;
    for (const r of this.routes) {
      params = match(r.path, segments);
      if (params) { route = r; break; }
    }
    if (!route) {
      if (location.hash !== this.fallback) location.replace(this.fallback);  // hashchange renders it
      return;
    }
    this.unmount();
    const token = this.token;
    const ctx = {
      ...this.context,
      params,
      query,
      alive: () => token === this.token,
      fail: (err) => {
        if (token !== this.token || (err && err.status === 401)) return;
        showError(err && err.message ? err.message : String(err));
      },
    };
    this.onRoute(route);
    const cleanup = route.mount(this.outlet, ctx);
    this.cleanup = typeof cleanup === 'function' ? cleanup : null;
  }
}
