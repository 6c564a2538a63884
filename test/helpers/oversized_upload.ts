// A raw HTTP/1.1 client that keeps sending an upload larger than the server accepts while it reads the answer.
import assert from "node:assert/strict";
import { connect } from "node:net";

export interface OversizedUpload {
  /** Body bytes to send after the headers. */
  bytes: number;
  /** Transfer-Encoding: chunked instead of Content-Length. */
  chunked?: boolean;
  /** After this many body bytes, wait for the whole answer before sending the rest; unset, never wait. */
  waitForAnswerAfter?: number;
  path?: string;
}

export interface UploadOutcome {
  /** Everything the server sent, as latin1 text. */
  answer: string;
  /** Body bytes written before the connection ended. */
  sent: number;
  /** The socket error that ended the connection (EPIPE, ECONNRESET), if one did. */
  error?: string;
  /** Whether the whole answer had arrived when that error came. */
  answeredBeforeError?: boolean;
}

/** The answer's status, headers (lowercased names, repeated ones joined) and body, once all of it has arrived. */
export function completeAnswer(answer: string): { status: number; headers: Map<string, string>; body: string } | undefined {
  const end = answer.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const [statusLine = "", ...lines] = answer.slice(0, end).split("\r\n");
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
  }
  const body = answer.slice(end + 4);
  if (body.length < Number(headers.get("content-length") ?? Infinity)) return undefined;
  return { status: Number(statusLine.split(" ")[1]), headers, body };
}

const CHUNK = "a".repeat(64 * 1024);

/** POSTs `bytes` of form body to `url` on a fresh connection, streaming it while reading, until the connection ends. */
export function sendOversized(url: string, upload: OversizedUpload): Promise<UploadOutcome> {
  const { port } = new URL(url);
  const socket = connect(Number(port), "127.0.0.1");
  const outcome: UploadOutcome = { answer: "", sent: 0 };
  let answered!: () => void;
  const whole = new Promise<void>((resolve) => (answered = resolve));
  socket.on("data", (chunk: Buffer) => {
    outcome.answer += chunk.toString("latin1");
    if (completeAnswer(outcome.answer)) answered();
  });
  socket.on("error", (error: NodeJS.ErrnoException) => {
    outcome.error ??= error.code ?? String(error);
    outcome.answeredBeforeError ??= completeAnswer(outcome.answer) !== undefined;
  });
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
  closed.then(answered);
  // The bound of the exchange, not a speed claim: a server that neither answers nor closes fails the test here.
  socket.setTimeout(20_000, () => socket.destroy(new Error("no answer and no close within 20 s")));
  const write = (text: string) =>
    socket.write(text) ? Promise.resolve() : new Promise<void>((resolve) => {
      socket.once("drain", resolve);
      void closed.then(resolve);
    });
  const framing = upload.chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${upload.bytes}`;
  void (async () => {
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    await write(`POST ${upload.path ?? "/oauth/token"} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      `Content-Type: application/x-www-form-urlencoded\r\n${framing}\r\n\r\n`);
    while (outcome.sent < upload.bytes && !socket.destroyed) {
      if (upload.waitForAnswerAfter !== undefined && outcome.sent >= upload.waitForAnswerAfter) await whole;
      const piece = CHUNK.slice(0, upload.bytes - outcome.sent);
      if (socket.destroyed) break;
      outcome.sent += piece.length;
      await write(upload.chunked ? `${piece.length.toString(16)}\r\n${piece}\r\n` : piece);
    }
    if (!socket.destroyed) socket.end(upload.chunked ? "0\r\n\r\n" : "");
  })();
  return closed.then(() => outcome);
}

/** The uploads that lost their 413 to a reset: eager ones race the answer, patient ones send only after it. */
const SHAPES: { name: string; upload: Omit<OversizedUpload, "bytes">; runs: number }[] = [
  { name: "Content-Length", upload: {}, runs: 5 },
  { name: "chunked", upload: { chunked: true }, runs: 5 },
  { name: "Content-Length, rest sent after the answer", upload: { waitForAnswerAfter: 0 }, runs: 1 },
  // The server answers a chunked upload once it has read past its limit (64 KiB by default).
  { name: "chunked, rest sent after the answer", upload: { chunked: true, waitForAnswerAfter: 256 * 1024 }, runs: 1 },
];

/**
 * Sends 8 MB uploads to `path` in every shape, several times, and a fetch() with an 8 MB body: each gets the whole
 * 413 with Connection: close, and the server reads the whole upload (within its 16 MiB lingering bound) without a
 * reset.
 */
export async function assertRefusedUploadsAnswered(url: string, path = "/oauth/token"): Promise<void> {
  const bytes = 8 * 1_048_576;
  for (const shape of SHAPES) {
    for (let run = 1; run <= shape.runs; run++) {
      const label = `${shape.name}, run ${run}`;
      const outcome = await sendOversized(url, { bytes, path, ...shape.upload });
      const answer = completeAnswer(outcome.answer);
      assert.ok(answer, `${label}: no whole answer (error ${outcome.error}, ${outcome.sent} bytes sent)`);
      assert.equal(answer.status, 413, label);
      assert.match(answer.headers.get("connection") ?? "", /\bclose\b/i, label);
      assert.equal(JSON.parse(answer.body).error, "payload_too_large", label);
      assert.equal(outcome.error, undefined, `${label}: ${outcome.error} after ${outcome.sent} bytes sent`);
      assert.equal(outcome.sent, bytes, label);
    }
  }
  for (let run = 1; run <= 5; run++) {
    const res = await fetch(new URL(path, url), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "a".repeat(bytes),
    });
    assert.equal(res.status, 413, `fetch, run ${run}`);
    assert.equal((await res.json()).error, "payload_too_large", `fetch, run ${run}`);
  }
}
