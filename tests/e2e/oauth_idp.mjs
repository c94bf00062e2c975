// A real OAuth 2.1 / OpenID authorization server for the e2e tests:
// oidc-provider 9 (a certified OpenID Provider) on 127.0.0.1 and a free
// port. JWT access tokens through resource indicators (RFC 8707), the
// client credentials grant, two RSA signing keys. Test-only extra: POST
// /__rotate swaps in a provider whose JWKS starts with a new key (signing
// with it), the old keys kept, at the same issuer - key rotation.
//
//   const idp = await startIdp({ resource: 'http://127.0.0.1:PORT/mcp' });
//   idp.issuer; await idp.rotate(); await idp.close();
import http from 'node:http';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import Provider from 'oidc-provider';

function rsaJwk() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'RS256', use: 'sig' };
}

export const CLIENTS = {
  // scope mcp:use → role reader in the test config
  user: { id: 'e2e-user', secret: 'user-secret-0123456789abcdef', scope: 'mcp:use' },
  // allowed only "openid": matches no role rule → 403
  nobody: { id: 'e2e-nobody', secret: 'nobody-secret-0123456789abcd', scope: 'other' },
};

export async function startIdp({ resource, port = 0 }) {
  let keys = [rsaJwk(), rsaJwk()];
  let provider;
  let issuer;
  const server = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/__rotate') {
      keys = [rsaJwk(), ...keys];
      provider = build();
      res.end('rotated');
      return;
    }
    provider.callback()(req, res);
  });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  issuer = `http://127.0.0.1:${server.address().port}`;

  function build() {
    const p = new Provider(issuer, {
      clients: Object.values(CLIENTS).map((c) => ({
        client_id: c.id,
        client_secret: c.secret,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        token_endpoint_auth_method: 'client_secret_basic',
        scope: c.scope,
      })),
      jwks: { keys },
      scopes: ['openid', 'mcp:use', 'other'],
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        introspection: { enabled: true },
        revocation: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => resource,
          useGrantedResource: () => true,
          getResourceServerInfo: (ctx, indicator) => ({
            scope: 'mcp:use other',
            audience: indicator,
            accessTokenTTL: 600,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          }),
        },
      },
    });
    p.proxy = false;
    return p;
  }
  provider = build();

  return {
    issuer,
    keys: () => keys,
    async rotate() {
      const r = await fetch(`${issuer}/__rotate`, { method: 'POST' });
      if (!r.ok) throw new Error(`rotate: ${r.status}`);
    },
    // A client credentials token for `client` (CLIENTS.*) and `aud`.
    async token(client, { scope = client.scope, aud = resource } = {}) {
      const body = new URLSearchParams({ grant_type: 'client_credentials', scope, resource: aud });
      const r = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: 'Basic ' + Buffer.from(`${client.id}:${client.secret}`).toString('base64'),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body,
      });
      const j = await r.json();
      if (!r.ok) throw new Error(`token: ${r.status} ${JSON.stringify(j)}`);
      return j.access_token;
    },
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
  };
}
