// better-auth's own client with its own passkeyClient(), bundled by esbuild for the page of
// tests/test_passkey_browser.py: window.makeClient(baseURL) is what an SPA would write.
import { passkeyClient } from "@better-auth/passkey/client";
import { createAuthClient } from "better-auth/client";

window.makeClient = (baseURL) =>
  createAuthClient({ baseURL, fetchOptions: { credentials: "include" }, plugins: [passkeyClient()] });
