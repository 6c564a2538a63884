// `users add`: a platform user (password from stdin only) or an integration user, member of --org.
import { auditChange } from "../audit_change.ts";
import { hashPassword } from "../../crypto/hash.ts";
import { optionalFlag, requireFlag } from "../args.ts";
import { PASSWORD_PROMPT, passwordFromStdin } from "../registration.ts";
import { createUser, validateOrgSlug, validateUsername } from "../../oauth/registration.ts";
import { UsageError, type Command, type ParsedArgs } from "../types.ts";

function checkArgs(args: ParsedArgs, stdin: string | undefined): void {
  validateUsername(requireFlag(args, "username"));
  validateOrgSlug(requireFlag(args, "org"));
  const fromStdin = args.flags["password-stdin"] === true;
  const integration = args.flags.integration === true;
  // Passwords on argv end up in shell history and `ps`; stdin is the only way in.
  if (fromStdin === integration) throw new UsageError("give exactly one of --password-stdin or --integration");
  if (fromStdin) passwordFromStdin(stdin ?? "");
  for (const flag of ["name", "org-name"]) {
    const value = optionalFlag(args, flag);
    if (value !== undefined && (value.trim().length === 0 || value.length > 200)) throw new UsageError(`--${flag} must be 1 to 200 characters`);
  }
}

export const addUser: Command = {
  name: "users add",
  createsDatabase: true,
  summary: "create a user in an organization (created if missing)",
  positionals: [],
  flags: {
    username: { type: "string", value: "U", description: "sign-in name, e.g. an e-mail address" },
    "password-stdin": { type: "boolean", description: "read the password from stdin (at least 10 characters)" },
    integration: { type: "boolean", description: "an integration user for client_credentials clients; cannot sign in" },
    org: { type: "string", value: "ORG", description: "organization slug; created if missing" },
    "org-name": { type: "string", value: "NAME", description: "the organization's display name, when this creates it (default the slug)" },
    name: { type: "string", value: "NAME", description: "display name" },
  },
  readsStdin: (args) => args.flags["password-stdin"] === true,
  stdinPrompt: PASSWORD_PROMPT,
  validate: checkArgs,
  async run({ args, config, deps, io, store, stdin, now }) {
    const orgName = optionalFlag(args, "org-name")?.trim();
    const existing = orgName === undefined ? undefined : await store.organizations.findBySlug(requireFlag(args, "org"));
    if (existing && existing.name !== orgName) {
      io.stderr(`note: ${existing.slug} already exists as "${existing.name}"; --org-name names an organization only when it is created\n`);
    }
    let passwordHash: string | null = null;
    if (stdin !== undefined) {
      const password = passwordFromStdin(stdin);
      passwordHash = await hashPassword(password, { iterations: config.pbkdf2Iterations, random: deps.random });
    }
    const user = await createUser(store, {
      username: requireFlag(args, "username"),
      name: optionalFlag(args, "name") ?? null,
      org: requireFlag(args, "org"),
      orgName,
      passwordHash,
      now,
    });
    // Who can sign in or be acted as is an accountability question: new accounts leave a trail like disabled ones.
    await auditChange({ store, deps, io }, "user_created", {
      userId: user.id,
      detail: { kind: user.kind, organization: requireFlag(args, "org") },
    });
    return {
      json: { id: user.id, username: user.username, kind: user.kind },
      text: `Created ${user.kind === "integration" ? "integration user" : "user"} ${user.username} (id ${user.id}).\n`,
    };
  },
};
