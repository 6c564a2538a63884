// What the multi-instance tests share: three instances over a fresh PostgreSQL database, seeded through the CLI, and
// the browser's way to a code that crosses them.
import assert from "node:assert/strict";
import { browser, hiddenFields } from "../../../scripts/lib/client.ts";
import { fieldgateCli, postJson, startInstances, type Cli, type Instance, type Instances } from "../../helpers/instances.ts";

export const PASSWORD = "correct horse battery staple";
export const REDIRECT_URI = "https://client.example/cb";
const SCOPE = "fields:read";

export interface Client {
  client_id: string;
  client_secret: string;
}

/** The instances and what the CLI registered: a grower who signs in, a sync client, a web application. */
export interface Cluster extends Instances {
  /** The three instances, also in `all`. */
  a: Instance;
  b: Instance;
  c: Instance;
  username: string;
  sync: Client;
  web: Client;
}

/**
 * Starts the instances and, meanwhile, registers the users and clients with the CLI, as an operator would while they
 * run (whoever comes first migrates the empty database; the others wait on its lock).
 */
export async function startCluster(databaseUrl: string, env: Record<string, string> = {}): Promise<Cluster> {
  const username = "grower@example.com";
  const cli = fieldgateCli(databaseUrl, { env });
  const [started, registered] = await Promise.allSettled([startInstances(databaseUrl, { env }), register(cli, username)]);
  if (started.status === "rejected" || registered.status === "rejected") {
    if (started.status === "fulfilled") await started.value.close();
    throw started.status === "rejected" ? started.reason : (registered as PromiseRejectedResult).reason;
  }
  const [a, b, c] = started.value.all as [Instance, Instance, Instance];
  return { ...started.value, a, b, c, username, ...registered.value };
}

async function register(cli: Cli, username: string): Promise<{ sync: Client; web: Client }> {
  // Two organizations: each command creates its own, so running them at once races for nothing.
  await Promise.all([
    cli.cliJson(["users", "add", "--username", username, "--password-stdin", "--org", "acme"], { stdin: PASSWORD }),
    cli.cliJson(["users", "add", "--username", "robot@example.com", "--integration", "--org", "acme-sync"]),
  ]);
  const [sync, web] = await Promise.all([
    cli.cliJson(["clients", "add", "--name", "Sync", "--grant", "client_credentials", "--scope", SCOPE,
      "--integration-user", "robot@example.com"]),
    cli.cliJson(["clients", "add", "--name", "Web", "--grant", "authorization_code", "--scope", SCOPE,
      "--redirect-uri", REDIRECT_URI]),
  ]);
  return { sync: credentials(sync), web: credentials(web) };
}

function credentials(printed: Record<string, unknown>): Client {
  assert.equal(typeof printed.client_id, "string");
  assert.equal(typeof printed.client_secret, "string");
  return { client_id: printed.client_id as string, client_secret: printed.client_secret as string };
}

/** A client_credentials token from `at`; fails the test unless it was issued. */
export async function clientToken(at: Instance, client: Client): Promise<string> {
  const res = await postJson(at.origin, "/oauth/token", { grant_type: "client_credentials", ...client });
  assert.equal(res.status, 200, `token from ${at.name}: ${JSON.stringify(res.json)}`);
  return res.json!.access_token as string;
}

/**
 * The authorization code flow with each step on another instance: the sign-in form from `steps.form`, the sign-in
 * posted to `steps.signIn`, the consent page from `steps.consent`, the approval posted to `steps.approve`. Returns
 * the code from the redirect; fails the test at the first step that is refused.
 */
export async function codeAcross(
  cluster: Cluster,
  steps: { form: Instance; signIn: Instance; consent: Instance; approve: Instance },
): Promise<string> {
  const b = browser(steps.form.origin);
  const authorize = `/oauth/authorize?${new URLSearchParams({
    client_id: cluster.web.client_id, response_type: "code", redirect_uri: REDIRECT_URI, scope: SCOPE, state: "s1",
  })}`;
  const form = await b.send(`${steps.form.origin}/signin?next=${encodeURIComponent(authorize)}`);
  assert.equal(form.status, 200, `sign-in form from ${steps.form.name}`);
  const signedIn = await b.form(`${steps.signIn.origin}/signin`, {
    ...hiddenFields(await form.text(), "/signin"), username: cluster.username, password: PASSWORD,
  });
  assert.equal(signedIn.status, 303, `sign-in on ${steps.signIn.name}`);
  const consent = await b.send(`${steps.consent.origin}${authorize}`);
  const page = await consent.text();
  assert.equal(consent.status, 200, `consent page from ${steps.consent.name}`);
  const approved = await b.form(`${steps.approve.origin}/oauth/authorize`, {
    ...hiddenFields(page, "/oauth/authorize"), decision: "approve",
  });
  const location = approved.headers.get("location") ?? "";
  assert.ok(location.startsWith(`${REDIRECT_URI}?`), `approval on ${steps.approve.name}: ${approved.status} ${location}`);
  const code = new URL(location).searchParams.get("code");
  assert.ok(code, location);
  return code;
}

/** Exchanges a code of the web client on `at`: the status and the body. */
export function exchange(at: Instance, cluster: Cluster, code: string) {
  return postJson(at.origin, "/oauth/token", {
    grant_type: "authorization_code", ...cluster.web, code, redirect_uri: REDIRECT_URI,
  });
}

/** Presents a refresh token of the web client on `at`: the status and the body. */
export function refresh(at: Instance, cluster: Cluster, refreshToken: string) {
  return postJson(at.origin, "/oauth/token", { grant_type: "refresh_token", ...cluster.web, refresh_token: refreshToken });
}

/** RFC 7662 introspection by the token's own client on `at`: true when the token is active there. */
export async function isActiveAt(at: Instance, client: Client, token: string): Promise<boolean> {
  const res = await postJson(at.origin, "/oauth/introspect", { ...client, token });
  assert.equal(res.status, 200, `introspection on ${at.name}: ${JSON.stringify(res.json)}`);
  return res.json!.active === true;
}

/** Runs `fn` on the cluster and stops every instance afterwards, with the instances' logs on a failure. */
export async function withCluster(
  databaseUrl: string,
  fn: (cluster: Cluster) => Promise<void>,
  env: Record<string, string> = {},
): Promise<void> {
  const cluster = await startCluster(databaseUrl, env);
  try {
    await fn(cluster);
  } catch (error) {
    const logs = cluster.all.map((i) => `--- instance ${i.name} (${i.origin}), last lines:\n${tail(i.output())}`);
    throw new Error(`${(error as Error).message}\n${logs.join("\n")}`, { cause: error });
  } finally {
    await cluster.close();
  }
}

function tail(text: string, lines = 12): string {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}
