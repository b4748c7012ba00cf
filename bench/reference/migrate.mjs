// Creates better-auth's tables in REF_DATABASE_URL with its own migration code (what
// `npx @better-auth/cli migrate` runs), then exits.
import { getMigrations } from "better-auth/db/migration";
import { auth, pool } from "./auth.mjs";

const { runMigrations } = await getMigrations(auth.options);
await runMigrations();
await pool.end();
