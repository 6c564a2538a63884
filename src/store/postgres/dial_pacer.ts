// Paces new connections to the PostgreSQL server: no storm of dials at a server that refuses or is not PostgreSQL.

/** The longest pause before dialling again after connections that failed one after another. */
const MAX_DIAL_PAUSE_MS = 400;

/** A connection open this long was of use, whatever it carried. */
const USEFUL_AFTER_MS = 2_000;

/**
 * After connections that failed one after another (refused, or closed before they were of any use, as a peer that
 * is not PostgreSQL closes them), each dial waits twice as long as the last, up to MAX_DIAL_PAUSE_MS: postgres.js
 * redials at once when a connection closes before its first query, which against such a peer opened hundreds of
 * connections a second. The cap keeps recovery quick: a server back from an outage is dialled within 0.4 s.
 */
export interface DialPacer {
  /** Milliseconds to wait before the next dial. */
  pause(): number;
  /**
   * A dial at `now`; returns what to call when that connection closes. It counts as a failure when it closed within
   * two seconds and no statement succeeded meanwhile.
   */
  dialed(now: number): (closedAt: number) => void;
  /** A statement succeeded: the server answers, so dials go at once again. */
  succeeded(): void;
  /** Dials since the pool opened. */
  attempts(): number;
  /** The pool is closed: no more dials (a redial postgres.js had scheduled is refused). */
  retire(): void;
  retired(): boolean;
}

/** A pacer that dials at once until a connection fails. */
export function createDialPacer(): DialPacer {
  let failures = 0;
  let attempts = 0;
  let successes = 0;
  let retired = false;
  return {
    pause: () => (failures === 0 ? 0 : Math.min(MAX_DIAL_PAUSE_MS, 25 * 2 ** Math.min(failures, 10))),
    dialed(now) {
      attempts++;
      const before = successes;
      return (closedAt) => {
        if (successes !== before || closedAt - now >= USEFUL_AFTER_MS) failures = 0;
        else failures++;
      };
    },
    succeeded() {
      successes++;
      failures = 0;
    },
    attempts: () => attempts,
    retire() {
      retired = true;
    },
    retired: () => retired,
  };
}
