// A real OpenID Provider (panva/oidc-provider, OpenID Certified) for the social sign-in tests.
//
//   OP_PORT=0 OP_CLIENTS='[{"client_id": ..., "client_secret": ..., "redirect_uris": [...]}]' node oidc_provider.mjs
//
// Prints "READY <port>" once listening. Logins use oidc-provider's own dev interactions (a login form
// at /interaction/:uid taking any account id); consent is granted automatically, as for a first-party
// client. Accounts and their claims are registered by the tests with POST /__test/accounts
// {"<sub>": {"email": ..., "email_verified": ..., "name": ...}}; unknown subjects get no e-mail.
import http from 'node:http';

import Provider from 'oidc-provider';

const port = Number(process.env.OP_PORT || 0);
const clients = JSON.parse(process.env.OP_CLIENTS || '[]');
const accounts = new Map();

const server = http.createServer();
server.listen(port, '127.0.0.1', () => {
  const actualPort = server.address().port;
  const issuer = `http://127.0.0.1:${actualPort}`;
  const provider = new Provider(issuer, {
    clients,
    cookies: { keys: ['authservice-tests-cookie-key'] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'picture'],
    },
    features: { devInteractions: { enabled: true } },
    async findAccount(ctx, sub) {
      return {
        accountId: sub,
        async claims() {
          return { sub, ...(accounts.get(sub) || {}) };
        },
      };
    },
    // First-party client: every requested scope and claim is granted without a consent screen.
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId
        || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });
  const handle = provider.callback();
  server.on('request', (req, res) => {
    if (req.method === 'POST' && req.url === '/__test/accounts') {
      let body = '';
      req.on('data', (chunk) => { body += chunk; });
      req.on('end', () => {
        for (const [sub, claims] of Object.entries(JSON.parse(body || '{}'))) accounts.set(sub, claims);
        res.writeHead(204).end();
      });
      return;
    }
    handle(req, res);
  });
  console.log(`READY ${actualPort}`);
});
