// Lingering close on node:http: after refusing an upload, read and discard what the client still sends, then close.
import type { IncomingMessage } from "node:http";

/** How much of a refused upload is read and discarded before the connection is closed anyway. */
export interface LingerLimits {
  bytes: number;
  ms: number;
}

/**
 * Closing a socket that still has unread bytes makes the kernel answer with a reset, which throws away the 413 in
 * the client's receive buffer (the client sees EPIPE or ECONNRESET instead); like nginx's lingering close, reading
 * on for 16 MiB or 5 s, whichever comes first, lets an ordinary oversized upload finish without letting a client
 * hold the connection for long.
 */
export const LINGER_LIMITS: LingerLimits = Object.freeze({ bytes: 16 * 1_048_576, ms: 5_000 });

/** Resolves once `req`'s body has ended, its connection has closed, or `limits` have been reached, discarding the bytes. */
export function drainRequest(req: IncomingMessage, limits: LingerLimits): Promise<void> {
  if (req.complete || req.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let discarded = 0;
    const done = () => {
      clearTimeout(timer);
      req.off("data", onData);
      req.off("end", done);
      req.off("close", done);
      req.pause();
      resolve();
    };
    const onData = (chunk: Buffer) => {
      discarded += chunk.byteLength;
      if (discarded >= limits.bytes) done();
    };
    const timer = setTimeout(done, limits.ms);
    req.on("data", onData);
    req.once("end", done);
    req.once("close", done);
    req.resume();
  });
}
