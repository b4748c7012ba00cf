// A SAML 2.0 IdP built on the npm package `samlify`, for the SAML tests (tests/sso/saml/conftest.py).
//
// Started by a pytest fixture: `node saml_idp.mjs <idp-key.pem> <idp-cert.pem>`; prints
// {"port": N} on its first stdout line and serves on 127.0.0.1:N.
//
//   POST /sp/<name>        {metadata, wantMessageSigned, wantAuthnRequestsSigned, encrypt, sigAlg,
//                           keyFile, certFile, entityID}   register an SP (our SP metadata XML)
//   GET  /metadata/<name>  the IdP metadata XML for that SP's IdP
//   GET  /sso/<name>?SAMLRequest=..&RelayState=..[&SigAlg&Signature]   SP-initiated login;
//                           header X-Login: JSON {email, nameId, attributes, ...overrides}
//   POST /idp-initiated/<name>  JSON {user, relayState}    IdP-initiated (unsolicited) login
//   GET|POST /slo/<name>   the IdP's SingleLogoutService (Redirect: query; POST: form). A LogoutRequest
//                           of ours is verified (its signature required) and answered with a signed
//                           LogoutResponse: JSON {binding, url | action+SAMLResponse+RelayState,
//                           request}; a LogoutResponse of ours is verified: JSON {response}
//   POST /idp-logout/<name> JSON {nameId, sessionIndex, binding, relayState}: an IdP-initiated, signed
//                           LogoutRequest to our SLO service: JSON {id, binding, url | action+SAMLRequest}
//
// Login answers are what a browser gets from a real IdP: an HTML form that auto-posts SAMLResponse
// (and RelayState) to the ACS named in our SP metadata. samlify signs, encrypts and validates
// the AuthnRequest itself (its redirect-binding signature included); only XML schema validation is
// a no-op here, because no schema validator package is installed for Node.
import { readFileSync } from "node:fs";
import http from "node:http";
import { randomUUID } from "node:crypto";
import * as samlify from "samlify";

samlify.setSchemaValidator({ validate: async () => "skipped" });

const [keyFile, certFile] = process.argv.slice(2);
const DEFAULT_KEY = readFileSync(keyFile, "utf8");
const DEFAULT_CERT = readFileSync(certFile, "utf8");
const SP = new Map();
const SIG = {
  sha1: "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
  sha256: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
  sha512: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
};
const REDIRECT = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";
const POST = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST";

let port = 0;
const entityID = (name, options) => options.entityID || `http://127.0.0.1:${port}/idp/${name}`;

function identityProvider(name, options) {
  return samlify.IdentityProvider({
    entityID: entityID(name, options),
    privateKey: options.keyFile ? readFileSync(options.keyFile, "utf8") : DEFAULT_KEY,
    signingCert: options.certFile ? readFileSync(options.certFile, "utf8") : DEFAULT_CERT,
    isAssertionEncrypted: Boolean(options.encrypt),
    wantAuthnRequestsSigned: Boolean(options.wantAuthnRequestsSigned),
    requestSignatureAlgorithm: SIG[options.sigAlg || "sha256"],
    singleSignOnService: [{ Binding: REDIRECT, Location: `http://127.0.0.1:${port}/sso/${name}` }],
    singleLogoutService: [
      { Binding: REDIRECT, Location: `http://127.0.0.1:${port}/slo/${name}` },
      { Binding: POST, Location: `http://127.0.0.1:${port}/slo/${name}` },
    ],
    // Our LogoutRequest and LogoutResponse must be signed (samlify checks them with our SP metadata's key).
    wantLogoutRequestSigned: true,
    wantLogoutResponseSigned: true,
  });
}

function serviceProvider(options) {
  return samlify.ServiceProvider({
    metadata: options.metadata,
    wantMessageSigned: Boolean(options.wantMessageSigned),
    // samlify signs the logout messages it sends to an SP that wants them signed.
    wantLogoutRequestSigned: true,
    wantLogoutResponseSigned: true,
  });
}

const esc = (value) =>
  String(value).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const at = (offsetSeconds) => new Date(Date.now() + offsetSeconds * 1000).toISOString();
const attr = (name, value) => (value === undefined || value === null ? "" : ` ${name}="${esc(value)}"`);

function attributeStatement(attributes) {
  const entries = Object.entries(attributes || {});
  if (!entries.length) return "";
  const body = entries
    .map(([name, value]) => {
      const values = (Array.isArray(value) ? value : [value])
        .map((v) => `<saml:AttributeValue xsi:type="xs:string">${esc(v)}</saml:AttributeValue>`)
        .join("");
      return `<saml:Attribute Name="${esc(name)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${values}</saml:Attribute>`;
    })
    .join("");
  return `<saml:AttributeStatement>${body}</saml:AttributeStatement>`;
}

// The response XML, before samlify signs/encrypts it. `user` may override any value.
function responseXml(values, user) {
  const v = { ...values, ...user.overrides };
  const times = user.omitTimes
    ? ""
    : `${attr("NotBefore", at(user.notBefore ?? -30))}${attr("NotOnOrAfter", at(user.notOnOrAfter ?? 300))}`;
  const irt = v.InResponseTo ? attr("InResponseTo", v.InResponseTo) : "";
  return (
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"` +
    ` ID="${v.ID}" Version="2.0" IssueInstant="${v.IssueInstant}"${attr("Destination", v.Destination)}${irt}>` +
    `<saml:Issuer>${esc(v.Issuer)}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="${esc(v.StatusCode)}"/></samlp:Status>` +
    `<saml:Assertion xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema"` +
    ` ID="${v.AssertionID}" Version="2.0" IssueInstant="${v.IssueInstant}">` +
    `<saml:Issuer>${esc(v.Issuer)}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="${esc(v.NameIDFormat)}">${esc(v.NameID)}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">` +
    `<saml:SubjectConfirmationData NotOnOrAfter="${at(user.notOnOrAfter ?? 300)}"${attr("Recipient", v.SubjectRecipient)}${irt}/>` +
    `</saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions${times}><saml:AudienceRestriction><saml:Audience>${esc(v.Audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${v.IssueInstant}" SessionIndex="_${randomUUID()}"><saml:AuthnContext>` +
    `<saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef>` +
    `</saml:AuthnContext></saml:AuthnStatement>` +
    attributeStatement(user.attributes) +
    `</saml:Assertion></samlp:Response>`
  );
}

async function loginResponse(name, requestInfo, user, relayState) {
  const options = SP.get(name);
  if (!options) throw Object.assign(new Error(`unknown SP ${name}`), { status: 404 });
  const idp = identityProvider(name, options);
  const sp = serviceProvider(options);
  const acs = sp.entityMeta.getAssertionConsumerService("post");
  const inResponseTo = requestInfo?.extract?.request?.id || "";
  const replace = () => {
    const values = {
      ID: `_${randomUUID()}`,
      AssertionID: `_${randomUUID()}`,
      Destination: acs,
      Audience: sp.entityMeta.getEntityID(),
      SubjectRecipient: acs,
      Issuer: idp.entityMeta.getEntityID(),
      IssueInstant: new Date().toISOString(),
      StatusCode: "urn:oasis:names:tc:SAML:2.0:status:Success",
      NameIDFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
      NameID: user.nameId || user.email,
      InResponseTo: inResponseTo,
    };
    return { id: values.ID, context: responseXml(values, user) };
  };
  // Encrypt, then sign the message: signing first would leave a Response signature over the plaintext.
  const encryptThenSign = Boolean(options.encrypt);
  const result = await idp.createLoginResponse(sp, requestInfo || {}, "post", user, replace, encryptThenSign);
  return { action: acs, SAMLResponse: result.context, RelayState: relayState, inResponseTo };
}

function form({ action, SAMLResponse, RelayState }) {
  const relay = RelayState ? `<input type="hidden" name="RelayState" value="${esc(RelayState)}"/>` : "";
  return (
    `<!DOCTYPE html><html><body onload="document.forms[0].submit()">` +
    `<form method="post" action="${esc(action)}"><input type="hidden" name="SAMLResponse" value="${SAMLResponse}"/>` +
    `${relay}<noscript><button type="submit">Continue</button></noscript></form></body></html>`
  );
}

// The raw, still-encoded query parts in their original order: what the redirect signature covers.
function octetString(rawQuery, message = "SAMLRequest") {
  const wanted = [message, "RelayState", "SigAlg"];
  return rawQuery
    .split("&")
    .filter((part) => wanted.includes(part.split("=")[0]))
    .join("&");
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : {};
}

async function handle(req, res) {
  const url = new URL(req.url, `http://127.0.0.1:${port}`);
  const [, kind, name] = url.pathname.split("/");
  if (req.method === "POST" && kind === "sp") {
    SP.set(name, await readJson(req));
    return send(res, 200, "application/json", JSON.stringify({ entityID: entityID(name, SP.get(name)) }));
  }
  if (req.method === "GET" && kind === "metadata") {
    const options = SP.get(name) || {};
    return send(res, 200, "application/xml", identityProvider(name, options).getMetadata());
  }
  if (req.method === "GET" && kind === "sso") {
    const options = SP.get(name);
    if (!options) return send(res, 404, "text/plain", "unknown SP");
    const query = Object.fromEntries(url.searchParams.entries());
    const rawQuery = req.url.split("?")[1] || "";
    const info = await identityProvider(name, options).parseLoginRequest(serviceProvider(options), "redirect", {
      query,
      octetString: octetString(rawQuery),
    });
    const user = JSON.parse(req.headers["x-login"] || "{}");
    const answer = await loginResponse(name, info, user, query.RelayState);
    if ((req.headers.accept || "").includes("application/json")) {
      return send(res, 200, "application/json", JSON.stringify({ ...answer, request: info.extract.request }));
    }
    return send(res, 200, "text/html", form(answer));
  }
  if (req.method === "POST" && kind === "idp-initiated") {
    const body = await readJson(req);
    const answer = await loginResponse(name, null, body.user || {}, body.relayState);
    return send(res, 200, "text/html", form(answer));
  }
  if (kind === "slo") return singleLogout(req, res, url, name);
  if (req.method === "POST" && kind === "idp-logout") {
    const options = SP.get(name);
    if (!options) return send(res, 404, "text/plain", "unknown SP");
    const body = await readJson(req);
    const binding = body.binding || "redirect";
    const made = identityProvider(name, options).createLogoutRequest(
      serviceProvider(options), binding, { logoutNameID: body.nameId, sessionIndex: body.sessionIndex },
      { relayState: body.relayState || "" });
    const answer = binding === "redirect"
      ? { id: made.id, binding, url: made.context }
      : { id: made.id, binding, action: made.entityEndpoint, SAMLRequest: made.context, RelayState: made.relayState };
    return send(res, 200, "application/json", JSON.stringify(answer));
  }
  return send(res, 404, "text/plain", "not found");
}

// Our SP's LogoutRequest or LogoutResponse, over either binding; samlify verifies its signature.
async function singleLogout(req, res, url, name) {
  const options = SP.get(name);
  if (!options) return send(res, 404, "text/plain", "unknown SP");
  const idp = identityProvider(name, options);
  const sp = serviceProvider(options);
  const binding = req.method === "POST" ? "post" : "redirect";
  const rawQuery = req.url.split("?")[1] || "";
  const query = Object.fromEntries(url.searchParams.entries());
  const body = binding === "post" ? Object.fromEntries(new URLSearchParams(await readText(req))) : {};
  const params = binding === "post" ? body : query;
  const request = { query, body, octetString: octetString(rawQuery, params.SAMLResponse ? "SAMLResponse" : "SAMLRequest") };
  if (params.SAMLResponse) {
    const info = await idp.parseLogoutResponse(sp, binding, request);
    return send(res, 200, "application/json", JSON.stringify({ response: info.extract }));
  }
  const info = await idp.parseLogoutRequest(sp, binding, request);
  const made = idp.createLogoutResponse(sp, info, binding, { relayState: params.RelayState || "" });
  const answer = binding === "redirect"
    ? { binding, url: made.context }
    : { binding, action: made.entityEndpoint, SAMLResponse: made.context, RelayState: made.relayState };
  return send(res, 200, "application/json", JSON.stringify({ ...answer, request: info.extract }));
}

async function readText(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

function send(res, status, type, body) {
  res.writeHead(status, { "content-type": type });
  res.end(body);
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((error) => send(res, error.status || 400, "text/plain", String(error?.stack || error)));
});
server.listen(0, "127.0.0.1", () => {
  port = server.address().port;
  process.stdout.write(JSON.stringify({ port }) + "\n");
});
