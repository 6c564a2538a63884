// The three attacks of issue 27, the sign-in queue attack of issue 32 and the innocent client's probes, each a bounded loop over loopback.
import { hiddenFields, type IssuedCode } from "./client.ts";
import { bump, expensiveDocument, graphqlOutcome, type AttackVerdict, type ProbeSample } from "./stress_report.ts";
import { INNOCENT_TARGET, innocentMeets, QUEUE_ATTACKERS, QUEUE_SECONDS, queueAttack, type Innocents } from "./stress_queue.ts";
import { cookieHeaders, keepAlive, pause, remember, send, type Answer, type Jar, type SendOptions } from "./stress_http.ts";

/** Where the attacks come from: the innocent client stays on 127.0.0.1, so no address throttle it meets is theirs. */
export const ADDRESSES = {
  failingSignIns: ["127.0.0.2", "127.0.0.3"],
  successfulSignIns: "127.0.0.4",
  graphql: "127.0.0.5",
  signInQueue: QUEUE_ATTACKERS,
} as const;

/** What an attack needs: the server, the attacker's own account and token, when to stop, where to count. */
export interface AttackContext {
  base: string;
  attacker: { username: string; password: string; accessToken: string };
  /** Accounts of innocent people, for attacks whose verdict is whether they can still sign in. */
  innocents: Innocents;
  signal: AbortSignal;
  tally: Map<string, number>;
}

export interface Attack {
  id: "graphql" | "signin" | "success" | "queue";
  title: string;
  /** How long this attack's phase lasts, whatever `--seconds` says (its verdict needs that many innocent tries). */
  seconds?: number;
  /**
   * Runs until `ctx.signal`. An attack that returns a verdict is judged by it alone: the sign-in queue attack is a
   * flood of cheap requests sent from this process, whose own load shows in the probes' latency too.
   */
  run(ctx: AttackContext): Promise<AttackVerdict | void>;
}

/** An attacker's request is cut off at the phase's end at the latest; this bounds it before that. */
const ATTACK_TIMEOUT_MS = 60_000;
const FORM = { "content-type": "application/x-www-form-urlencoded" };
const JSON_TYPE = { "content-type": "application/json" };

/** The outcome an attacker's request is counted under: its status, or why it got none. */
function outcome(answer: Answer): string {
  if (answer.error === undefined) return String(answer.status);
  // Cut off by the phase's end: the server still owes (and may still be doing) the work.
  return answer.error === "aborted" ? "unanswered at the end" : answer.error;
}

/** A loop whose request failed in transport (the server is gone or refusing connections) waits before it retries. */
const RETRY_PAUSE_MS = 100;

/** (1) Four connections looping the two expensive documents in turn, each text new so a document cache misses. */
async function graphqlAttack(ctx: AttackContext): Promise<void> {
  const agent = keepAlive(4);
  // A random start, so two runs against one long-lived server send different texts too.
  let next = crypto.getRandomValues(new Uint32Array(1))[0]! % 2 ** 20;
  const worker = async () => {
    while (!ctx.signal.aborted) {
      const n = next++;
      const query = expensiveDocument(n % 2 === 0 ? "refused" : "answered", n);
      const answer = await send(`${ctx.base}/graphql`, {
        method: "POST", agent, localAddress: ADDRESSES.graphql, signal: ctx.signal, timeoutMs: ATTACK_TIMEOUT_MS,
        headers: { ...JSON_TYPE, authorization: `Bearer ${ctx.attacker.accessToken}` },
        body: JSON.stringify({ query }),
      });
      bump(ctx.tally, answer.error === undefined ? graphqlOutcome(answer.status, answer.body) : outcome(answer));
      if (answer.error !== undefined) await pause(RETRY_PAUSE_MS, ctx.signal);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  agent.destroy();
}

/** The sign-in form's hidden fields in `page`, or undefined when the page has no sign-in form. */
function signInForm(page: string): Record<string, string> | undefined {
  return page.includes('action="/signin"') ? hiddenFields(page, "/signin") : undefined;
}

/** GET /signin with a jar: the pre-session cookie lands in the jar, the form's fields are returned. */
async function openSignIn(ctx: AttackContext, jar: Jar, localAddress: string): Promise<Record<string, string> | undefined> {
  const page = await send(`${ctx.base}/signin`, { localAddress, signal: ctx.signal, timeoutMs: ATTACK_TIMEOUT_MS, headers: cookieHeaders(jar) });
  remember(jar, page.setCookies);
  const form = page.status === 200 ? signInForm(page.body) : undefined;
  if (!form) bump(ctx.tally, `GET /signin ${outcome(page)}`);
  return form;
}

/** POSTs the sign-in form with these credentials; the jar takes whatever cookies come back. */
async function postSignIn(ctx: AttackContext, jar: Jar, o: { localAddress: string; fields: Record<string, string> }): Promise<Answer> {
  const answer = await send(`${ctx.base}/signin`, {
    method: "POST", localAddress: o.localAddress, signal: ctx.signal, timeoutMs: ATTACK_TIMEOUT_MS,
    headers: { ...FORM, ...cookieHeaders(jar) }, body: new URLSearchParams(o.fields).toString(),
  });
  remember(jar, answer.setCookies);
  return answer;
}

/** Each failing sign-in loop sends at most one POST a second: the attack is 200 expensive requests, not a flood. */
const FAILING_PACE_MS = 1_000;

/**
 * (2) 200 loops of failing sign-ins, 100 from each of two addresses. Every guess names another (unknown) user, so
 * only the address keys of the throttle count them, and each loop reuses its form's CSRF token until the server
 * hands it a new one (a page with a fresh form), as a scripted attacker would.
 */
async function failingSignIns(ctx: AttackContext): Promise<void> {
  const worker = async (localAddress: string, id: number) => {
    const jar: Jar = new Map();
    let form: Record<string, string> | undefined;
    for (let i = 0; !ctx.signal.aborted; i++) {
      const started = performance.now();
      form ??= await openSignIn(ctx, jar, localAddress);
      if (form && !ctx.signal.aborted) {
        const fields = { ...form, username: `stress-guess-${id}-${i}`, password: "not-the-password" };
        const answer = await postSignIn(ctx, jar, { localAddress, fields });
        bump(ctx.tally, outcome(answer));
        form = signInForm(answer.body) ?? form;
      }
      await pause(FAILING_PACE_MS - (performance.now() - started), ctx.signal);
    }
  };
  const [a, b] = ADDRESSES.failingSignIns;
  await Promise.all(Array.from({ length: 200 }, (_, id) => worker(id % 2 === 0 ? a : b, id)));
}

/** (3) Eight loops signing the attacker's own account in with its right password, each time in a fresh browser. */
async function successfulSignIns(ctx: AttackContext): Promise<void> {
  const localAddress = ADDRESSES.successfulSignIns;
  const worker = async () => {
    while (!ctx.signal.aborted) {
      const jar: Jar = new Map();
      const form = await openSignIn(ctx, jar, localAddress);
      if (!form || ctx.signal.aborted) {
        await pause(RETRY_PAUSE_MS, ctx.signal);
        continue;
      }
      const fields = { ...form, username: ctx.attacker.username, password: ctx.attacker.password };
      const answer = await postSignIn(ctx, jar, { localAddress, fields });
      bump(ctx.tally, outcome(answer));
      if (answer.error !== undefined) await pause(RETRY_PAUSE_MS, ctx.signal);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

/** (4) The sign-in queue attack: its verdict is how often the innocent people still signed in. */
async function signInQueue(ctx: AttackContext): Promise<AttackVerdict> {
  const result = await queueAttack({ base: ctx.base, innocents: ctx.innocents, signal: ctx.signal, tally: ctx.tally });
  const line = (name: string, r: (typeof result)["returning"]) =>
    `innocent sign-ins, ${name}: ${r.successes}/${r.tries} (${Object.entries(r.outcomes).map(([k, v]) => `${k} x${v}`).join(", ")})`;
  const meets = innocentMeets(result);
  const lines = [line("returning browser", result.returning), line("new browser each time", result.newBrowser)];
  lines.push(`innocent target (at least ${INNOCENT_TARGET * 100} % each): ${meets ? "met" : "MISSED"}`);
  return { meets, lines, figures: result };
}

/** The attacks in the order they run; `--only` picks one by id. */
export const ATTACKS: readonly Attack[] = [
  { id: "graphql", title: "attack 1: 4 connections looping expensive GraphQL documents", run: graphqlAttack },
  { id: "signin", title: "attack 2: 200 parallel failing sign-ins from 127.0.0.2 and 127.0.0.3", run: failingSignIns },
  { id: "success", title: "attack 3: 8 loops of successful sign-ins for one account", run: successfulSignIns },
  {
    id: "queue", seconds: QUEUE_SECONDS, run: signInQueue,
    title: `attack 4: wrong passwords for new usernames back to back, 8 connections each from ${QUEUE_ATTACKERS.join(" and ")}, an innocent person signing in every 2 s`,
  },
];

/** What the innocent client holds for one phase: a token for GraphQL and unused PKCE codes for the exchange. */
export interface InnocentCredentials {
  base: string;
  accessToken: string;
  codes: IssuedCode[];
  client: { client_id: string; client_secret: string; redirect_uri: string };
}

/** One innocent request; undefined when it has nothing left to send (no unused code). */
export interface Probe {
  name: string;
  run(): Promise<ProbeSample | undefined>;
}

/** Per probe: generous, so a stalled request shows its real wait; the verdict already fails anything past 1 s. */
const PROBE_TIMEOUT_MS = 15_000;

/** A probe that sends one request on its own keep-alive connection and checks the answer. */
function probe(name: string, build: () => { path: string; init?: Partial<SendOptions> } | undefined, ok: (a: Answer) => boolean): Probe {
  const agent = keepAlive(1);
  return {
    name,
    async run() {
      const request = build();
      if (!request) return undefined;
      const answer = await send(request.path, { agent, timeoutMs: PROBE_TIMEOUT_MS, ...request.init });
      const good = answer.error === undefined && ok(answer);
      return good ? { ms: answer.ms, ok: true } : { ms: answer.ms, ok: false, outcome: answer.error ?? String(answer.status) };
    },
  };
}

/** The four probes of issue 27: the health check, the sign-in page, a small GraphQL query, a PKCE code exchange. */
export function innocentProbes(c: InnocentCredentials): Probe[] {
  const graphqlBody = JSON.stringify({ query: "{ fields { total_count } }" });
  let nextCode = 0;
  return [
    probe("GET /healthz", () => ({ path: `${c.base}/healthz` }), (a) => a.status === 200),
    probe("GET /signin", () => ({ path: `${c.base}/signin` }), (a) => a.status === 200),
    probe("graphql total_count", () => ({
      path: `${c.base}/graphql`,
      init: { method: "POST", headers: { ...JSON_TYPE, authorization: `Bearer ${c.accessToken}` }, body: graphqlBody },
    }), (a) => a.status === 200 && graphqlOutcome(a.status, a.body) === "200 data"),
    probe("PKCE code exchange", () => {
      const issued = c.codes[nextCode++];
      if (!issued) return undefined;
      const body = JSON.stringify({
        grant_type: "authorization_code", client_id: c.client.client_id, client_secret: c.client.client_secret,
        code: issued.code, redirect_uri: c.client.redirect_uri, code_verifier: issued.verifier,
      });
      return { path: `${c.base}/oauth/token`, init: { method: "POST", headers: JSON_TYPE, body } };
    }, (a) => a.status === 200 && a.body.includes('"access_token"')),
  ];
}
