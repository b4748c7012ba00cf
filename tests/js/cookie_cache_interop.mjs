// better-auth's own side of the session cookie cache (compact strategy), for tests/test_cookie_cache_better_auth.py.
//
//   node cookie_cache_interop.mjs read <secret> <Cookie header>
//     better-auth's getCookieCache (the helper a Next.js middleware calls) on our cookies: prints the
//     payload it accepts, or null.
//   node cookie_cache_interop.mjs make <secret> <name length>
//     a better-auth server (memory adapter, cookie prefix "auth", cookieCache on) signs a user up and
//     prints the Set-Cookie lines it answers, for our decoder to read.
import { betterAuth } from "better-auth";
import { memoryAdapter } from "better-auth/adapters/memory";
import { getCookieCache } from "better-auth/cookies";

const [mode, secret, arg] = process.argv.slice(2);

if (mode === "read") {
  const headers = new Headers({ cookie: arg });
  const payload = await getCookieCache(headers, { secret, cookiePrefix: "auth", isSecure: false, version: "1" });
  console.log(JSON.stringify(payload));
} else if (mode === "make") {
  const auth = betterAuth({
    secret,
    baseURL: "http://127.0.0.1:8000",
    database: memoryAdapter({ user: [], session: [], account: [], verification: [] }),
    emailAndPassword: { enabled: true },
    advanced: { cookiePrefix: "auth" },
    session: { cookieCache: { enabled: true, maxAge: 300, strategy: "compact" } },
    logger: { disabled: true },
  });
  const response = await auth.api.signUpEmail({
    body: { email: "ba@example.com", password: "correct horse battery", name: "B".repeat(Number(arg)) },
    asResponse: true,
  });
  console.log(JSON.stringify({ status: response.status, setCookie: response.headers.getSetCookie() }));
} else {
  console.error("usage: node cookie_cache_interop.mjs read|make <secret> <cookie header|name length>");
  process.exit(2);
}
