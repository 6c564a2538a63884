// Resolvers: every data read goes through the acting user's organization ids; nothing else reaches the store.
import type { Field, FieldFilter } from "../store/fields.ts";
import type { Organization } from "../store/organizations.ts";
import type { GraphqlContext } from "./context.ts";
import { decodeCursor, encodeCursor, parseGlobalId } from "./cursor.ts";
import { graphqlError } from "./errors.ts";

/** Arguments of a `fields` connection; `organization_id` only on Query.fields. */
export interface FieldsArgs {
  first?: number | null;
  after?: string | null;
  organization_id?: string | null;
  crop?: string | null;
  season?: string | null;
}

export interface FieldPage {
  nodes: Field[];
  hasNextPage: boolean;
}

/**
 * A connection whose parts load lazily: selecting only `total_count` runs one COUNT and never fetches a page,
 * and selecting nodes and edges together fetches the page once.
 */
export interface FieldConnection {
  totalCount(): Promise<number>;
  page(): Promise<FieldPage>;
}

function memo<T>(load: () => Promise<T>): () => Promise<T> {
  let promise: Promise<T> | undefined;
  return () => (promise ??= load());
}

function pageSize(first: number | null | undefined, max: number): number {
  if (first === null || first === undefined) return Math.min(50, max);
  if (first < 0) throw graphqlError("BAD_USER_INPUT", "first must not be negative");
  // Larger requests are capped rather than refused, so clients can ask for "as many as allowed".
  return Math.min(first, max);
}

/** Builds a scoped connection; `organizationIds` must already be limited to the caller's memberships. */
export function fieldConnection(ctx: GraphqlContext, organizationIds: readonly number[], args: FieldsArgs): FieldConnection {
  const limit = pageSize(args.first, ctx.deps.config.graphql.maxPageSize);
  const afterId = args.after === null || args.after === undefined ? 0 : decodeCursor(args.after);
  const filter: FieldFilter = {
    organizationIds,
    ...(args.crop != null && { crop: args.crop }),
    ...(args.season != null && { season: args.season }),
  };
  const fields = ctx.deps.store.fields;
  return {
    totalCount: memo(() => fields.count(filter)),
    page: memo(async () => {
      // One row more than asked tells whether another page follows, without a second query.
      const rows = limit === 0 ? [] : await fields.page(filter, { afterId, limit: limit + 1 });
      const more = limit === 0 ? (await fields.page(filter, { afterId, limit: 1 })).length > 0 : rows.length > limit;
      return { nodes: rows.slice(0, limit), hasNextPage: more };
    }),
  };
}

/**
 * Query.fields: the caller's fields, optionally narrowed to one organization. An organization_id the caller is
 * not a member of (or that does not exist) yields an empty connection, so ids reveal nothing about other tenants.
 */
export async function resolveFields(ctx: GraphqlContext, args: FieldsArgs): Promise<FieldConnection> {
  const memberships = ctx.organizationIds;
  let ids = [...memberships];
  if (args.organization_id != null) {
    const wanted = parseGlobalId("Organization", args.organization_id);
    ids = memberships.has(wanted) ? [wanted] : [];
  }
  return fieldConnection(ctx, ids, args);
}

/** Query.field: the field, or null when it does not exist or belongs to another organization (indistinguishable). */
export async function resolveField(ctx: GraphqlContext, id: string): Promise<Field | null> {
  const fieldId = parseGlobalId("Field", id);
  return (await ctx.deps.store.fields.findById(fieldId, [...ctx.organizationIds])) ?? null;
}

/** Query.organizations: the organizations the acting user belongs to. */
export async function resolveOrganizations(ctx: GraphqlContext): Promise<Organization[]> {
  return [...(await ctx.organizations()).values()];
}

/** Field.organization: always one of the caller's organizations, since the field was read under that scope. */
export async function resolveFieldOrganization(ctx: GraphqlContext, field: Field): Promise<Organization> {
  const organization = (await ctx.organizations()).get(field.organizationId);
  if (!organization) throw new Error(`field ${field.id} outside the caller's organizations`);
  return organization;
}

/** The cursor of one field in a connection. */
export function cursorOf(field: Field): string {
  return encodeCursor(field.id);
}
