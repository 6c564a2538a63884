// The Node adapter's structured log: the same JSON lines as deps.ts jsonLog, written in batches to stderr.
import { writeSync } from "node:fs";
import type { Log } from "../deps.ts";
import { createBufferedLog } from "./buffered_log.ts";

/**
 * Writes text to file descriptor 2 as a string, without process.stderr. For files and pipes process.stderr is a
 * synchronous Writable that first turns every string into a Buffer; under load those per-batch ArrayBuffers
 * outlived the young generation and piled up as external memory until a full GC (about 25 MiB of the server's
 * peak RSS in npm run bench). A short write or a non-blocking descriptor that is full (EAGAIN) hands the rest to
 * process.stderr, which queues it, so no line is lost.
 */
export function writeStderr(
  text: string,
  write: (fd: number, text: string) => number = writeSync,
  queue: (rest: string | Uint8Array) => void = (rest) => void process.stderr.write(rest),
): void {
  let written = 0;
  try {
    written = write(2, text);
  } catch {
    written = 0;
  }
  const bytes = Buffer.byteLength(text);
  if (written < bytes) queue(written === 0 ? text : Buffer.from(text).subarray(written));
}

/** The process-wide stderr log for `serve`; anything still buffered is written when the process exits. */
export function nodeStderrLog(): Log {
  const buffered = createBufferedLog((text) => writeStderr(text));
  process.on("exit", buffered.flush);
  return buffered.log;
}
