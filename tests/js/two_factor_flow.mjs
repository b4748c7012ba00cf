// Drive the server's two-factor endpoints with better-auth's own twoFactorClient(), as an SPA would.
//
//   node tests/js/two_factor_flow.mjs http://127.0.0.1:8000 /path/to/mail/outbox
//
// The server needs the two_factor plugin on, its rate limiter off and mail written as files into the
// outbox directory (Django's file backend), where this script reads the e-mailed code. TOTP codes are
// computed here (RFC 6238 over node:crypto), from the secret in the totpURI. Prints a JSON summary;
// exits 1 on the first mismatch.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { createHmac, randomBytes } from "node:crypto";
import { createAuthClient } from "better-auth/client";
import { twoFactorClient } from "better-auth/client/plugins";
import { CookieJar, browserFetch } from "./cookie_jar.mjs";

const [baseURL, outbox] = process.argv.slice(2);
if (!baseURL || !outbox) {
  console.error("usage: node two_factor_flow.mjs <server origin> <mail outbox directory>");
  process.exit(2);
}
const origin = new URL(baseURL).origin;
const { version } = JSON.parse(
  readFileSync(new URL("./node_modules/better-auth/package.json", import.meta.url), "utf8"),
);

class Mismatch extends Error {}
let lastStatus = null;
const steps = [];

function browser() {
  const jar = new CookieJar();
  const redirects = [];
  const client = createAuthClient({
    baseURL,
    plugins: [twoFactorClient({ onTwoFactorRedirect: (context) => { redirects.push(context); } })],
    fetchOptions: { customFetchImpl: browserFetch(jar, origin, (r) => { lastStatus = r.status; }) },
  });
  return { client, jar, redirects };
}

function check(condition, step, expected, got) {
  if (!condition) throw new Mismatch(`${step}: expected ${expected}, got ${JSON.stringify(got)}`);
}

async function step(name, call, { fails = false } = {}) {
  lastStatus = null;
  const result = await call();
  steps.push({ step: name, status: lastStatus, code: result.error?.code ?? null });
  if (fails) check(result.error, name, "an error", result);
  else check(!result.error, name, "success", result.error);
  return result;
}

function base32Decode(text) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const char of text.replace(/=+$/, "").toUpperCase()) bits += alphabet.indexOf(char).toString(2).padStart(5, "0");
  const bytes = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) bytes.push(parseInt(bits.slice(i, i + 8), 2));
  return Buffer.from(bytes);
}

/** RFC 6238 TOTP (SHA-1, 30 s, 6 digits) for the step `offset` steps from now. */
function totp(secret, offset = 0) {
  const counter = Math.floor(Date.now() / 1000 / 30) + offset;
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const digest = createHmac("sha1", base32Decode(secret)).update(message).digest();
  const at = digest[digest.length - 1] & 0x0f;
  const value = (digest.readUInt32BE(at) & 0x7fffffff) % 1_000_000;
  return String(value).padStart(6, "0");
}

function mailedCode(to) {
  const files = readdirSync(outbox).map((f) => join(outbox, f)).sort((x, y) => statSync(x).mtimeMs - statSync(y).mtimeMs);
  for (const file of files.reverse()) {
    const text = readFileSync(file, "utf8");
    if (text.includes(`To: ${to}`) && text.includes("sign-in code")) return text.match(/code is:\s+(\d{6})/)[1];
  }
  throw new Mismatch(`no two-factor mail to ${to} in ${outbox}`);
}

async function signInAsks(name, email, password, b) {
  const answer = await step(name, () => b.client.signIn.email({ email, password }));
  check(answer.data?.twoFactorRedirect === true && b.redirects.length > 0, name, "twoFactorRedirect", answer.data);
  check(!b.jar.has("session_token") && b.jar.has("two_factor"), name, "no session, a two_factor cookie", b.jar.header());
  return answer.data.twoFactorMethods;
}

async function flow() {
  const email = `e2e-2fa-${Date.now()}-${randomBytes(4).toString("hex")}@example.com`;
  const password = `first ${randomBytes(8).toString("hex")}`;
  const owner = browser();
  await step("signUp.email", () => owner.client.signUp.email({ email, password, name: "Two Factor" }));

  const enabled = await step("twoFactor.enable", () => owner.client.twoFactor.enable({ password }));
  const secret = new URL(enabled.data.totpURI).searchParams.get("secret");
  check(secret && enabled.data.backupCodes?.length === 10, "twoFactor.enable", "a totpURI and 10 backup codes", enabled.data);
  // Enrolment uses the previous step's code: the sign-in below uses the current one, each once.
  const verified = await step("twoFactor.verifyTotp (enrol)", () => owner.client.twoFactor.verifyTotp({ code: totp(secret, -1) }));
  check(verified.data?.user?.twoFactorEnabled === true, "twoFactor.verifyTotp (enrol)", "twoFactorEnabled", verified.data);

  const withTotp = browser();
  const methods = await signInAsks("signIn.email (TOTP user)", email, password, withTotp);
  // E-mailed codes are not offered to a TOTP user (their mailbox resets the password: docs/mfa.md).
  check(methods.join() === "totp", "signIn.email (TOTP user)", "totp", methods);
  const pending = await step("getSession while pending", () => withTotp.client.getSession());
  check(pending.data === null, "getSession while pending", "null", pending.data);
  const totpIn = await step("twoFactor.verifyTotp", () => withTotp.client.twoFactor.verifyTotp({ code: totp(secret) }));
  check(totpIn.data?.token && totpIn.data.user?.email === email, "twoFactor.verifyTotp", "{token, user}", totpIn.data);
  const afterTotp = await step("getSession after verifyTotp", () => withTotp.client.getSession());
  check(afterTotp.data?.session?.token === totpIn.data.token, "getSession after verifyTotp", "the new session", afterTotp.data);

  const withBackup = browser();
  await signInAsks("signIn.email (backup code)", email, password, withBackup);
  const backupIn = await step("twoFactor.verifyBackupCode",
    () => withBackup.client.twoFactor.verifyBackupCode({ code: enabled.data.backupCodes[0] }));
  check(backupIn.data?.token, "twoFactor.verifyBackupCode", "{token, user}", backupIn.data);

  // The user switches to e-mailed codes: TOTP off (its session is fresh), then method "otp".
  const offTotp = await step("twoFactor.disable (TOTP)", () => withTotp.client.twoFactor.disable({ password }));
  check(offTotp.data?.status === true, "twoFactor.disable (TOTP)", "{status: true}", offTotp.data);
  const onOtp = await step("twoFactor.enable (e-mail codes)",
    () => withTotp.client.twoFactor.enable({ password, method: "otp" }));
  check(onOtp.data?.method === "otp", "twoFactor.enable (e-mail codes)", "{method: otp}", onOtp.data);

  const withOtp = browser();
  const otpMethods = await signInAsks("signIn.email (e-mail code)", email, password, withOtp);
  check(otpMethods.join() === "otp", "signIn.email (e-mail code)", "otp", otpMethods);
  const sent = await step("twoFactor.sendOtp", () => withOtp.client.twoFactor.sendOtp());
  check(sent.data?.status === true, "twoFactor.sendOtp", "{status: true}", sent.data);
  const otpIn = await step("twoFactor.verifyOtp (trustDevice)",
    () => withOtp.client.twoFactor.verifyOtp({ code: mailedCode(email), trustDevice: true }));
  check(otpIn.data?.token && withOtp.jar.has("trust_device"), "twoFactor.verifyOtp (trustDevice)",
    "a session and a trust_device cookie", withOtp.jar.header());

  await step("signOut (trusted browser)", () => withOtp.client.signOut());
  const trusted = await step("signIn.email (trusted device)", () => withOtp.client.signIn.email({ email, password }));
  check(trusted.data?.token && !trusted.data.twoFactorRedirect, "signIn.email (trusted device)",
    "a session without a second factor", trusted.data);

  const disabled = await step("twoFactor.disable", () => withOtp.client.twoFactor.disable({ password }));
  check(disabled.data?.status === true, "twoFactor.disable", "{status: true}", disabled.data);
  const plain = await step("signIn.email after disable", () => browser().client.signIn.email({ email, password }));
  check(plain.data?.token && !plain.data.twoFactorRedirect, "signIn.email after disable", "a session", plain.data);
  return { email };
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
