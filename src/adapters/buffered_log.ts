// The runtime adapters' structured log: the same JSON lines as deps.ts jsonLog, collected and written together.
// Each adapter supplies the write (node_log.ts, serve_deno.ts).
import type { Log } from "../deps.ts";

/** A log that can be drained on demand (tests, process exit). */
export interface BufferedLog {
  log: Log;
  flush(): void;
}

/** How long a line may wait for others to share its write (ms). */
export const LOG_FLUSH_MS = 20;
/** Buffered characters past which the lines are written at once, before the wait is over. */
const FLUSH_CHARS = 65_536;

/**
 * Collects JSON lines and hands them to `write` together, LOG_FLUSH_MS after the first of them or once FLUSH_CHARS
 * have collected, so under load many lines share one write system call. console.error per line cost ~12 % of a
 * token request in Node's server profile, and about 40 % of the busy time of a total_count request on Deno; one
 * write per event-loop turn still cost a PostgreSQL token ~25 µs of the server's CPU (two lines per token, at
 * ~4,500 tokens/s a turn held few), which a 20 ms wait brings down to one write per ~200 lines. `flush` drains the
 * rest synchronously: the adapters call it at exit, so only a process killed outright loses its last 20 ms of lines.
 */
export function createBufferedLog(
  write: (text: string) => void,
  schedule: (fn: () => void) => void = (fn) => void setTimeout(fn, LOG_FLUSH_MS),
): BufferedLog {
  let lines: string[] = [];
  let chars = 0;
  let scheduled = false;
  const drain = () => {
    if (lines.length === 0) return;
    const text = lines.join("");
    lines = [];
    chars = 0;
    write(text);
  };
  const flush = () => {
    scheduled = false;
    drain();
  };
  // Under load many lines share a millisecond: format the timestamp once per millisecond, not once per line.
  let lastMs = -1;
  let lastIso = "";
  const log: Log = (event, fields = {}) => {
    const ms = Date.now();
    if (ms !== lastMs) {
      lastMs = ms;
      lastIso = new Date(ms).toISOString();
    }
    const line = JSON.stringify({ time: lastIso, event, ...fields }) + "\n";
    lines.push(line);
    chars += line.length;
    // A wait already scheduled stays: it writes the lines logged after this drain.
    if (chars >= FLUSH_CHARS) drain();
    else if (!scheduled) {
      scheduled = true;
      schedule(flush);
    }
  };
  return { log, flush };
}
