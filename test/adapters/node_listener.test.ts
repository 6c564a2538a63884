// toNodeListener on a real socket (127.0.0.1, port 0): what the app receives and what the client gets back.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createServer, request as httpRequest } from "node:http";
import { type AddressInfo, connect } from "node:net";
import type { App } from "../../src/app.ts";
import { toNodeListener } from "../../src/adapters/node_listener.ts";
import type { LingerLimits } from "../../src/adapters/node_linger.ts";
import { listenNode } from "../../src/adapters/serve_node.ts";
import { lightTextResponse } from "../../src/adapters/light_response.ts";
import { createResponders } from "../../src/http/respond.ts";
import { completeAnswer, sendOversized } from "../helpers/oversized_upload.ts";

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  remoteAddress?: string;
}

/** A listener over a fake app that records what it was handed and answers with `reply`. */
async function serve(reply: (request: Request) => Response | Promise<Response>, maxBodyBytes = 1_024, linger?: LingerLimits) {
  const seen: Seen[] = [];
  const app = {
    deps: { config: { maxBodyBytes } },
    async fetch(request: Request, info?: { remoteAddress?: string }) {
      const body = await request.text();
      seen.push({ method: request.method, url: request.url, headers: Object.fromEntries(request.headers), body, remoteAddress: info?.remoteAddress });
      return reply(request);
    },
  } as unknown as App;
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  server.on("request", toNodeListener(app, origin, { linger }));
  return { origin, seen, close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
}

test("listener hands the app the method, absolute URL, headers, body and remote address", async () => {
  const s = await serve(() => new Response("ok"));
  try {
    const res = await fetch(`${s.origin}/oauth/token?x=1`, { method: "POST", headers: { "content-type": "application/json", "x-extra": "a" }, body: '{"a":"b"}' });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "ok");
    const [seen] = s.seen;
    assert.equal(seen!.method, "POST");
    assert.equal(seen!.url, `${s.origin}/oauth/token?x=1`);
    assert.equal(seen!.headers["content-type"], "application/json");
    assert.equal(seen!.headers["x-extra"], "a");
    assert.equal(seen!.body, '{"a":"b"}');
    assert.equal(seen!.remoteAddress, "127.0.0.1");
  } finally {
    await s.close();
  }
});

test("listener passes a chunked body through whole", async () => {
  const s = await serve(() => new Response("ok"));
  try {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${s.origin}/x`, { method: "POST", headers: { "transfer-encoding": "chunked" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.once("error", reject);
      req.write("first-");
      setTimeout(() => req.end("second"), 10);
    });
    assert.equal(status, 200);
    assert.equal(s.seen[0]!.body, "first-second");
  } finally {
    await s.close();
  }
});

test("listener gives the app at most maxBodyBytes + 1 bytes of an oversized chunked body and closes the connection", async () => {
  const s = await serve((request) => new Response(null, { status: request.headers.get("x-big") ? 413 : 200 }), 100);
  try {
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode("z".repeat(1_000)));
        controller.close();
      },
    });
    const res = await fetch(`${s.origin}/x`, { method: "POST", headers: { "x-big": "1" }, body: chunks, duplex: "half" } as RequestInit);
    assert.equal(res.status, 413);
    assert.equal(res.headers.get("connection"), "close");
    assert.equal(s.seen[0]!.body.length, 101);
  } finally {
    await s.close();
  }
});

test("listener reads nothing of a body whose declared length is over the cap, and closes the connection", async () => {
  const s = await serve((request) => new Response(null, { status: Number(request.headers.get("content-length")) > 100 ? 413 : 200 }), 100);
  try {
    const res = await fetch(`${s.origin}/x`, { method: "POST", body: "z".repeat(10_000) });
    assert.equal(res.status, 413);
    assert.equal(res.headers.get("connection"), "close");
    assert.equal(s.seen[0]!.body.length, 0);
  } finally {
    await s.close();
  }
});

test("listener drains a refused upload only up to its byte bound, then closes with the 413 delivered", async () => {
  const s = await serve(() => new Response("too large", { status: 413 }), 100, { bytes: 1_048_576, ms: 60_000 });
  try {
    const bytes = 64 * 1_048_576;
    const outcome = await sendOversized(s.origin, { bytes, path: "/x" });
    assert.equal(completeAnswer(outcome.answer)?.status, 413);
    assert.ok(outcome.sent < bytes, "the server closed before the whole upload was read");
    if (outcome.error !== undefined) assert.equal(outcome.answeredBeforeError, true, outcome.error);
  } finally {
    await s.close();
  }
});

test("listener drains a refused upload only up to its time bound, then closes with the 413 delivered", async () => {
  const s = await serve(() => new Response("too large", { status: 413 }), 100, { bytes: 16 * 1_048_576, ms: 100 });
  try {
    // Headers and a few bytes of a declared megabyte, then silence: only the time bound can end the drain.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(s.origin).port), "127.0.0.1", () => {
        socket.write("POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\nfirst bytes");
      });
      let data = "";
      socket.on("data", (chunk) => (data += chunk.toString("latin1")));
      socket.on("close", () => resolve(data));
      socket.on("error", reject);
    });
    const parsed = completeAnswer(answer);
    assert.equal(parsed?.status, 413);
    assert.equal(parsed.headers.get("connection"), "close");
    assert.equal(parsed.body, "too large");
  } finally {
    await s.close();
  }
});

test("Expect: 100-continue gets 100 Continue only for a body that may be accepted", async () => {
  const app = { fetch: async (request: Request) => new Response(String((await request.arrayBuffer()).byteLength)), deps: { config: { maxBodyBytes: 100 } } } as unknown as App;
  const listener = await listenNode({ port: 0, host: "127.0.0.1", graceMs: 1_000 }, async () => app);
  const ask = (length: number) => new Promise<string>((resolve, reject) => {
    const socket = connect(Number(new URL(listener.url).port), "127.0.0.1", () => {
      socket.write(`POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`);
    });
    let answer = "";
    socket.on("data", (chunk) => {
      answer += chunk;
      // Send the body only when invited, as a client honouring Expect does.
      if (answer.startsWith("HTTP/1.1 100") && !answer.includes("sent")) {
        answer += "sent";
        socket.write("z".repeat(length));
      }
      if (/\r\n\r\n\d+$|HTTP\/1\.1 413/.test(answer)) socket.end();
    });
    socket.on("close", () => resolve(answer));
    socket.on("error", reject);
  });
  try {
    const small = await ask(10);
    assert.match(small, /^HTTP\/1\.1 100 Continue/);
    assert.match(small, /HTTP\/1\.1 200 OK[\s\S]*\r\n\r\n10$/);
    const large = await ask(10_000);
    assert.doesNotMatch(large, /100 Continue/);
    assert.match(large, /^HTTP\/1\.1 200 OK[\s\S]*\r\n\r\n0$/, "the app got the request without its body and answers from the header");
  } finally {
    await listener.close();
  }
});

test("listener sends no body to the app for GET", async () => {
  const s = await serve(() => new Response("ok"));
  try {
    await (await fetch(`${s.origin}/healthz`)).text();
    assert.equal(s.seen[0]!.body, "");
  } finally {
    await s.close();
  }
});

test("listener writes status, headers, Content-Length and each Set-Cookie separately", async () => {
  const s = await serve(() => {
    const headers = new Headers({ "content-type": "application/json", "cache-control": "no-store" });
    headers.append("set-cookie", "a=1; Path=/; HttpOnly");
    headers.append("set-cookie", "b=2; Path=/, with comma");
    return new Response('{"ok":true}', { status: 201, headers });
  });
  try {
    const res = await fetch(`${s.origin}/x`);
    assert.equal(res.status, 201);
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.equal(res.headers.get("content-length"), "11");
    assert.deepEqual(res.headers.getSetCookie(), ["a=1; Path=/; HttpOnly", "b=2; Path=/, with comma"]);
    assert.deepEqual(await res.json(), { ok: true });
  } finally {
    await s.close();
  }
});

test("listener answers concurrent requests each with its own response", async () => {
  // Responses leave together at the end of the event-loop turn (node_write_queue.ts): none may be swapped or lost.
  const s = await serve(async (request) => {
    const n = new URL(request.url).searchParams.get("n")!;
    await new Promise((resolve) => setTimeout(resolve, Number(n) % 3));
    return new Response(`answer ${n}`, { headers: { "x-n": n } });
  });
  try {
    const answers = await Promise.all(Array.from({ length: 40 }, async (_, n) => {
      const res = await fetch(`${s.origin}/x?n=${n}`);
      return [res.headers.get("x-n"), await res.text()];
    }));
    assert.deepEqual(answers, Array.from({ length: 40 }, (_, n) => [String(n), `answer ${n}`]));
  } finally {
    await s.close();
  }
});

test("listener drops the connection of a response it cannot write, and goes on serving", async () => {
  // A header value node:http refuses (U+0100 is not a byte): writeHead throws at flush time.
  const unwritable = () => {
    const response = new Response(null, { status: 204 });
    Object.defineProperty(response, "headers", {
      value: { forEach: (each: (value: string, key: string) => void) => each("bad\u0100value", "x-bad"), getSetCookie: () => [] },
    });
    return response;
  };
  const s = await serve((request) => (new URL(request.url).pathname === "/bad" ? unwritable() : new Response("fine")));
  try {
    await assert.rejects(fetch(`${s.origin}/bad`));
    const res = await fetch(`${s.origin}/good`);
    assert.equal(await res.text(), "fine");
  } finally {
    await s.close();
  }
});

test("listener answers a body-less response (redirect) without Content-Length", async () => {
  const s = await serve(() => new Response(null, { status: 302, headers: { location: "/next" } }));
  try {
    const res = await fetch(`${s.origin}/x`, { redirect: "manual" });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get("location"), "/next");
  } finally {
    await s.close();
  }
});

test("listener writes a light JSON response with its UTF-8 Content-Length and headers", async () => {
  const { json } = createResponders(lightTextResponse);
  const s = await serve(() => json({ name: "Çé田" }, 201, { "x-a": "1" }));
  try {
    const res = await fetch(`${s.origin}/x`, { method: "POST", body: "é" });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get("x-a"), "1");
    assert.equal(res.headers.get("content-length"), String(new TextEncoder().encode('{"name":"Çé田"}').byteLength));
    assert.deepEqual(await res.json(), { name: "Çé田" });
    assert.equal(s.seen[0]!.body, "é");
  } finally {
    await s.close();
  }
});

test("listener writes a light response's own headers in full, each Set-Cookie on its own line", async () => {
  const { json } = createResponders(lightTextResponse);
  const s = await serve(() => {
    const response = json({ ok: true }, 200, { "cache-control": "no-store", vary: "origin" });
    response.headers.append("vary", "accept");
    response.headers.append("set-cookie", "a=1; Path=/; HttpOnly");
    response.headers.append("set-cookie", "b=2; Path=/, with comma");
    return response;
  });
  try {
    const res = await fetch(`${s.origin}/x`);
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.equal(res.headers.get("vary"), "origin, accept");
    assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
    assert.deepEqual(res.headers.getSetCookie(), ["a=1; Path=/; HttpOnly", "b=2; Path=/, with comma"]);
    assert.deepEqual(await res.json(), { ok: true });
  } finally {
    await s.close();
  }
});

/** Sends raw bytes on a fresh connection and returns the status line of the answer. */
async function rawStatusLine(origin: string, raw: string): Promise<string> {
  const { connect } = await import("node:net");
  const { port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1", () => socket.write(raw));
    let data = "";
    socket.on("data", (chunk) => {
      data += chunk.toString("latin1");
      if (data.includes("\r\n")) {
        socket.destroy();
        resolve(data.slice(0, data.indexOf("\r\n")));
      }
    });
    socket.on("error", reject);
  });
}

test("listener takes only the path and query of an absolute-form target, and refuses '*' with 400", async () => {
  const s = await serve(() => new Response("ok"));
  try {
    // RFC 9112 §3.2.2: accepted, but the host in it never becomes the request's origin.
    const line = await rawStatusLine(s.origin, "GET http://evil.example/oauth/x?y=1 HTTP/1.1\r\nHost: evil.example\r\n\r\n");
    assert.match(line, /^HTTP\/1\.1 200 /);
    assert.equal(s.seen[0]!.url, `${s.origin}/oauth/x?y=1`);
    assert.match(await rawStatusLine(s.origin, "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), /^HTTP\/1\.1 400 /);
    assert.equal(s.seen.length, 1);
  } finally {
    await s.close();
  }
});

test("listener hands repeated header fields joined with a comma, as Headers would", async () => {
  const s = await serve((request) => new Response(request.headers.get("x-forwarded-for") ?? "none"));
  try {
    const { connect } = await import("node:net");
    const { port } = new URL(s.origin);
    const body = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1", () =>
        socket.write("GET /x HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 1.1.1.1\r\nx-forwarded-for: 2.2.2.2\r\nConnection: close\r\n\r\n"));
      let data = "";
      socket.on("data", (chunk) => (data += chunk.toString("latin1")));
      socket.on("end", () => resolve(data.slice(data.indexOf("\r\n\r\n") + 4)));
      socket.on("error", reject);
    });
    assert.equal(body, "1.1.1.1, 2.2.2.2");
  } finally {
    await s.close();
  }
});

// A complete request followed, in the same write, by bytes node:http cannot parse: node destroys the socket while
// the listener still awaits the body. Run anyway, the request had no address left to be throttled or audited by.
test("listener does not run a request whose connection node:http destroyed while its body was read", async () => {
  const s = await serve(() => new Response("ok"));
  try {
    const body = '{"a":"b"}';
    const socket = connect(Number(new URL(s.origin).port), "127.0.0.1");
    await new Promise<void>((resolve) => {
      socket.on("connect", () => {
        socket.write(`POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}\x01\x02bad\r\n\r\n`);
      });
      socket.on("error", () => {});
      socket.on("close", () => resolve());
      socket.resume();
    });
    // A request that arrives whole on its own connection is still served, with its address.
    const res = await fetch(`${s.origin}/y`, { method: "POST", body });
    assert.equal(res.status, 200);
    assert.deepEqual(s.seen.map((seen) => [seen.url, seen.remoteAddress]), [[`${s.origin}/y`, "127.0.0.1"]]);
  } finally {
    await s.close();
  }
});
