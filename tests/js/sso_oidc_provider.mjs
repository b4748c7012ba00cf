// A real, OpenID Certified provider (npm oidc-provider) on a loopback port, for the SSO tests.
//
//   node sso_oidc_provider.mjs '<config JSON>'
//
// config: {clients: [oidc-provider client metadata], accounts: {loginName: {claims}}}.
// Prints one JSON line {"issuer": "http://127.0.0.1:<port>"} once it listens, then serves until killed.
// The login at the OP uses oidc-provider's own development interactions (a login form and a consent
// form), which the Python tests drive with real HTTP. A login name that is not in `accounts` signs in
// with `email` = the name and `email_verified` true.
import http from 'node:http';

import Provider from 'oidc-provider';

const config = JSON.parse(process.argv[2] || '{}');
const accounts = config.accounts || {};

function claimsOf(accountId) {
  const known = accounts[accountId];
  if (known) return { sub: accountId, ...known };
  return { sub: accountId, email: accountId, email_verified: true, name: accountId };
}

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: config.clients || [],
    cookies: { keys: ['sso-tests-cookie-key'] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'picture', 'given_name', 'family_name'],
      groups: ['groups'],
    },
    scopes: ['openid', 'offline_access', 'email', 'profile', 'groups'],
    // Claims also go into the ID token, so a provider configured without a userinfo endpoint still
    // gets an e-mail from the verified ID token alone.
    conformIdTokenClaims: false,
    findAccount(ctx, id) {
      return { accountId: id, claims: () => claimsOf(id) };
    },
  });
  provider.proxy = false;
  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});

process.on('SIGTERM', () => server.close(() => process.exit(0)));
