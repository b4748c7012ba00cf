// A browser's cookie jar for the Node scripts that drive better-auth's client (client_flow.mjs, ...).

/** One browser's cookies: enough of RFC 6265 for a single host (name, value, expiry). */
export class CookieJar {
  #cookies = new Map();

  store(response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const eq = pair.indexOf("=");
      if (eq < 1) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((attribute) => {
        const [key, ...rest] = attribute.split("=");
        const raw = rest.join("=").trim();
        switch (key.trim().toLowerCase()) {
          case "max-age":
            return Number(raw) <= 0;
          case "expires":
            return Date.parse(raw) <= Date.now();
          default:
            return false;
        }
      });
      if (expired) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  header() {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  has(suffix) {
    return [...this.#cookies.keys()].some((name) => name.endsWith(suffix));
  }
}

/**
 * better-auth's `customFetchImpl` for a browser page on `origin` keeping its cookies in `jar`;
 * `onResponse(response)` sees every answer (the scripts record its status).
 */
export function browserFetch(jar, origin, onResponse = () => {}) {
  return async (input, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set("origin", origin);
    const cookie = jar.header();
    if (cookie) headers.set("cookie", cookie);
    const response = await fetch(input, { ...init, headers, redirect: "manual" });
    jar.store(response);
    onResponse(response);
    return response;
  };
}
