// better-auth's client with inferAdditionalFields reads and writes an additional user field.
//
//   node tests/js/additional_fields_flow.mjs http://127.0.0.1:8000
//
// The server declares AUTHSERVICE["user"]["additional_fields"] = {"favoriteColor": {"type": "string",
// "required": False}} and signs up with auto sign-in. The flow signs up with the field, reads it from
// getSession, changes it with updateUser and reads it again. Prints a JSON summary; exits 1 on the
// first mismatch, naming the step, what was expected and what came back.
import { randomBytes } from "node:crypto";
import { createAuthClient } from "better-auth/client";
import { inferAdditionalFields } from "better-auth/client/plugins";
import { CookieJar, browserFetch } from "./cookie_jar.mjs";

const baseURL = process.argv[2];
if (!baseURL) {
  console.error("usage: node additional_fields_flow.mjs <server origin>");
  process.exit(2);
}
const origin = new URL(baseURL).origin;
const jar = new CookieJar();
let lastStatus = null;
const client = createAuthClient({
  baseURL,
  plugins: [inferAdditionalFields({ user: { favoriteColor: { type: "string", required: false } } })],
  fetchOptions: {
    customFetchImpl: browserFetch(jar, origin, (response) => { lastStatus = response.status; }),
  },
});

class Mismatch extends Error {}
const steps = [];

/** Run one client call, record what `read` takes from its answer, and fail unless it is `expected`. */
async function step(name, call, expected, read) {
  lastStatus = null;
  const result = await call();
  const got = result.error ? null : read(result.data);
  steps.push({ step: name, status: lastStatus, value: got });
  if (result.error || got !== expected) {
    throw new Mismatch(`${name}: expected ${expected}, got ${JSON.stringify(result.error ?? result.data)}`);
  }
}

async function flow() {
  const email = `fields-${Date.now()}-${randomBytes(4).toString("hex")}@example.com`;
  const password = `pw ${randomBytes(8).toString("hex")}`;
  await step("signUp.email", () => client.signUp.email({ email, password, name: "Fields", favoriteColor: "teal" }),
    "teal", (data) => data.user.favoriteColor);
  await step("getSession", () => client.getSession(), "teal", (data) => data?.user?.favoriteColor);
  await step("updateUser", () => client.updateUser({ favoriteColor: "plum" }), true, (data) => data?.status);
  await step("getSession after updateUser", () => client.getSession(), "plum", (data) => data?.user?.favoriteColor);
  return { email };
}

try {
  const result = await flow();
  console.log(JSON.stringify({ ok: true, ...result, steps }, null, 2));
  process.exit(0);
} catch (error) {
  const message = error instanceof Mismatch ? error.message : `unexpected ${error?.stack ?? error}`;
  console.log(JSON.stringify({ ok: false, error: message, steps }, null, 2));
  console.error(message);
  process.exit(1);
}
