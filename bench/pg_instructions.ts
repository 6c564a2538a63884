// `node bench/pg_instructions.ts [--only NAME]`: instructions per execution of the statements the PostgreSQL store
// sends on the hot paths, counted by valgrind's callgrind in a single-user backend. The counts are deterministic: an
// A/B of a statement's shape or of the schema (run it in both checkouts) reads the same every time, where CPU time
// on a shared 2-core VM moves by a third between runs. Counted: the EXECUTE of the statement, prepared as the store
// sends it (the text and values recorded from one real call) and run with a generic plan, as the store's prepared
// statements are; not counted: the network, the protocol, the WAL writer, and the printing of result rows that only
// a single-user backend does (subtracted). Needs valgrind (Debian: apt-get install valgrind).
import { createHash, randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { findPostgresBinaries, type PostgresCluster, startPostgresCluster } from "../scripts/lib/postgres_cluster.ts";
import { openPostgres, type PgClient, type PgValue } from "../src/store/postgres/connect.ts";
import { createPostgresStore } from "../src/store/postgres/store.ts";
import { migratePostgres } from "../src/store/postgres/migrations.ts";
import type { AuthenticatedClient } from "../src/store/contract.ts";
import { REFERENCE_SCHEMA } from "./pg_reference_db.ts";

const { values } = parseArgs({ options: { only: { type: "string" } } });
const sha = (text: string) => createHash("sha256").update(text).digest("hex");
/** md5(g::text) as the seed below writes it: the hash of one of the seeded tokens. */
const md5Hash = (g: number) => createHash("md5").update(String(g)).digest("hex");

/** A statement as the store sent it, and the values that must differ at each execution (a new token's hash). */
interface Recorded {
  name: string;
  text: string;
  params: readonly PgValue[];
  /** By parameter index: the value for execution `n` of a run (numbered on from run to run). */
  fresh?: ReadonlyMap<number, (n: number) => PgValue>;
}

/** A fresh value for each execution: the recorded one with a suffix. */
const suffixed = (value: PgValue) => (n: number) => `${value}-${n}`;

/** A SQL literal for a value the store bound as text (postgres.js sends every parameter as text). */
function literal(value: PgValue): string {
  if (value === null || value === undefined) return "NULL";
  return `'${String(value).replaceAll("'", "''")}'`;
}

/** The instructions the single-user backend executes for `script`, less those spent printing result rows. */
function instructions(cluster: PostgresCluster, script: string): number {
  let out = "";
  const { status, output } = cluster.singleUser(script, (dir) => {
    out = join(dir, "callgrind.out");
    return ["valgrind", "--tool=callgrind", `--callgrind-out-file=${out}`];
  });
  try {
    if (status !== 0 || /\bERROR:/.test(output)) throw new Error(`the single-user backend failed:\n${output.slice(-2000)}`);
    const total = Number(/^summary: (\d+)/m.exec(readFileSync(out, "utf8"))?.[1]);
    const annotated = spawnSync("callgrind_annotate", ["--inclusive=yes", "--threshold=100", out]).stdout.toString();
    let printing = 0;
    for (const match of annotated.matchAll(/^\s*([\d,]+) \(.*?\)\s+\S*:(debugtup|debugStartup)\b/gm)) {
      printing += Number(match[1]!.replaceAll(",", ""));
    }
    return total - printing;
  } finally {
    rmSync(out, { force: true });
  }
}

/** PREPARE once, then `count` EXECUTEs numbered from `first`, each with its fresh values. */
function script(statement: Recorded, count: number, first: number): string {
  const lines = ["SET plan_cache_mode = force_generic_plan;", `PREPARE q AS ${statement.text};`];
  for (let i = first; i < first + count; i++) {
    const args = statement.params.map((value, at) => literal(statement.fresh?.get(at)?.(i) ?? value));
    lines.push(args.length === 0 ? "EXECUTE q;" : `EXECUTE q(${args.join(", ")});`);
  }
  return lines.join("\n\n") + "\n\n";
}

async function seedAndRecord(pg: PgClient): Promise<Recorded[]> {
  await migratePostgres(pg);
  let sent: { text: string; params: readonly PgValue[] }[] = [];
  const recording: PgClient = {
    ...pg,
    query: (text, params = []) => (sent.push({ text, params }), pg.query(text, params)),
  };
  const store = createPostgresStore(recording);
  const now = Math.floor(Date.now() / 1000);
  const robot = await store.users.insert({ username: "robot@instructions.example", kind: "integration", now });
  const secret = "fgcs_" + randomBytes(32).toString("base64url");
  await store.clients.insert({ clientId: "instructions-cc", secretHash: sha(secret), name: "Instructions",
    grantType: "client_credentials", redirectUris: [], scope: "fields:read", integrationUserId: robot.id, now });
  await pg.exec(`INSERT INTO organizations (slug, name, created_at) VALUES ('acme', 'Acme', ${now});
    INSERT INTO memberships (user_id, organization_id, created_at) SELECT ${robot.id}, id, ${now} FROM organizations;
    INSERT INTO fields (organization_id, name, area_ha, crop, season, boundary, centroid_lon, centroid_lat, created_at,
      updated_at) SELECT o.id, 'f' || g, 1, (ARRAY['wheat', 'maize', 'barley', NULL])[1 + g % 4],
      (ARRAY['2025', '2026'])[1 + g % 2], '{}', 0, 0, ${now}, ${now} FROM organizations o, generate_series(1, 500) g`);
  const recorded: Recorded[] = [{ name: "SELECT 1 (the floor: one EXECUTE of nothing)", text: "SELECT 1", params: [] }];
  /** Records the last `names.length` statements `call` sends; `fresh` gives a recorded value its maker, if any. */
  const record = async (names: string[], call: () => Promise<unknown>,
    fresh: (value: PgValue) => ((n: number) => PgValue) | undefined = () => undefined) => {
    sent = [];
    await call();
    for (const [i, { text, params }] of sent.slice(-names.length).entries()) {
      const makers = new Map(params.flatMap((value, at) => {
        const maker = fresh(value);
        return maker ? [[at, maker] as const] : [];
      }));
      recorded.push({ name: names[i]!, text, params, fresh: makers });
    }
  };
  const last = (name: string, call: () => Promise<unknown>, fresh?: unknown) =>
    record([name], call, (value) => (value === fresh ? suffixed(value) : undefined));
  const times = { now, windowSeconds: 900 };
  const attempt = { clientId: "instructions-cc", digest: sha(secret),
    keys: { registered: { key: "client:instructions-cc", limit: 10 }, unknown: { key: "ip:127.0.0.1", limit: 50 } } };
  await last("client authentication (its read)", () => store.throttles.authenticateClient(attempt, times));
  const { client } = await store.throttles.authenticateClient(attempt, times);
  const issue = (authenticated: AuthenticatedClient, tokenHash: string) => store.tokens.issue({
    clientId: authenticated.id, userId: robot.id, familyId: null, authenticated,
    tokens: [{ tokenHash, kind: "access", grantType: "client_credentials", scope: "fields:read", issuedAt: now,
      expiresAt: now + 1800 }],
    audit: { at: now, event: "token_issued", clientId: "instructions-cc", userId: robot.id, ip: "127.0.0.1",
      detail: { grant_type: "client_credentials", scope: "fields:read" } },
  });
  const tokenHash = sha(`token ${now}`);
  await last("client-credentials issuance, with its audit row", () => issue(client!, tokenHash), tokenHash);
  // The store remembers the client now: the next token is this statement alone, which also re-checks the gate.
  const { client: remembered } = await store.throttles.authenticateClient({ ...attempt, fromMemory: true }, times);
  if (!remembered?.remembered) throw new Error("pg_instructions: the client was not answered from memory");
  const rememberedHash = sha(`remembered ${now}`);
  await last("client-credentials issuance of a remembered client", () => issue(remembered, rememberedHash), rememberedHash);
  await last("bearer check with the field total", () => store.tokens.findActiveAccess(tokenHash, now));

  // A person's authorization_code grant with a family of live refresh tokens, one for each execution to claim.
  const person = await store.users.insert({ username: "person@instructions.example", kind: "person", now });
  const appSecret = "fgcs_" + randomBytes(32).toString("base64url");
  await store.clients.insert({ clientId: "instructions-app", secretHash: sha(appSecret), name: "Instructions app",
    grantType: "authorization_code", redirectUris: ["https://app.example/callback"], scope: "fields:read",
    integrationUserId: null, now });
  const { client: app } = await store.throttles.authenticateClient({ ...attempt, clientId: "instructions-app",
    digest: sha(appSecret) }, times);
  await pg.exec(`INSERT INTO grant_families (id, client_id, user_id, scope, created_at)
      VALUES ('instructions-family', ${app!.id}, ${person.id}, 'fields:read', ${now});
    INSERT INTO tokens (token_hash, kind, grant_type, family_id, client_id, user_id, scope, issued_at, expires_at)
      SELECT 'refresh-' || g, 'refresh', 'authorization_code', 'instructions-family', ${app!.id}, ${person.id},
        'fields:read', ${now}, ${now + 86_400} FROM generate_series(0, 240) g`);
  const live = (await pg.query<{ id: number }>(
    "SELECT id FROM tokens WHERE family_id = 'instructions-family' ORDER BY id",
  )).map((row) => Number(row.id));
  const pair = [sha(`access ${now}`), sha(`refresh ${now}`)];
  await record(["refresh rotation: the presented token's read", "refresh rotation: the claim, the new pair and its audit row"],
    () => store.tokens.rotateRefresh({
      refreshHash: "refresh-240", client: app as AuthenticatedClient, now, graceSeconds: 0,
      next: () => ({
        tokens: pair.map((hash, i) => ({ tokenHash: hash, kind: i === 0 ? "access" : "refresh", grantType: "refresh_token",
          scope: "fields:read", issuedAt: now, expiresAt: now + (i === 0 ? 28_800 : 2_592_000) } as const)),
        audit: { at: now, event: "token_refreshed", clientId: "instructions-app", userId: person.id, ip: "127.0.0.1",
          detail: { family: "instructions-family" } },
      }),
    }),
    // Each execution claims a refresh token of its own (the 241st is the recorded one) and inserts new hashes.
    (value) => value === live[240] ? (n) => live[n]! : pair.includes(value as string) ? suffixed(value) : undefined);
  // The reference servers' statements (bench/references_postgres.ts), on their own tables.
  await pg.exec(REFERENCE_SCHEMA);
  await pg.exec(`INSERT INTO ref_clients VALUES (1, 'instructions-cc', '${sha(secret)}')`);
  const reference = (name: string, text: string, params: PgValue[], fresh?: Recorded["fresh"]) =>
    recorded.push({ name: `reference: ${name}`, text, params, fresh });
  reference("client SELECT", "SELECT id, secret_hash FROM ref_clients WHERE client_id = $1", ["instructions-cc"]);
  reference("token INSERT", "INSERT INTO ref_tokens (token_hash, kind, client_id, expires_at) VALUES ($1, 'access', $2, $3)",
    [tokenHash, 1, now + 1800], new Map([[0, suffixed(tokenHash)]]));
  reference("bearer SELECT", "SELECT id FROM ref_tokens WHERE token_hash = $1 AND kind = 'access' AND expires_at > $2",
    [md5Hash(1), now]);
  await pg.exec(`INSERT INTO ref_tokens (token_hash, kind, client_id, expires_at)
    SELECT 'refresh-' || g, 'refresh', 1, ${now + 86_400} FROM generate_series(0, 240) g`);
  reference("refresh UPDATE", `UPDATE ref_tokens SET rotated_at = $1 WHERE token_hash = $2 AND kind = 'refresh'
    AND client_id = $3 AND rotated_at IS NULL AND expires_at > $4 RETURNING id`, [now, "refresh-240", 1, now],
    new Map([[1, (n: number) => `refresh-${n}`]]));
  reference("refresh INSERT of the pair", `INSERT INTO ref_tokens (token_hash, kind, client_id, expires_at, parent_id)
    VALUES ($1, 'access', $2, $3, $4), ($5, 'refresh', $2, $6, $4)`, [pair[0]!, 1, now + 1800, 1, pair[1]!, now + 2_592_000],
    new Map([[0, suffixed(pair[0]!)], [4, suffixed(pair[1]!)]]));
  // Enough other tokens on both sides that the planner looks a token up by its hash, as on any real database.
  await pg.exec(`INSERT INTO tokens (token_hash, kind, grant_type, client_id, user_id, scope, issued_at, expires_at)
    SELECT md5(g::text), 'access', 'client_credentials', ${client!.id}, ${robot.id}, 'fields:read', ${now}, ${now + 1800}
    FROM generate_series(1, 5000) g;
    INSERT INTO ref_tokens (token_hash, kind, client_id, expires_at)
    SELECT md5(g::text), 'access', 1, ${now + 1800} FROM generate_series(1, 5000) g;
    ANALYZE`);
  return recorded;
}

async function main(): Promise<void> {
  const binDir = findPostgresBinaries();
  if (!binDir) throw new Error("needs PostgreSQL's initdb and pg_ctl");
  if (spawnSync("valgrind", ["--version"]).status !== 0) throw new Error("needs valgrind (apt-get install valgrind)");
  const cluster = await startPostgresCluster(binDir, { purpose: "instruction counts" });
  const pg = await openPostgres(cluster.url, { max: 1 });
  const recorded = (await seedAndRecord(pg)).filter((r) => !values.only || r.name.includes(values.only));
  await pg.close();
  await cluster.halt();
  for (const statement of recorded) {
    // The difference between 220 and 20 executions: what one more costs, without startup and the PREPARE.
    const few = instructions(cluster, script(statement, 20, 0));
    const many = instructions(cluster, script(statement, 220, 20));
    console.log(`${Math.round((many - few) / 200).toLocaleString("en-US").padStart(9)} instructions  ${statement.name}`);
  }
}

await main();
