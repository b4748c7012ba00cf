// Seeds the reference as bench/seed.py seeds ours: REF_USERS (200) users bench-<i>@example.com with
// the password REF_PASSWORD (hashed once by better-auth's own hasher, scrypt, and the hash reused),
// a credential account each, and REF_SESSIONS (1000) live sessions, session i for user i mod users.
// Writes <out>/cookies.txt (one Cookie header per line: the signed auth.session_token, as better-auth
// sets it) and <out>/emails.txt. Usage: seed.mjs OUT_DIR
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { serializeSignedCookie } from "better-call";
import { auth, pool } from "./auth.mjs";

const out = process.argv[2];
const users = Number(process.env.REF_USERS || 200);
const sessions = Number(process.env.REF_SESSIONS || 1000);
const ctx = await auth.$context;
const hash = await ctx.password.hash(process.env.REF_PASSWORD);
const now = new Date();
// Far from the refresh point, as in seed.py: get-session must not write.
const expires = new Date(now.getTime() + 604800 * 1000);
const ids = [];
for (let i = 0; i < users; i++) {
  const id = randomUUID();
  ids.push(id);
  await pool.query(
    'INSERT INTO "user" (id, name, email, "emailVerified", "createdAt", "updatedAt") VALUES ($1, $2, $3, true, $4, $4)',
    [id, `Bench ${i}`, `bench-${i}@example.com`, now]);
  await pool.query(
    'INSERT INTO account (id, "accountId", "providerId", "userId", password, "createdAt", "updatedAt") VALUES ($1, $2, \'credential\', $2, $3, $4, $4)',
    [randomUUID(), id, hash, now]);
}
const cookies = [];
for (let i = 0; i < sessions; i++) {
  const value = randomUUID().replace(/-/g, "");
  await pool.query(
    'INSERT INTO session (id, token, "userId", "expiresAt", "ipAddress", "userAgent", "createdAt", "updatedAt") VALUES ($1, $2, $3, $4, \'127.0.0.1\', \'wrk\', $5, $5)',
    [randomUUID(), value, ids[i % users], expires, now]);
  const header = await serializeSignedCookie("auth.session_token", value, ctx.secret);
  cookies.push(header.split(";")[0]);
}
writeFileSync(`${out}/cookies.txt`, cookies.map((c) => c + "\n").join(""));
writeFileSync(`${out}/emails.txt`, Array.from({ length: users }, (_, i) => `bench-${i}@example.com\n`).join(""));
console.log(`seeded ${users} users, ${sessions} sessions`);
await pool.end();
