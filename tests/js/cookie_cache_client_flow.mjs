// better-auth's own client against a server whose session cookie cache is on (issue 18 §2).
//
//   node tests/js/cookie_cache_client_flow.mjs http://127.0.0.1:8000
//
// Browser A signs up; browser B signs in as the same user and renames them. A's getSession still
// answers the old name (its session_data cookie, trusted for max_age, as with better-auth), while
// getSession({ query: { disableCookieCache: true } }) reads the new one. Then A signs out, and its
// getSession is null. Prints a JSON summary; exits 1 on the first mismatch.
import { randomBytes } from "node:crypto";
import { createAuthClient } from "better-auth/client";
import { CookieJar, browserFetch } from "./cookie_jar.mjs";

const baseURL = process.argv[2];
const origin = new URL(baseURL).origin;
const steps = [];

function browser() {
  const jar = new CookieJar();
  const client = createAuthClient({ baseURL, fetchOptions: { customFetchImpl: browserFetch(jar, origin) } });
  return { client, jar };
}

function check(condition, step, got) {
  if (!condition) throw new Error(`${step}: unexpected ${JSON.stringify(got)}`);
}

async function step(name, call, value) {
  const result = await call();
  check(!result.error, name, result.error);
  steps.push({ step: name, value: value(result.data) });
  return result.data;
}

const email = `cache-${randomBytes(4).toString("hex")}@example.com`;
const password = `pw ${randomBytes(8).toString("hex")}`;
const a = browser();
const b = browser();
try {
  await step("signUp.email", () => a.client.signUp.email({ email, password, name: "First" }), (d) => d.user.name);
  check(a.jar.has("session_data"), "signUp.email", a.jar.header());
  await step("getSession", () => a.client.getSession(), (d) => d.user.name);
  await step("getSession again", () => a.client.getSession(), (d) => d.user.name);
  await step("signIn.email (second browser)", () => b.client.signIn.email({ email, password }), (d) => d.user.name);
  await step("updateUser (second browser)", () => b.client.updateUser({ name: "Second" }), (d) => d.status);
  await step("getSession in the second browser", () => b.client.getSession(), (d) => d.user.name);
  await step("getSession (cached)", () => a.client.getSession(), (d) => d.user.name);
  await step("getSession disableCookieCache",
    () => a.client.getSession({ query: { disableCookieCache: true } }), (d) => d.user.name);
  await step("signOut", () => a.client.signOut(), (d) => d.success);
  check(!a.jar.has("session_data"), "signOut", a.jar.header());
  await step("getSession after signOut", () => a.client.getSession(), (d) => d);
  console.log(JSON.stringify({ ok: true, steps }));
} catch (error) {
  console.log(JSON.stringify({ ok: false, error: String(error), steps }));
  process.exit(1);
}
