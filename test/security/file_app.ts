// An app over a temporary SQLite file (not :memory:), so tests can read every byte the server wrote to disk.
import { mkdtempSync, readFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, type App } from "../../src/app.ts";
import { loadConfig, type Config } from "../../src/config.ts";
import { openStore } from "../../src/store/sqlite/store.ts";
import type { Store } from "../../src/store/contract.ts";
import { hashPassword, sha256Hex } from "../../src/crypto/hash.ts";
import { cryptoRandom } from "../../src/deps.ts";
import { randomId, randomToken } from "../../src/crypto/random.ts";
import { TEST_ENV, type LogLine, type SeededClient } from "../helpers/test_app.ts";

export interface FileApp {
  app: App;
  store: Store;
  config: Readonly<Config>;
  log: LogLine[];
  dbPath: string;
  /** The .db, -wal and -shm files concatenated, as latin1 text for substring search. */
  diskBytes(): string;
  user(username: string, password: string): Promise<number>;
  client(grant: "authorization_code" | "client_credentials", integrationUserId?: number): Promise<SeededClient>;
  cleanup(): Promise<void>;
}

/** Builds the app on a fresh temp-file database with the real clock and real randomness. */
export function buildFileApp(env: Record<string, string> = {}): FileApp {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-scan-"));
  const dbPath = join(dir, "fieldgate.db");
  const config = loadConfig({ ...TEST_ENV, FIELDGATE_DB: dbPath, ...env });
  const store = openStore(dbPath);
  const log: LogLine[] = [];
  const app = createApp({ config, store, log: (event, fields = {}) => log.push({ event, fields }) });
  const now = () => Math.floor(Date.now() / 1000);
  return {
    app, store, config, log, dbPath,
    diskBytes: () => ["", "-wal", "-shm"].map((s) => dbPath + s).filter(existsSync).map((p) => readFileSync(p).toString("latin1")).join("\n"),
    async user(username, password) {
      const org = await store.organizations.ensure("acme", { name: "ACME", now: now() });
      const passwordHash = await hashPassword(password, { iterations: config.pbkdf2Iterations, random: cryptoRandom });
      const user = await store.users.insert({ username, kind: "person", passwordHash, now: now() });
      await store.organizations.addMember(org.id, user.id, { now: now() });
      return user.id;
    },
    async client(grant, integrationUserId) {
      let userId = integrationUserId ?? null;
      if (grant === "client_credentials" && userId === null) {
        const org = await store.organizations.ensure("acme", { name: "ACME", now: now() });
        const robot = await store.users.insert({ username: `robot-${randomId(cryptoRandom)}`, kind: "integration", now: now() });
        await store.organizations.addMember(org.id, robot.id, { now: now() });
        userId = robot.id;
      }
      const clientSecret = randomToken(cryptoRandom, "clientSecret");
      const client = await store.clients.insert({
        clientId: randomId(cryptoRandom),
        secretHash: await sha256Hex(clientSecret),
        name: grant === "client_credentials" ? "Nightly sync" : "Field notes app",
        grantType: grant,
        redirectUris: grant === "authorization_code" ? ["https://client.example/cb"] : [],
        scope: "fields:read",
        integrationUserId: userId,
        now: now(),
      });
      return { client, clientId: client.clientId, clientSecret };
    },
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
