// Every bad-argument case of the fixed CLI contract: exit 2, a message on stderr, nothing on stdout, nothing written.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { cliHarness, setupOrg, squares, type CliHarness } from "./harness.ts";

interface Row {
  name: string;
  args: string[] | ((h: CliHarness) => string[]);
  stdin?: string;
  /** Needs alice, robot and org acme first. */
  setup?: boolean;
  /** A fragment the error message must contain. */
  message?: RegExp;
}

const invalidGeometry = JSON.stringify({
  type: "FeatureCollection",
  features: [
    JSON.parse(squares(1)).features[0],
    { type: "Feature", properties: { name: "Open ring" }, geometry: { type: "Polygon", coordinates: [[[5, 52], [5.01, 52], [5.01, 52.01], [5, 52.02]]] } },
  ],
});

const ROWS: Row[] = [
  { name: "no command at all", args: [] },
  { name: "an unknown command", args: ["frobnicate"], message: /unknown command/ },
  { name: "an unknown subcommand", args: ["users", "rename"], message: /unknown command/ },
  { name: "an unknown command followed by options", args: ["bogus", "--db", "x.db"], message: /unknown command "bogus"\n/ },
  { name: "an unknown subcommand followed by options", args: ["users", "rename", "--db", "x.db"], message: /unknown command "users rename"\n/ },
  { name: "options without a command", args: ["--db", "x.db"], message: /unknown command "--db"\n/ },
  { name: "users add without --username", args: ["users", "add", "--integration", "--org", "acme"], message: /--username/ },
  { name: "users add without --org", args: ["users", "add", "--username", "u", "--integration"], message: /--org/ },
  { name: "users add with neither --password-stdin nor --integration", args: ["users", "add", "--username", "u", "--org", "acme"] },
  {
    name: "users add with both --password-stdin and --integration",
    args: ["users", "add", "--username", "u", "--org", "acme", "--integration", "--password-stdin"],
    stdin: "long enough password",
  },
  { name: "users add with a password on argv", args: ["users", "add", "--username", "u", "--org", "acme", "--password", "hunter22hunter22"], message: /unknown option --password \(did you mean --password-stdin\?\)/ },
  { name: "users add with a short password", args: ["users", "add", "--username", "u", "--org", "acme", "--password-stdin"], stdin: "short\n", message: /at least 10/ },
  { name: "users add with an empty stdin", args: ["users", "add", "--username", "u", "--org", "acme", "--password-stdin"], stdin: "" },
  // 130 emoji are 260 UTF-16 units: over the 254 the sign-in form and check count, so the user could never sign in.
  { name: "users add with a username over 254 UTF-16 units", args: ["users", "add", "--username", "\u{1F33E}".repeat(130), "--org", "acme", "--integration"], message: /254/ },
  { name: "users add with a username containing a space", args: ["users", "add", "--username", "a b", "--org", "acme", "--integration"] },
  // Invisible characters would let a look-alike of an existing username be registered beside it.
  { name: "users add with a zero-width space in the username", args: ["users", "add", "--username", "alice\u200b@example.com", "--org", "acme", "--integration"], message: /printable characters/ },
  { name: "users add with a bidi override in the username", args: ["users", "add", "--username", "\u202emoc.elpmaxe@ecila", "--org", "acme", "--integration"], message: /printable characters/ },
  { name: "users add with a no-break space in the username", args: ["users", "add", "--username", "alice\u00a0b", "--org", "acme", "--integration"], message: /printable characters/ },
  // `--db "$DB"` with DB unset: never the default database.
  { name: "a command with an empty --db", args: ["users", "list", "--db", ""], message: /--db needs a value/ },
  { name: "serve with an empty --port", args: ["serve", "--port", ""], message: /--port needs a value/ },
  { name: "users add with an org slug that is not a slug", args: ["users", "add", "--username", "u", "--org", "Acme Corp", "--integration"] },
  { name: "an option given twice", args: ["users", "add", "--username", "u", "--username", "v", "--org", "acme", "--integration"], message: /more than once/ },
  { name: "a value for a boolean option", args: ["users", "list", "--json=yes"] },
  { name: "a short option", args: ["users", "list", "-v"] },
  { name: "a string option without its value", args: ["users", "add", "--org", "acme", "--integration", "--username"], message: /needs a value/ },
  { name: "clients add without --name", args: ["clients", "add", "--grant", "authorization_code", "--redirect-uri", "https://a.example/cb", "--scope", "fields:read"] },
  { name: "clients add with an unsupported grant", args: ["clients", "add", "--name", "n", "--grant", "password", "--scope", "fields:read"], message: /--grant/ },
  { name: "clients add --resource-server with --grant", args: ["clients", "add", "--name", "n", "--resource-server", "--grant", "client_credentials"], message: /--grant does not apply to --resource-server/ },
  { name: "clients add --resource-server with --scope", args: ["clients", "add", "--name", "n", "--resource-server", "--scope", "fields:read"], message: /--scope does not apply/ },
  { name: "clients add --resource-server with --redirect-uri", args: ["clients", "add", "--name", "n", "--resource-server", "--redirect-uri", "https://a.example/cb"], message: /--redirect-uri does not apply/ },
  { name: "clients add --resource-server with --integration-user", args: ["clients", "add", "--name", "n", "--resource-server", "--integration-user", "robot"], message: /--integration-user does not apply/ },
  { name: "clients add --resource-server with --require-dpop", args: ["clients", "add", "--name", "n", "--resource-server", "--require-dpop"], message: /--require-dpop does not apply/ },
  { name: "clients add --resource-server=yes", args: ["clients", "add", "--name", "n", "--resource-server=yes"], message: /takes no value/ },
  { name: "clients add with an unknown scope", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", "https://a.example/cb", "--scope", "nope:nope"], message: /unknown scope/ },
  { name: "clients add with one unknown scope among known ones", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", "https://a.example/cb", "--scope", "fields:read fields:write"], message: /fields:write/ },
  { name: "clients add with an empty scope", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", "https://a.example/cb", "--scope", " "] },
  { name: "clients add authorization_code without --redirect-uri", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--scope", "fields:read"], message: /--redirect-uri/ },
  { name: "clients add with http on a non-loopback host", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", "http://evil.example/cb", "--scope", "fields:read"], message: /https/ },
  { name: "clients add with a redirect URI missing its scheme", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", "localhost:3000/callback", "--scope", "fields:read"], message: /must start with https:\/\/ \(or http:\/\/ on a loopback host\), got "localhost:3000\/callback"/ },
  { name: "clients add with a redirect URI fragment", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", "https://a.example/cb#x", "--scope", "fields:read"], message: /fragment/ },
  { name: "clients add with a redirect URI whose query has code", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", "https://a.example/cb?x=1&code=preset", "--scope", "fields:read"], message: /"code" query parameter/ },
  { name: "clients add with a redirect URI whose query has a bare iss", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", "https://a.example/cb?iss", "--scope", "fields:read"], message: /"iss" query parameter/ },
  { name: "clients add with a redirect URI the URL parser rewrites (raw quote)", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", 'https://a.example/cb?a="<b>', "--scope", "fields:read"], message: /%22%3Cb%3E/ },
  { name: "clients add with a redirect URI without a path", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", "https://a.example", "--scope", "fields:read"], message: /"https:\/\/a\.example\/"/ },
  { name: "clients add with an uppercase redirect URI host", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", "https://A.example/cb", "--scope", "fields:read"], message: /"https:\/\/a\.example\/cb"/ },
  { name: "clients add with an empty redirect URI fragment", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", "https://a.example/cb#", "--scope", "fields:read"], message: /fragment/ },
  { name: "clients add with a wildcard redirect URI", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", "https://*.a.example/cb", "--scope", "fields:read"], message: /wildcard/ },
  { name: "clients add with a relative redirect URI", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", "/cb", "--scope", "fields:read"], message: /absolute/ },
  { name: "clients add with a custom-scheme redirect URI", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", "javascript:alert(1)", "--scope", "fields:read"] },
  { name: "clients add with user information in the redirect URI", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", "https://u:p@a.example/cb", "--scope", "fields:read"] },
  { name: "clients add authorization_code with --integration-user", args: ["clients", "add", "--name", "n", "--grant", "authorization_code", "--redirect-uri", "https://a.example/cb", "--scope", "fields:read", "--integration-user", "robot@example.com"] },
  { name: "clients add client_credentials without --integration-user", args: ["clients", "add", "--name", "n", "--grant", "client_credentials", "--scope", "fields:read"], message: /--integration-user/ },
  { name: "clients add client_credentials with --redirect-uri", args: ["clients", "add", "--name", "n", "--grant", "client_credentials", "--scope", "fields:read", "--integration-user", "robot@example.com", "--redirect-uri", "https://a.example/cb"] },
  { name: "clients add client_credentials with an unknown integration user", setup: true, args: ["clients", "add", "--name", "n", "--grant", "client_credentials", "--scope", "fields:read", "--integration-user", "ghost@example.com"], message: /not an integration user/ },
  { name: "clients add client_credentials with a person as integration user", setup: true, args: ["clients", "add", "--name", "n", "--grant", "client_credentials", "--scope", "fields:read", "--integration-user", "alice@example.com"], message: /not an integration user/ },
  { name: "clients rotate-secret without a client id", args: ["clients", "rotate-secret"], message: /CLIENT_ID/ },
  { name: "clients rotate-secret of an unknown client", setup: true, args: ["clients", "rotate-secret", "nope"], message: /no client/ },
  { name: "clients show of an unknown client", setup: true, args: ["clients", "show", "nope"], message: /no client/ },
  { name: "clients show with two ids", args: ["clients", "show", "a", "b"] },
  { name: "clients disable of an unknown client", setup: true, args: ["clients", "disable", "nope"], message: /no client/ },
  { name: "fields import without --org", args: (h) => ["fields", "import", h.file("f.geojson", squares(1))], message: /--org/ },
  { name: "fields import without a file", args: ["fields", "import", "--org", "acme"] },
  { name: "fields import into an unknown organization", setup: true, args: (h) => ["fields", "import", "--org", "nowhere", h.file("f.geojson", squares(1))], message: /no organization/ },
  { name: "fields import of a missing file", setup: true, args: (h) => ["fields", "import", "--org", "acme", `${h.dir}/missing.geojson`], message: /no such file/ },
  { name: "fields import of a file that is not JSON", setup: true, args: (h) => ["fields", "import", "--org", "acme", h.file("f.geojson", "{nope")], message: /not valid JSON/ },
  { name: "fields import of a Feature instead of a FeatureCollection", setup: true, args: (h) => ["fields", "import", "--org", "acme", h.file("f.geojson", JSON.stringify(JSON.parse(squares(1)).features[0]))], message: /FeatureCollection/ },
  { name: "fields import with one invalid geometry, naming its index", setup: true, args: (h) => ["fields", "import", "--org", "acme", h.file("f.geojson", invalidGeometry)], message: /feature 1/ },
  { name: "fields import with a feature without a name", setup: true, args: (h) => ["fields", "import", "--org", "acme", h.file("f.geojson", squares(2, { name: "" }))], message: /feature 0.*name/ },
  { name: "audit with an unreadable --since", args: ["audit", "--since", "last tuesday"], message: /--since/ },
  { name: "audit with a zero --limit", args: ["audit", "--limit", "0"] },
  { name: "purge with a positional argument", args: ["purge", "now"] },
  { name: "serve with a non-numeric --port", args: ["serve", "--port", "http"], message: /PORT/ },
  { name: "serve with a port out of range", args: ["serve", "--port", "70000"], message: /PORT/ },
  { name: "serve with a non-http --base-url", args: ["serve", "--base-url", "ftp://files.example"], message: /FIELDGATE_BASE_URL/ },
  { name: "serve with a --base-url that has a path", args: ["serve", "--base-url", "https://example.com/auth"], message: /FIELDGATE_BASE_URL must not have a path/ },
  { name: "serve with --workers 0", args: ["serve", "--workers", "0"], message: /--workers/ },
  { name: "serve with a non-numeric --workers", args: ["serve", "--workers", "two"], message: /--workers/ },
  { name: "serve with too many --workers", args: ["serve", "--workers", "65"], message: /--workers/ },
];

for (const row of ROWS) {
  test(`cli refuses ${row.name} with exit 2 and writes nothing`, async () => {
    const h = cliHarness();
    if (row.setup) await setupOrg(h);
    const before = h.snapshot();
    const args = typeof row.args === "function" ? row.args(h) : row.args;
    const result = await h.run(args, { stdin: row.stdin });
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stdout, "");
    assert.notEqual(result.stderr.trim(), "");
    if (row.message) assert.match(result.stderr, row.message);
    assert.equal(h.snapshot(), before);
  });
}

test("cli counts surplus positional arguments instead of echoing them (a password typed there by mistake)", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const result = await h.run(["users", "set-password", "alice@example.com", "S3cret-Passw0rd!", "--password-stdin"], { stdin: "another password\n" });
  assert.equal(result.code, 2);
  assert.match(result.stderr, /takes USERNAME, got 2 positional arguments/);
  assert.ok(!result.stderr.includes("S3cret-Passw0rd!"));
});

test("cli refuses a password shorter than the minimum without echoing it", async () => {
  const h = cliHarness();
  const result = await h.run(["users", "add", "--username", "u", "--org", "acme", "--password-stdin"], { stdin: "tiny-pw\n" });
  assert.equal(result.code, 2);
  assert.ok(!result.stderr.includes("tiny-pw"));
});

test("cli answers a taken username with exit 1 and writes nothing", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const before = h.snapshot();
  const result = await h.run(["users", "add", "--username", "ALICE@example.com", "--integration", "--org", "other"]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /already taken/);
  assert.equal(h.snapshot(), before);
});
