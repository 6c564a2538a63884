// `users join USERNAME --org ORG` and `users leave USERNAME --org ORG`: someone who starts working for a second farm,
// or stops working for one while staying with another. What a user's tokens read follows at once: every bearer
// check reads the memberships afresh.
import { auditChange } from "../audit_change.ts";
import { requireFlag } from "../args.ts";
import { validateOrgSlug } from "../../oauth/registration.ts";
import { UsageError, type Command, type ParsedArgs } from "../types.ts";
import { namedUser } from "./user_state.ts";

const ORG_FLAG = { org: { type: "string", value: "ORG", description: "organization slug" } } as const;
const validateOrg = (args: ParsedArgs) => void validateOrgSlug(requireFlag(args, "org"));

export const joinOrganization: Command = {
  name: "users join",
  summary: "make a user a member of an organization (created if missing)",
  positionals: ["USERNAME"],
  flags: ORG_FLAG,
  validate: validateOrg,
  async run({ args, deps, io, store, now }) {
    const user = await namedUser(store, args.positionals[0]!);
    const { organization, joined, created } = await store.organizations.join(user.id, requireFlag(args, "org"), now);
    if (joined) {
      await auditChange({ store, deps, io }, "membership_added", {
        userId: user.id,
        detail: { organization: organization.slug, organization_created: created },
      });
    }
    const text = joined
      ? `${user.username} is now a member of ${organization.slug}${created ? " (a new organization)" : ""}.\n`
      : `${user.username} already was a member of ${organization.slug}.\n`;
    return { json: { username: user.username, organization: organization.slug, joined, organization_created: created }, text };
  },
};

export const leaveOrganization: Command = {
  name: "users leave",
  summary: "end a user's membership of an organization; their tokens stop reading its data at once",
  positionals: ["USERNAME"],
  flags: ORG_FLAG,
  validate: validateOrg,
  async run({ args, deps, io, store }) {
    const user = await namedUser(store, args.positionals[0]!);
    const slug = requireFlag(args, "org");
    const organization = await store.organizations.findBySlug(slug);
    if (!organization) throw new UsageError(`no organization "${slug}"`);
    const left = await store.organizations.removeMember(organization.id, user.id);
    if (left) {
      await auditChange({ store, deps, io }, "membership_removed", {
        userId: user.id,
        detail: { organization: organization.slug },
      });
    }
    const text = left ? `${user.username} is no longer a member of ${slug}.\n` : `${user.username} was not a member of ${slug}.\n`;
    return { json: { username: user.username, organization: slug, left }, text };
  },
};
