// better-auth 1.7.25 configured as our example project is in bench/run.sh: same cookie names
// (auth.session_token, auth.session_data), base path, session lifetime and refresh age, e-mail and
// password on, rate limit off, on PostgreSQL. Shared by server.mjs, migrate.mjs and seed.mjs.
//
// Environment: REF_DATABASE_URL (its own database), REF_SECRET, REF_BASE_URL,
// REF_COOKIE_CACHE (true/false: session.cookieCache), REF_COOKIE_CACHE_MAX_AGE (300), REF_POOL (10).
import { betterAuth } from "better-auth";
import pg from "pg";

const flag = (name) => ["1", "true", "yes", "on"].includes((process.env[name] || "").toLowerCase());

export const pool = new pg.Pool({
  connectionString: process.env.REF_DATABASE_URL,
  // Django keeps one connection per worker; better-auth on one event loop runs queries concurrently,
  // so it gets a pool (pg's default size, 10).
  max: Number(process.env.REF_POOL || 10),
});

export const auth = betterAuth({
  database: pool,
  secret: process.env.REF_SECRET,
  baseURL: process.env.REF_BASE_URL,
  basePath: "/api/auth",
  emailAndPassword: { enabled: true },
  session: {
    // authservice's defaults (authservice/app_settings.py): 7 days, extended once a day.
    expiresIn: 604800,
    updateAge: 86400,
    cookieCache: {
      enabled: flag("REF_COOKIE_CACHE"),
      maxAge: Number(process.env.REF_COOKIE_CACHE_MAX_AGE || 300),
      strategy: "compact",
    },
  },
  advanced: { cookiePrefix: "auth" },
  rateLimit: { enabled: false },
  telemetry: { enabled: false },
});
