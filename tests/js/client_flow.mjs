// Drive a server with better-auth's own JavaScript client, as a browser SPA would.
//
//   node tests/js/client_flow.mjs http://127.0.0.1:8000
//
// The argument is the server's public origin (the client adds the default base path /api/auth).
// Every request carries an Origin header equal to it, and each simulated browser keeps its own
// cookies. The server needs e-mail and password sign-in with auto sign-in and its rate limiter off
// (the flow signs in four times within seconds). Prints a JSON summary; exits 1 on the first
// mismatch, naming the step, what was expected and what came back.
import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { createAuthClient } from "better-auth/client";
import { CookieJar, browserFetch } from "./cookie_jar.mjs";

const baseURL = process.argv[2];
if (!baseURL) {
  console.error("usage: node client_flow.mjs <server origin, e.g. http://127.0.0.1:8000>");
  process.exit(2);
}
const origin = new URL(baseURL).origin;
const { version } = JSON.parse(
  readFileSync(new URL("./node_modules/better-auth/package.json", import.meta.url), "utf8"),
);

class Mismatch extends Error {}

// The HTTP status of the latest response, so the summary shows what the server really answered.
let lastStatus = null;

/** A better-auth client with its own cookie jar, sending Origin like a browser page on `origin`. */
function browser() {
  const jar = new CookieJar();
  const client = createAuthClient({
    baseURL,
    fetchOptions: {
      customFetchImpl: browserFetch(jar, origin, (response) => { lastStatus = response.status; }),
    },
  });
  return { client, jar };
}

const steps = [];

function check(condition, step, expected, got) {
  if (!condition) {
    throw new Mismatch(`${step}: expected ${expected}, got ${JSON.stringify(got)}`);
  }
}

/** Run one client call, record it, and fail unless it succeeded (or failed, when `fails` is set). */
async function step(name, call, { fails = false } = {}) {
  lastStatus = null;
  const result = await call();
  steps.push({ step: name, status: lastStatus, code: result.error?.code ?? null });
  if (fails) check(result.error, name, "an error", result);
  else check(!result.error, name, "success", result.error);
  return result;
}

async function flow() {
  const email = `e2e-${Date.now()}-${randomBytes(4).toString("hex")}@example.com`;
  const name = "E2E Client";
  const password = `first ${randomBytes(8).toString("hex")}`;
  const newPassword = `second ${randomBytes(8).toString("hex")}`;
  const a = browser();
  const b = browser();

  const signUp = await step("signUp.email", () => a.client.signUp.email({ email, password, name }));
  const userId = signUp.data.user?.id;
  check(typeof signUp.data.token === "string" && signUp.data.token, "signUp.email", "a session token", signUp.data);
  check(signUp.data.user.email === email && signUp.data.user.name === name, "signUp.email", `user ${email}`,
    signUp.data.user);
  check(a.jar.has("session_token"), "signUp.email", "a session_token cookie", a.jar.header());

  const session = await step("getSession", () => a.client.getSession());
  check(session.data?.user?.id === userId && session.data.session.userId === userId, "getSession",
    `the session of user ${userId}`, session.data);
  check(session.data.session.token === signUp.data.token, "getSession", "the sign-up session", session.data);

  const signOut = await step("signOut", () => a.client.signOut());
  check(signOut.data?.success === true, "signOut", "{success: true}", signOut.data);
  check(!a.jar.has("session_token"), "signOut", "the session cookie cleared", a.jar.header());

  const afterSignOut = await step("getSession after signOut", () => a.client.getSession());
  check(afterSignOut.data === null, "getSession after signOut", "null", afterSignOut.data);

  const first = await step("signIn.email", () => a.client.signIn.email({ email, password }));
  check(first.data.user?.id === userId && first.data.token, "signIn.email", `a session of ${userId}`, first.data);
  check(first.data.redirect === false && !("url" in first.data), "signIn.email", "redirect false, no url",
    first.data);

  const second = await step("signIn.email (second browser)", () => b.client.signIn.email({ email, password }));
  check(second.data.token && second.data.token !== first.data.token, "signIn.email (second browser)",
    "a second session", second.data);

  const both = await step("listSessions", () => a.client.listSessions());
  const bothTokens = (both.data ?? []).map((s) => s.token).sort();
  check(bothTokens.length === 2 && bothTokens.join() === [first.data.token, second.data.token].sort().join(),
    "listSessions", "the two sessions", both.data);

  const revoked = await step("revokeOtherSessions", () => a.client.revokeOtherSessions());
  check(revoked.data?.status === true, "revokeOtherSessions", "{status: true}", revoked.data);

  const one = await step("listSessions after revokeOtherSessions", () => a.client.listSessions());
  check(one.data?.length === 1 && one.data[0].token === first.data.token,
    "listSessions after revokeOtherSessions", "only the first session", one.data);

  const secondGone = await step("getSession in the second browser", () => b.client.getSession());
  check(secondGone.data === null, "getSession in the second browser", "null (revoked)", secondGone.data);

  const changed = await step("changePassword",
    () => a.client.changePassword({ currentPassword: password, newPassword }));
  check(changed.data?.token === null && changed.data.user?.id === userId, "changePassword",
    "{token: null, user}", changed.data);

  const stillIn = await step("getSession after changePassword", () => a.client.getSession());
  check(stillIn.data?.session?.token === first.data.token, "getSession after changePassword",
    "the same session", stillIn.data);

  const withNew = await step("signIn.email with the new password",
    () => browser().client.signIn.email({ email, password: newPassword }));
  check(withNew.data.user?.id === userId, "signIn.email with the new password", `user ${userId}`, withNew.data);

  const withOld = await step("signIn.email with the old password",
    () => browser().client.signIn.email({ email, password }), { fails: true });
  check(withOld.error.status === 401 && withOld.error.code === "INVALID_EMAIL_OR_PASSWORD",
    "signIn.email with the old password", "401 INVALID_EMAIL_OR_PASSWORD", withOld.error);

  return { email, userId };
}

try {
  const result = await flow();
  console.log(JSON.stringify({ ok: true, betterAuthVersion: version, baseURL, ...result, steps }, null, 2));
  process.exit(0);
} catch (error) {
  const message = error instanceof Mismatch ? error.message : `unexpected ${error?.stack ?? error}`;
  console.log(JSON.stringify({ ok: false, betterAuthVersion: version, baseURL, error: message, steps }, null, 2));
  console.error(message);
  process.exit(1);
}
