// `users list`: every user with kind and organizations; never the password hash.
import type { Command } from "../types.ts";

export const listUsers: Command = {
  name: "users list",
  summary: "list users and their organizations",
  positionals: [],
  flags: {},
  async run({ store }) {
    const users = await Promise.all((await store.users.list()).map(async (user) => ({
      id: user.id,
      username: user.username,
      name: user.name,
      kind: user.kind,
      disabled: user.disabled,
      organizations: (await store.organizations.listForUser(user.id)).map((o) => o.slug),
      created_at: user.createdAt,
    })));
    const lines = users.map((u) =>
      `${String(u.id).padStart(4)}  ${u.username}  ${u.kind}${u.disabled ? " (disabled)" : ""}  [${u.organizations.join(", ")}]`
    );
    return { json: { users }, text: users.length ? lines.join("\n") + "\n" : "No users.\n" };
  },
};
