// airlock serve --http with its own HTTPS (server.http.tls): the official
// SDK client connects over https:// (trusting the test's self-signed
// certificate through NODE_EXTRA_CA_CERTS), plain http:// to the port gets
// nothing, and SIGHUP puts a renewed certificate in force for new
// connections while a broken one is refused and the old one stays.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';

import { E2E_DIR, startHttpServer, waitFor } from './helpers.mjs';

// A self-signed certificate for 127.0.0.1 (its own CA), via the openssl CLI.
function makeCert(dir, cn, serial) {
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
    '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
    '-subj', `/CN=${cn}`, '-set_serial', serial, '-addext', 'subjectAltName=IP:127.0.0.1',
  ], { stdio: 'ignore' });
}

// The certificate a new TLS connection to `port` is served (trusting `ca`).
function peerCert(port, ca) {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, ca, servername: undefined }, () => {
      const cert = s.getPeerCertificate();
      s.end();
      resolve(cert);
    });
    s.on('error', reject);
  });
}

function get(url, options = {}) {
  return new Promise((resolve, reject) => {
    https.get(url, options, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    }).on('error', reject);
  });
}

describe('https: airlock serve with server.http.tls', () => {
  let dir;
  let server;
  let ca;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'airlock-https-'));
    makeCert(dir, 'airlock-e2e-one', '0x0a01');
    ca = readFileSync(path.join(dir, 'cert.pem'));
    const cfg = path.join(dir, 'airlock.json');
    writeFileSync(cfg, JSON.stringify({
      server: { http: { tls: { cert_file: path.join(dir, 'cert.pem'), key_file: path.join(dir, 'key.pem') } } },
    }));
    server = await startHttpServer({ args: ['--config', cfg, '--state-dir', path.join(dir, 'state')] });
  });
  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('prints an https:// URL and the certificate', async () => {
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+\/mcp$/);
    // The start-up is known from the URL line; the certificate's line is
    // the next write and may still be on its way on a loaded machine.
    const certLine = /TLS 1\.2\+ with subject \/CN=airlock-e2e-one, serial 0A01/;
    for (const t0 = Date.now(); !certLine.test(server.stderr()) && Date.now() - t0 < 5000;) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(server.stderr(), certLine);
  });

  it('the SDK client lists tools and runs code over https', async () => {
    const out = await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(E2E_DIR, 'https_client.mjs'), server.url], {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(dir, 'cert.pem') },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => { stdout += d; });
      child.stderr.on('data', (d) => { stderr += d; });
      child.on('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`client exited ${code}: ${stderr}`))));
    });
    const r = JSON.parse(out.trim().split('\n').pop());
    assert.ok(r.tools.includes('run_code'), out);
    assert.equal(r.isError, false, out);
    assert.match(r.text, /hello over https/);
  });

  it('serves /healthz over https and nothing over plain http', async () => {
    const res = await get(`https://127.0.0.1:${server.port}/healthz`, { ca });
    assert.equal(res.status, 200);
    await assert.rejects(fetch(`http://127.0.0.1:${server.port}/healthz`, { signal: AbortSignal.timeout(5000) }));
    // Without the CA the client refuses the self-signed certificate.
    await assert.rejects(get(`https://127.0.0.1:${server.port}/healthz`));
  });

  it('SIGHUP: a renewed certificate counts for new connections; a broken one is refused', async () => {
    assert.equal((await peerCert(server.port, ca)).subject.CN, 'airlock-e2e-one');
    makeCert(dir, 'airlock-e2e-two', '0x0a02');
    const ca2 = readFileSync(path.join(dir, 'cert.pem'));
    server.proc.kill('SIGHUP');
    assert.ok(await waitFor(() => /TLS certificate reloaded, new connections get subject \/CN=airlock-e2e-two/.test(server.stderr()), 10000), server.stderr());
    const cert = await peerCert(server.port, ca2);
    assert.equal(cert.subject.CN, 'airlock-e2e-two');
    assert.equal(cert.serialNumber, '0A02');

    writeFileSync(path.join(dir, 'cert.pem'), 'not a certificate\n');
    server.proc.kill('SIGHUP');
    assert.ok(await waitFor(() => /warning: SIGHUP: the TLS certificate was not reloaded, the old one stays/.test(server.stderr()), 10000), server.stderr());
    assert.equal((await peerCert(server.port, ca2)).subject.CN, 'airlock-e2e-two');
    assert.equal((await get(`https://127.0.0.1:${server.port}/healthz`, { ca: ca2 })).status, 200);
  });
});
