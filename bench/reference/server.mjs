// The reference server: better-auth's handler on Bun.serve (under Bun) or node:http (under Node).
// REF_PORT: the loopback port. REF_WORKERS (1): processes sharing the port (SO_REUSEPORT on Bun,
// node:cluster on Node), so it can be given the same 2 processes our service gets.
import cluster from "node:cluster";
import http from "node:http";

const port = Number(process.env.REF_PORT);
const workers = Number(process.env.REF_WORKERS || 1);
const isBun = typeof globalThis.Bun !== "undefined";

async function serve() {
  const { auth } = await import("./auth.mjs");
  if (isBun) {
    Bun.serve({ port, hostname: "127.0.0.1", reusePort: true, fetch: auth.handler });
  } else {
    const { toNodeHandler } = await import("better-auth/node");
    http.createServer(toNodeHandler(auth)).listen(port, "127.0.0.1");
  }
}

if (isBun && workers > 1 && !process.env.REF_CHILD) {
  // Bun has no node:cluster load balancing on Linux; the kernel spreads connections over the
  // processes that listen on the same port with SO_REUSEPORT.
  const children = [];
  for (let i = 1; i < workers; i++) {
    children.push(Bun.spawn([process.execPath, import.meta.path], { env: { ...process.env, REF_CHILD: "1" },
      stdout: "inherit", stderr: "inherit" }));
  }
  // Stopping the first process stops them all.
  for (const signal of ["SIGTERM", "SIGINT"]) {
    process.on(signal, () => { for (const child of children) child.kill(); process.exit(0); });
  }
  await serve();
} else if (!isBun && workers > 1 && cluster.isPrimary) {
  for (let i = 0; i < workers; i++) cluster.fork();
} else {
  await serve();
}
