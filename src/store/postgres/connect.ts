// The one module that loads postgres.js: opens a small pool with our session settings behind a thin adapter of our own.
// It also dials postgres.js's sockets (node:net, on Node and Deno alike), so it may import that one runtime module.
import net from "node:net";
import type { Sql, TransactionSql } from "postgres";
import { createDialPacer, type DialPacer } from "./dial_pacer.ts";

/** A value bound to a placeholder ($1, $2, …). */
export type PgValue = null | number | string | boolean | Uint8Array;
/** A result row by column name; int8 columns arrive as numbers (see INT8). */
export type PgRow = Record<string, unknown>;

/** Statements on one connection: the pool's next free one, or the transaction's own. */
export interface PgQueryable {
  /** Runs one statement with placeholders ($1, $2, …) bound to `params`; resolves with its rows. */
  query<T extends PgRow = PgRow>(text: string, params?: readonly PgValue[]): Promise<T[]>;
  /**
   * Runs a script of several statements without parameters (the simple query protocol): for migrations only,
   * since nothing in it can be bound.
   */
  exec(script: string): Promise<void>;
}

/**
 * What the pool has asked of the server since it opened. A round trip is one wait for the server: each statement
 * outside a transaction, and in a transaction its BEGIN, its COMMIT (or ROLLBACK) and each statement sent while none
 * of the same transaction was in flight (postgres.js pipelines the others on the one connection).
 */
export interface PgStats {
  roundTrips: number;
  statements: number;
}

/** A pool of connections to one PostgreSQL database. */
export interface PgClient extends PgQueryable {
  /** The database for messages: its URL without the password. */
  readonly where: string;
  /** A snapshot of the counts since the pool opened (two additions per statement, cheap enough for every query). */
  stats(): PgStats;
  /**
   * Runs `fn` in one READ COMMITTED transaction on one connection, committing when it resolves and rolling back
   * when it throws. When PostgreSQL aborts the transaction as a serialization failure (40001) or a deadlock victim
   * (40P01), everything `fn` wrote was rolled back with it, so `fn` runs again from the start, at most
   * `retries` more times (default 2), and decides again on what is committed by then: a code another transaction
   * claimed meanwhile is seen as claimed, so a retry never turns a replay into a success. `fn` must await nothing
   * but the database, since its work outside the transaction would be done twice.
   * @throws the last error when it is not one of those two, or when the retries are spent
   */
  transaction<T>(fn: (tx: PgQueryable) => Promise<T>, options?: { retries?: number }): Promise<T>;
  /** Waits for running queries (at most `timeoutSeconds`, default 5), then closes every connection. */
  close(options?: { timeoutSeconds?: number }): Promise<void>;
}

export interface PgOptions {
  /** Connections in the pool (default 4): instances × max must stay below the server's max_connections. */
  max?: number;
  /**
   * Named prepared statements (default true): false for PgBouncer in transaction mode before 1.21, which cannot
   * keep a statement prepared on one server connection for the next transaction that lands on another.
   */
  prepare?: boolean;
  /** Milliseconds a statement may run before the server cancels it (default 5 000). */
  statementTimeoutMs?: number;
  /** Milliseconds a statement may wait for a row or table lock (default 2 000). */
  lockTimeoutMs?: number;
  /** Milliseconds a transaction may sit idle before the server ends its session (default 10 000). */
  idleInTransactionTimeoutMs?: number;
  /**
   * Send the three limits above in each connection's startup message (default true). False behind PgBouncer, which
   * refuses startup parameters it does not track: set them on the role instead
   * (`ALTER ROLE fieldgate SET statement_timeout = '5s'`, and the same for the other two).
   */
  sendLimits?: boolean;
  /**
   * Seconds an unused connection stays open (default 30), so idle pools leave the server's connection slots to
   * others (the operator's psql, pg_dump, the CLI); 0 keeps connections until close().
   */
  idleTimeoutSeconds?: number;
  /**
   * Seconds openPostgres waits for the server to answer its first statement (default 10): a server that refuses,
   * or a peer that is not PostgreSQL, fails the open within this time after a bounded number of dials.
   */
  connectTimeoutSeconds?: number;

  /** Server notices ("relation already exists, skipping"); postgres.js would print them with console.log. */
  onNotice?: (message: string) => void;
}

/** SQLSTATEs after which PostgreSQL has rolled the whole transaction back and running it again is safe. */
const RETRYABLE = new Set(["40001", "40P01"]);

/** True for a serialization failure or a deadlock victim (see RETRYABLE). */
export function isRetryable(error: unknown): boolean {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && RETRYABLE.has(code);
}

/**
 * int8 (ids, epoch seconds, COUNT(*)) as a Number, the way node:sqlite returns INTEGER, so row mappers can be
 * shared. postgres.js returns int8 as a string by default; a value past 2^53 throws rather than rounding silently.
 */
const INT8 = {
  to: 20,
  from: [20],
  serialize: (value: number) => String(value),
  parse: (text: string): number => {
    const value = Number(text);
    if (!Number.isSafeInteger(value)) {
      throw new RangeError(`int8 value ${text} does not fit a JavaScript number`);
    }
    return value;
  },
};

/**
 * Opens a pool to the database at `url` (postgres://user:password@host:port/database). Connections open lazily, on
 * the first query; postgres.js itself is imported here, on first use, so a SQLite deployment never loads it.
 */
export async function openPostgres(url: string, options: PgOptions = {}): Promise<PgClient> {
  const { default: postgres } = await import("postgres");
  const prepare = options.prepare ?? true;
  const connectTimeoutSeconds = options.connectTimeoutSeconds ?? 10;
  const pacer = createDialPacer();
  const settings = {
    max: 1,
    prepare,
    connect_timeout: connectTimeoutSeconds,
    idle_timeout: options.idleTimeoutSeconds ?? 30,
    // No pause of postgres.js's own (up to 20 s, for which requests waited): dial() paces redials, at most 0.4 s apart.
    backoff: () => 0,
    socket: (settings: DialSettings) => dial(settings, pacer),
    // postgres.js would look up array type ids at each connect, for array parameters, which no query here uses.
    fetch_types: false,
    types: { int8: INT8 },
    onnotice: (notice: { message?: unknown }) => options.onNotice?.(String(notice.message ?? "")),
    // Sent in the startup message, so every connection has them before its first query, with no extra round trip:
    // a stuck statement or lock wait fails the request instead of holding a pooled connection, and a session that
    // dies mid-transaction (a killed process, a lost network) releases its row locks.
    connection: options.sendLimits === false ? {} : {
      statement_timeout: options.statementTimeoutMs ?? 5_000,
      lock_timeout: options.lockTimeoutMs ?? 2_000,
      idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs ?? 10_000,
    },
  } as Parameters<typeof postgres>[1];
  const lanes = createLanes(Array.from({ length: Math.max(1, options.max ?? 4) }, () => postgres(url, settings)));
  const counts: PgStats = { roundTrips: 0, statements: 0 };
  await firstAnswer(lanes, connectTimeoutSeconds, pacer);
  return {
    where: describePostgresUrl(url),
    ...queryable(lanes.statement, prepare, counts),
    stats: () => ({ ...counts }),
    async transaction<T>(fn: (tx: PgQueryable) => Promise<T>, { retries = 2 } = {}): Promise<T> {
      for (let attempt = 0;; attempt++) {
        // BEGIN, then COMMIT or ROLLBACK: postgres.js awaits each before going on, so each is a round trip.
        counts.roundTrips += 2;
        counts.statements += 2;
        try {
          // sql.begin rolls back and rethrows when fn or the COMMIT fails; nothing of this attempt stays.
          return (await lanes.transaction((sql) =>
            sql.begin((tx) => fn(queryable(() => ({ sql: tx }), prepare, counts, { inFlight: 0 })))
          )) as T;
        } catch (error) {
          // No pause before the retry: the winner holds the locks, so the new attempt queues behind it anyway.
          if (attempt >= retries || !isRetryable(error)) throw error;
        }
      }
    },
    async close({ timeoutSeconds = 5 } = {}) {
      await lanes.end(timeoutSeconds);
      pacer.retire();
    },
  };
}

/**
 * The pool: one postgres.js client of one connection per lane, each statement sent on the lane with the least
 * work in flight, the first such lane on a tie. postgres.js 3.4's own pool of several connections moves them
 * between queues whose arrays keep a slot for every connection shifted off and scan them all on each move, so
 * with more than one connection its CPU per statement grew with the statements sent since the last moment the
 * pool was fully busy (+28 µs per statement after 160,000 at a steady one at a time, bench/pg_pool_growth.ts).
 * A client of one connection never holds more than one in a queue. The first lane takes the work while it is the
 * least loaded, so under light load the others stay idle and close after idleTimeoutSeconds.
 */
interface Lanes {
  /** Borrows the least loaded lane for one statement; `done` must be called once it has settled. */
  statement(): { sql: Sql; done: () => void };
  /** Runs `fn` on the least loaded lane, counted as busy with a transaction until it settles. */
  transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T>;
  /** The first lane, for the probe at open. */
  readonly first: Sql;
  end(timeoutSeconds: number): Promise<void>;
}

/**
 * A lane in a transaction counts as this many statements: statements go to a lane without one while there is
 * one, since on a lane holding a transaction they wait for its COMMIT.
 */
const TRANSACTION_LOAD = 1_000;

function createLanes(clients: readonly Sql[]): Lanes {
  const load = clients.map(() => 0);
  const least = (): number => {
    let best = 0;
    for (let i = 1; i < load.length; i++) if (load[i]! < load[best]!) best = i;
    return best;
  };
  return {
    statement() {
      const lane = least();
      load[lane]!++;
      return { sql: clients[lane]!, done: () => void load[lane]!-- };
    },
    async transaction(fn) {
      const lane = least();
      load[lane]! += TRANSACTION_LOAD;
      try {
        return await fn(clients[lane]!);
      } finally {
        load[lane]! -= TRANSACTION_LOAD;
      }
    },
    first: clients[0]!,
    async end(timeoutSeconds) {
      await Promise.all(clients.map((sql) => sql.end({ timeout: timeoutSeconds })));
    },
  };
}

/** What postgres.js passes its `socket` function: the hosts and ports of the URL, or a Unix socket path. */
interface DialSettings {
  host: string[];
  port: number[];
  path?: string | false;
}

/**
 * A socket to the server, dialled after the pacer's pause. It is handed over still connecting: postgres.js writes
 * its startup message, which the socket sends once connected, and sees a refusal as the socket's error event.
 */
async function dial(settings: DialSettings, pacer: DialPacer): Promise<net.Socket> {
  const pause = pacer.pause();
  if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
  // postgres.js fails the connection's waiting statement with this, and dials no more for it.
  if (pacer.retired()) throw Object.assign(new Error("the pool is closed"), { code: "CONNECTION_ENDED" });
  const closed = pacer.dialed(performance.now());
  const index = (pacer.attempts() - 1) % Math.max(1, settings.host.length);
  const socket = settings.path
    ? net.connect(settings.path)
    : net.connect(settings.port[index] ?? 5432, settings.host[index] ?? "localhost");
  socket.once("close", () => closed(performance.now()));
  return socket;
}

/**
 * Waits for the server's answer to a first statement, at most `seconds`: a URL whose server refuses fails at once
 * (ECONNREFUSED, or PostgreSQL's own refusal), one whose peer never completes the startup fails when the time is up,
 * naming how many dials were made. Either way every connection is closed before it throws.
 * @throws the refusal, or an Error with code CONNECT_TIMEOUT
 */
async function firstAnswer(lanes: Lanes, seconds: number, pacer: DialPacer): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(
        `no PostgreSQL answer within ${seconds} s after ${pacer.attempts()} connection attempts (is it a PostgreSQL server?)`,
      );
      reject(Object.assign(error, { code: "CONNECT_TIMEOUT" }));
    }, seconds * 1000);
  });
  const probe = lanes.first.unsafe("SELECT 1");
  try {
    await Promise.race([probe, deadline]);
    pacer.succeeded();
  } catch (error) {
    probe.catch(() => {});
    pacer.retire();
    await lanes.end(0);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** `url` without its password (and query), fit for a message or a log line. */
export function describePostgresUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = "";
    parsed.search = "";
    return parsed.href;
  } catch {
    return "the PostgreSQL database (its URL does not parse)";
  }
}

/**
 * Statements on the connection `borrow` lends, counted into `counts`. `connection` is given for a transaction's own
 * connection, where a statement sent while another is in flight rides the same wait; without it (the pool) every
 * statement is a wait of its own, since the pool gives concurrent statements separate connections.
 */
function queryable(
  borrow: () => { sql: Sql | TransactionSql; done?: () => void },
  prepare: boolean,
  counts: PgStats,
  connection?: { inFlight: number },
): PgQueryable {
  const sent = () => {
    counts.statements++;
    if (!connection || connection.inFlight === 0) counts.roundTrips++;
  };
  return {
    async query<T extends PgRow>(text: string, params: readonly PgValue[] = []): Promise<T[]> {
      sent();
      if (connection) connection.inFlight++;
      const { sql, done } = borrow();
      try {
        // `unsafe` is postgres.js's name for "text not written as a tagged template"; the values are still bound
        // parameters, never spliced into the text. Rows come back as a plain array, without postgres.js's extras.
        return Array.from(await sql.unsafe(text, storable(params) as never[], { prepare })) as unknown as T[];
      } finally {
        done?.();
        if (connection) connection.inFlight--;
      }
    },
    async exec(script) {
      sent();
      const { sql, done } = borrow();
      try {
        await sql.unsafe(script).simple();
      } finally {
        done?.();
      }
    },
  };
}

/**
 * The parameters with each NUL in a string replaced by U+FFFD. PostgreSQL text cannot hold NUL (the statement fails
 * with 22021), while request input reaches the store as any JavaScript string: a client_id or username with a NUL
 * must find nothing and be recorded, not turn into a 500. U+FFFD is what UTF-8 encoding already makes of a lone
 * surrogate, so the two kinds of text PostgreSQL cannot hold are treated alike.
 */
function storable(params: readonly PgValue[]): PgValue[] {
  let copy: PgValue[] | undefined;
  for (let i = 0; i < params.length; i++) {
    const value = params[i];
    if (typeof value === "string" && value.includes("\0")) (copy ??= [...params])[i] = value.replaceAll("\0", "\uFFFD");
  }
  return copy ?? (params as PgValue[]);
}
