// The sign-in queue attack of issue 32: two addresses fill the password queue while an innocent person signs in.
import { hiddenFields } from "./client.ts";
import { bump } from "./stress_report.ts";
import { cookieHeaders, keepAlive, pause, remember, send, type Answer, type Jar } from "./stress_http.ts";

/** The attackers' addresses: neither is the innocent's (127.0.0.1, the default source address). */
export const QUEUE_ATTACKERS = ["127.0.0.6", "127.0.0.7"] as const;
/** Connections per attacking address, each sending its next guess as soon as the last is answered. */
const CONNECTIONS = 8;
/** The innocent person tries to sign in this often, from 127.0.0.1. */
export const INNOCENT_EVERY_MS = 2_000;
/** The target: at least this share of the innocent's sign-ins succeed. */
export const INNOCENT_TARGET = 0.9;
/** Sign-ins the innocent person tries in each kind of browser. */
const INNOCENT_TRIES = 10;
/** How long the attack runs: the innocent's tries, and some room for slow answers. */
export const QUEUE_SECONDS = 30;
const TIMEOUT_MS = 30_000;
const FORM = { "content-type": "application/x-www-form-urlencoded" };
/** The sessions' cookie names; the innocent drops these between sign-ins and keeps the device cookie. */
const SESSION_COOKIE = /session$/;

/**
 * Innocent accounts, two per kind of browser used in turn: ten sign-ins in 20 s of one account would meet the
 * successful sign-in limit (FIELDGATE_SIGNIN_LIMIT, 10 a minute), which is not what this attack measures.
 */
export interface Innocents {
  returning: readonly [Credentials, Credentials];
  newBrowser: readonly [Credentials, Credentials];
}

interface Credentials {
  username: string;
  password: string;
}

export interface QueueContext {
  base: string;
  innocents: Innocents;
  signal: AbortSignal;
  tally: Map<string, number>;
}

/** What the innocent person got, by kind of browser. */
export interface InnocentSignIns {
  /** A browser that signed in before the attack and keeps its device cookie, as a person's own browser does. */
  returning: { tries: number; successes: number; outcomes: Record<string, number> };
  /** A new browser every time (no device cookie): a stranger to the server, like each attacker request. */
  newBrowser: { tries: number; successes: number; outcomes: Record<string, number> };
}

const outcome = (answer: Answer) => answer.error ?? String(answer.status);

/** GET /signin then POST it with `credentials` from `localAddress`, through `jar`. */
async function signInOnce(base: string, jar: Jar, o: { credentials: { username: string; password: string }; localAddress?: string; signal?: AbortSignal }) {
  const common = { localAddress: o.localAddress, signal: o.signal, timeoutMs: TIMEOUT_MS };
  const page = await send(`${base}/signin`, { ...common, headers: cookieHeaders(jar) });
  remember(jar, page.setCookies);
  if (page.status !== 200 || !page.body.includes('action="/signin"')) return page;
  const fields = { ...hiddenFields(page.body, "/signin"), ...o.credentials };
  const answer = await send(`${base}/signin`, {
    ...common, method: "POST", headers: { ...FORM, ...cookieHeaders(jar) }, body: new URLSearchParams(fields).toString(),
  });
  remember(jar, answer.setCookies);
  return answer;
}

/** One attacking connection: one form, then wrong passwords for new usernames back to back until the phase ends. */
async function attackLoop(ctx: QueueContext, localAddress: string, id: number): Promise<void> {
  const agent = keepAlive(1);
  const jar: Jar = new Map();
  const page = await send(`${ctx.base}/signin`, { agent, localAddress, signal: ctx.signal, timeoutMs: TIMEOUT_MS });
  remember(jar, page.setCookies);
  const form = page.status === 200 ? hiddenFields(page.body, "/signin") : undefined;
  for (let i = 0; form && !ctx.signal.aborted; i++) {
    const fields = { ...form, username: `queue-guess-${id}-${i}@example.com`, password: "not-the-password" };
    const answer = await send(`${ctx.base}/signin`, {
      method: "POST", agent, localAddress, signal: ctx.signal, timeoutMs: TIMEOUT_MS,
      headers: { ...FORM, ...cookieHeaders(jar) }, body: new URLSearchParams(fields).toString(),
    });
    bump(ctx.tally, answer.error === "aborted" ? "unanswered at the end" : outcome(answer));
    // A transport failure (the server refusing connections) would otherwise spin.
    if (answer.error !== undefined) await pause(100, ctx.signal);
  }
  agent.destroy();
}

/** The innocent person: one sign-in every INNOCENT_EVERY_MS, in their own browser and in a new one, INNOCENT_TRIES times. */
async function innocentLoop(ctx: QueueContext, jars: readonly Jar[], result: InnocentSignIns): Promise<void> {
  const record = (kind: keyof InnocentSignIns, answer: Answer) => {
    result[kind].tries++;
    if (answer.status === 303) result[kind].successes++;
    result[kind].outcomes[outcome(answer)] = (result[kind].outcomes[outcome(answer)] ?? 0) + 1;
  };
  for (let i = 0; i < INNOCENT_TRIES && !ctx.signal.aborted; i++) {
    const started = performance.now();
    const jar = jars[i % 2]!;
    for (const name of [...jar.keys()]) if (SESSION_COOKIE.test(name)) jar.delete(name);
    // Both at once: each finds the queue as the attack left it.
    const [returning, fresh] = await Promise.all([
      signInOnce(ctx.base, jar, { credentials: ctx.innocents.returning[i % 2]! }),
      signInOnce(ctx.base, new Map(), { credentials: ctx.innocents.newBrowser[i % 2]! }),
    ]);
    if (ctx.signal.aborted && (returning.error === "aborted" || fresh.error === "aborted")) break;
    record("returning", returning);
    record("newBrowser", fresh);
    await pause(INNOCENT_EVERY_MS - (performance.now() - started), ctx.signal);
  }
}

/**
 * Runs the attack for as long as `ctx.signal` allows: QUEUE_ATTACKERS x CONNECTIONS loops of wrong passwords, and the
 * innocent person signing in every INNOCENT_EVERY_MS, whose own browsers signed in once before the attack began.
 */
export async function queueAttack(ctx: QueueContext): Promise<InnocentSignIns> {
  const jars: Jar[] = [new Map(), new Map()];
  for (const [i, jar] of jars.entries()) {
    const first = await signInOnce(ctx.base, jar, { credentials: ctx.innocents.returning[i]! });
    if (first.status !== 303) throw new Error(`the innocent's sign-in before the attack answered ${outcome(first)}`);
  }
  const result: InnocentSignIns = {
    returning: { tries: 0, successes: 0, outcomes: {} },
    newBrowser: { tries: 0, successes: 0, outcomes: {} },
  };
  const loops = QUEUE_ATTACKERS.flatMap((address, a) => Array.from({ length: CONNECTIONS }, (_, c) => attackLoop(ctx, address, a * CONNECTIONS + c)));
  // The innocent starts once every attacking connection has had time to fill its place.
  await pause(500, ctx.signal);
  await Promise.all([...loops, innocentLoop(ctx, jars, result)]);
  return result;
}

/** The verdict: each kind of innocent browser succeeded at least INNOCENT_TARGET of the times it tried. */
export function innocentMeets(result: InnocentSignIns): boolean {
  return Object.values(result).every((r) => r.tries > 0 && r.successes >= INNOCENT_TARGET * r.tries);
}
