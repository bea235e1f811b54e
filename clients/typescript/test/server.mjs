// Local servers that answer as a test tells them to, however badly, and count what they
// receive: the misbehaviour a real worker cannot be made to show on demand.
import { createServer } from "node:http";
import { createServer as createTCPServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/** An HTTP server answering every request with answer(req, res); requests lists them as "METHOD /path". */
export async function serve(t, answer) {
  const requests = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      requests.push(`${req.method} ${req.url.split("?")[0]}`);
      Promise.resolve(answer(req, res)).catch(() => res.destroy()); // the client gave up first
    });
  });
  return listen(t, server, requests);
}

/** A server answering every request with status and body (JSON unless said otherwise). */
export function stub(t, status, body, headers = {}) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return serve(t, (_req, res) => {
    res.writeHead(status, { "Content-Type": "application/json", ...headers });
    res.end(text);
  });
}

/** A server answering with the API's error shape. */
export function errorStub(t, status, code, headers = {}) {
  return stub(t, status, { error: { code, message: "stubbed" } }, headers);
}

/**
 * A TCP server that reads each request's head and then hands the socket to answer, for
 * answers no HTTP server would send: headers a byte at a time, a connection closed
 * mid-answer. requests counts the requests.
 */
export async function raw(t, answer) {
  const requests = [];
  const server = createTCPServer((socket) => {
    let head = "";
    socket.on("error", () => {});
    socket.on("data", (chunk) => {
      if (head.includes("\r\n\r\n")) return;
      head += chunk.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      const [method, url] = head.split(" ");
      requests.push(`${method} ${url.split("?")[0]}`);
      Promise.resolve(answer(socket)).catch(() => socket.destroy());
    });
  });
  return listen(t, server, requests);
}

async function listen(t, server, requests) {
  const sockets = new Set();
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    for (const s of sockets) s.destroy();
    return new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${server.address().port}`, requests };
}

/**
 * Writes data a byte at a time, every ms apart: each read gets something well within any
 * per-read timeout, the whole takes data.length * every ms. Stops when the client hangs up.
 */
export async function drip(socket, data, every) {
  for (const byte of Buffer.from(data)) {
    if (socket.destroyed) return;
    socket.write(Buffer.from([byte]));
    await sleep(every);
  }
}
