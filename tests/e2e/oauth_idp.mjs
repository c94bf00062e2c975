// A real OAuth 2.1 / OpenID authorization server for the e2e tests:
// oidc-provider 9 (a certified OpenID Provider) on 127.0.0.1 and a free
// port. JWT access tokens through resource indicators (RFC 8707), the
// client credentials grant, two RSA signing keys. Test-only extra: POST
// /__rotate swaps in a provider whose JWKS starts with a new key (signing
// with it), the old keys kept, at the same issuer - key rotation.
// Resources named in `opaqueResources` get opaque access tokens instead,
// which a resource server checks at the token introspection endpoint
// (RFC 7662, client `introspector`) and a client revokes (RFC 7009).
//
// With `consoleRedirectUri`, the provider also has the operators' console
// as a confidential client (CONSOLE_CLIENT: authorization code + PKCE,
// client_secret_basic, that one redirect URI) and its dev interaction pages
// (a login form taking any login name, then consent). An account whose
// login name starts with "admin" has groups ["airlock-admins"], one
// starting with "guest" ["guests"], any other ["staff"]; the claims go into
// the ID token.
//
// With `registration`, MCP clients register themselves (RFC 7591 dynamic
// client registration, open: no initial access token) and sign users in
// with the authorization code grant + PKCE on the same dev interaction
// pages; a signed-in user's JWT access tokens carry its `groups`.
//
//   const idp = await startIdp({ resource: 'http://127.0.0.1:PORT/mcp', opaqueResources: [...] });
//   idp.issuer; await idp.rotate(); await idp.revoke(CLIENTS.user, token); await idp.close();
//   await startIdp({ resource, consoleRedirectUri: 'http://127.0.0.1:PORT/console/sso/callback' });
//   await startIdp({ resource, registration: true });
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
  // airlock's own client, with which it introspects opaque tokens
  introspector: { id: 'airlock-rs', secret: 'rs-secret-0123456789abcdef0123', scope: 'other' },
};

// The console's single sign-on client (server.http.console.sso).
export const CONSOLE_CLIENT = { id: 'airlock-console', secret: 'console-secret-0123456789abcdef01' };
export const ADMIN_GROUP = 'airlock-admins';

// An account of the dev login form: any login name.
const groupsOf = (id) => {
  if (id.startsWith('admin')) return [ADMIN_GROUP];
  return id.startsWith('guest') ? ['guests'] : ['staff'];
};
function findAccount(ctx, id) {
  return {
    accountId: id,
    claims: () => ({
      sub: id,
      name: `User ${id}`,
      email: `${id}@example.test`,
      groups: groupsOf(id),
    }),
  };
}

export async function startIdp({ resource, opaqueResources = [], port = 0, consoleRedirectUri = '', idTokenTtl = 3600,
  registration = false }) {
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
    const clients = Object.values(CLIENTS).map((c) => ({
      client_id: c.id,
      client_secret: c.secret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: c.scope,
    }));
    if (consoleRedirectUri) {
      clients.push({
        client_id: CONSOLE_CLIENT.id,
        client_secret: CONSOLE_CLIENT.secret,
        grant_types: ['authorization_code'],
        redirect_uris: [consoleRedirectUri],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      });
    }
    const p = new Provider(issuer, {
      clients,
      jwks: { keys },
      // offline_access: the refresh_token grant, which MCP clients register for
      scopes: ['openid', 'mcp:use', 'other', ...(registration ? ['offline_access'] : [])],
      findAccount,
      claims: { openid: ['sub'], profile: ['name', 'groups'], email: ['email'] },
      conformIdTokenClaims: false,  // profile and email claims in the ID token too
      ttl: { IdToken: idTokenTtl },
      // a signed-in user's groups in its JWT access tokens (client credentials tokens have no account)
      ...(registration ? { extraTokenClaims: (ctx, token) => (token.accountId ? { groups: groupsOf(token.accountId) } : undefined) } : {}),
      features: {
        devInteractions: { enabled: Boolean(consoleRedirectUri) || registration },
        registration: { enabled: registration },
        clientCredentials: { enabled: true },
        // only airlock's own client may introspect; a client revokes its own tokens
        introspection: { enabled: true, allowedPolicy: (ctx, client) => client.clientId === CLIENTS.introspector.id },
        revocation: { enabled: true, allowedPolicy: (ctx, client, token) => token.clientId === client.clientId },
        resourceIndicators: {
          enabled: true,
          // the console's sign-in asks for no resource: its access token is the userinfo one
          defaultResource: (ctx, client) => (client?.clientId === CONSOLE_CLIENT.id ? undefined : resource),
          useGrantedResource: () => true,
          getResourceServerInfo: (ctx, indicator) => (opaqueResources.includes(indicator)
            ? { scope: 'mcp:use other', audience: indicator, accessTokenTTL: 600, accessTokenFormat: 'opaque' }
            : {
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
    // RFC 7009 revocation of `token` by the client it was issued to.
    async revoke(client, token) {
      const r = await fetch(`${issuer}/token/revocation`, {
        method: 'POST',
        headers: {
          authorization: 'Basic ' + Buffer.from(`${client.id}:${client.secret}`).toString('base64'),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
      });
      if (!r.ok) throw new Error(`revoke: ${r.status} ${await r.text()}`);
    },
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
  };
}
