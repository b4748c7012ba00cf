// Hash a password with better-auth's own helper and print JSON, for tests/test_hashers.py.
//
//   node tests/js/make_hash.mjs [password]
//
// Prints {"password", "hash", "betterAuthVersion"}; the hash is better-auth's `salt:key` form, as it
// stores it in account.password. The default password mixes Unicode forms on purpose, so the hash
// pins down better-auth's NFKC normalisation as well as its scrypt parameters.
import { readFileSync } from "node:fs";
import { hashPassword, verifyPassword } from "better-auth/crypto";

// "ﬁ" ligature, Ohm sign, "e" + combining acute, circled digits, half-width katakana: none is in NFKC.
const DEFAULT_PASSWORD = "\ufb01nal \u2126mega cafe\u0301 \u2460\u2461\u2462 \uff8a\uff9f\uff7d\uff9c\uff70\uff84\uff9e";

const password = process.argv[2] ?? DEFAULT_PASSWORD;
const { version } = JSON.parse(
  readFileSync(new URL("./node_modules/better-auth/package.json", import.meta.url), "utf8"),
);

const hash = await hashPassword(password);
// A sanity check with better-auth's own verifier, so a broken install cannot produce a fixture.
if (!(await verifyPassword({ hash, password }))) {
  console.error("better-auth could not verify its own hash");
  process.exit(1);
}
// Non-ASCII is escaped so no editor or git filter can re-normalise the checked-in fixture.
const json = JSON.stringify({ password, hash, betterAuthVersion: version }, null, 2);
console.log(json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`));
