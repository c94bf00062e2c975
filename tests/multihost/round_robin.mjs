// A tiny round-robin HTTP proxy for the multi-host test (issue 30): every
// incoming request goes to the next upstream in turn (no stickiness, no
// health checks: a dead upstream answers 502), with its method, headers and
// body; the answer (status, headers, body) is streamed back as it arrives,
// so SSE responses pass through. It records where each request went.
//
//   import { startRoundRobin } from './round_robin.mjs';
//   const rr = await startRoundRobin(['http://127.0.0.1:8001', 'http://127.0.0.1:8002']);
//   rr.url            // http://127.0.0.1:PORT (append /mcp)
//   rr.log            // [{n, upstream, method, path, mcpMethod, mcpName, status}]
//   rr.counts()       // {upstream: requests}
//   await rr.close();
//
// Standalone: node round_robin.mjs LISTEN_PORT UPSTREAM_URL... (prints its URL).
import http from 'node:http';
import { pathToFileURL } from 'node:url';

// Not forwarded either way (RFC 9110 7.6.1); node frames the bodies itself.
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization',
  'te', 'trailer', 'transfer-encoding', 'upgrade']);

function forwardable(headers) {
  const out = {};
  for (const [k, v] of Object.entries(headers)) if (!HOP.has(k.toLowerCase())) out[k] = v;
  return out;
}

export async function startRoundRobin(upstreams, { port = 0, host = '127.0.0.1' } = {}) {
  if (!upstreams.length) throw new Error('round robin: no upstream');
  const targets = upstreams.map((u) => new URL(u));
  const agent = new http.Agent({ keepAlive: true });
  const log = [];
  let next = 0;

  const server = http.createServer((req, res) => {
    const i = next;
    next = (next + 1) % targets.length;
    const t = targets[i];
    const entry = {
      n: log.length, upstream: upstreams[i], method: req.method, path: req.url,
      mcpMethod: req.headers['mcp-method'] ?? null, mcpName: req.headers['mcp-name'] ?? null, status: null,
    };
    log.push(entry);
    const up = http.request({
      host: t.hostname, port: t.port, method: req.method, path: req.url, agent,
      headers: { ...forwardable(req.headers), 'x-forwarded-for': req.socket.remoteAddress },
    }, (ur) => {
      entry.status = ur.statusCode;
      res.writeHead(ur.statusCode, ur.statusMessage, forwardable(ur.headers));
      res.flushHeaders();
      ur.pipe(res);
      ur.on('error', () => res.destroy());
    });
    up.on('error', (e) => {
      entry.status = 502;
      entry.error = e.code ?? e.message;
      if (res.headersSent) {
        res.destroy();
      } else {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`round robin: upstream ${upstreams[i]}: ${e.message}\n`);
      }
    });
    // The client went away: so does the upstream request (a cancelled call
    // or a closed SSE stream reaches the gateway).
    res.on('close', () => { if (!res.writableFinished) up.destroy(); });
    req.pipe(up);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const addr = server.address();
  return {
    url: `http://${host}:${addr.port}`,
    port: addr.port,
    log,
    counts(filter = () => true) {
      const m = Object.fromEntries(upstreams.map((u) => [u, 0]));
      for (const e of log) if (filter(e)) m[e.upstream]++;
      return m;
    },
    close() {
      agent.destroy();
      server.closeAllConnections?.();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [listen, ...ups] = process.argv.slice(2);
  if (!listen || !ups.length) {
    console.error('usage: node round_robin.mjs LISTEN_PORT UPSTREAM_URL...');
    process.exit(2);
  }
  const rr = await startRoundRobin(ups, { port: Number(listen) });
  console.log(rr.url);
  const stop = () => rr.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
