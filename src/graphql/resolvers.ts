// Resolvers: every data read goes through the acting user's organization ids; nothing else reaches the store.
import type { BoundaryBudget, Field, FieldFilter, FieldStore, Organization, OrganizationIds, PageOptions } from "../store/contract.ts";
import type { GraphqlContext } from "./context.ts";
import type { IdType } from "./cursor.ts";
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
 * selecting nodes and edges together fetches the page once, and selecting both reads them in one snapshot.
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

interface Reads {
  total?: number;
  rows?: Field[];
}

/**
 * Gathers the parts a connection's resolvers ask for into one store call. graphql-js calls the sibling resolvers
 * (total_count, nodes, edges, page_info) in one synchronous pass, so every part asked for before the next microtask
 * is read together: with both, `total_count` and `nodes` describe the same moment even while an import commits.
 */
function gatherReads(fields: FieldStore, filter: FieldFilter, options: PageOptions, boundaries?: BoundaryBudget) {
  let pending: { wanted: { count: boolean; page: boolean }; reads: Promise<Reads> } | undefined;
  return (part: "count" | "page"): Promise<Reads> => {
    if (!pending) {
      const wanted = { count: false, page: false };
      const reads = Promise.resolve().then((): Promise<Reads> => {
        pending = undefined;
        if (wanted.count && wanted.page) return fields.countAndPage(filter, options, boundaries);
        if (wanted.count) return fields.count(filter).then((total) => ({ total }));
        return fields.page(filter, options, boundaries).then((rows) => ({ rows }));
      });
      pending = { wanted, reads };
    }
    pending.wanted[part] = true;
    return pending.reads;
  };
}

/**
 * The budget for a page read with one row more than it serves (the probe for hasNextPage): that row's boundary is
 * never served, so it is neither read nor charged to the response.
 */
function servedRowsOnly(budget: BoundaryBudget, rows: number): BoundaryBudget {
  let asked = 0;
  return { take: (bytes) => asked++ < rows && budget.take(bytes) };
}

/**
 * The row id inside a global id of `type`.
 * @throws GraphQLError BAD_USER_INPUT when the id is malformed, forged, altered, or of another type
 */
async function rowIdOf(ctx: GraphqlContext, type: IdType, id: string): Promise<number> {
  const rowId = await ctx.ids.open(type, id);
  if (rowId === undefined) throw graphqlError("BAD_USER_INPUT", `Not a valid ${type} id`);
  return rowId;
}

/**
 * The field a cursor points at: a cursor is that field's global id. Cursors carry no authority: the page query
 * stays scoped to the caller's organizations whatever field a cursor names.
 * @throws GraphQLError BAD_USER_INPUT for anything this deployment did not issue
 */
async function afterIdOf(ctx: GraphqlContext, after: string | null | undefined): Promise<number> {
  if (after === null || after === undefined) return 0;
  const rowId = await ctx.ids.open("Field", after);
  if (rowId === undefined) throw graphqlError("BAD_USER_INPUT", "Not a valid cursor");
  return rowId;
}

/**
 * Builds a scoped connection; `organizationIds` must already be limited to the caller's memberships. Its rows carry
 * their boundaries only with `withBoundaries` (the query selects them), within the response's boundary budget.
 */
export async function fieldConnection(
  ctx: GraphqlContext,
  organizationIds: OrganizationIds,
  args: FieldsArgs,
  withBoundaries = false,
): Promise<FieldConnection> {
  const limit = pageSize(args.first, ctx.deps.config.graphql.maxPageSize);
  const afterId = await afterIdOf(ctx, args.after);
  const filter: FieldFilter = {
    organizationIds,
    ...(args.crop != null && { crop: args.crop }),
    ...(args.season != null && { season: args.season }),
  };
  // One row more than asked tells whether another page follows, without a second query (with first: 0 too).
  const budget = withBoundaries ? servedRowsOnly(ctx.boundaryBudget, limit) : undefined;
  const read = gatherReads(ctx.deps.store.fields, filter, { afterId, limit: limit + 1 }, budget);
  return {
    totalCount: memo(async () => (await read("count")).total!),
    page: memo(async () => {
      const rows = (await read("page")).rows!;
      const nodes = rows.slice(0, limit);
      // Sealed for the whole page at once, so the id, cursor and end_cursor resolvers only look them up.
      await ctx.ids.prepare("Field", nodes.map((field) => field.id));
      return { nodes, hasNextPage: rows.length > limit };
    }),
  };
}

/**
 * Query.fields: the caller's fields, optionally narrowed to one organization. An organization_id the caller is
 * not a member of (or that does not exist) yields an empty connection, so ids reveal nothing about other tenants.
 */
export async function resolveFields(ctx: GraphqlContext, args: FieldsArgs, withBoundaries = false): Promise<FieldConnection> {
  const memberships = ctx.organizationIds;
  let ids = memberships;
  if (args.organization_id != null) {
    const wanted = await rowIdOf(ctx, "Organization", args.organization_id);
    ids = memberships.includes(wanted) ? [wanted] : [];
  }
  return fieldConnection(ctx, ids, args, withBoundaries);
}

/** Query.field: the field, or null when it does not exist or belongs to another organization (indistinguishable). */
export async function resolveField(ctx: GraphqlContext, id: string, withBoundary = false): Promise<Field | null> {
  const fieldId = await rowIdOf(ctx, "Field", id);
  const budget = withBoundary ? ctx.boundaryBudget : undefined;
  const field = await ctx.deps.store.fields.findById(fieldId, ctx.organizationIds, budget);
  if (field) await ctx.ids.prepare("Field", [field.id]);
  return field ?? null;
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

/** The cursor of one field in a connection: its global id, which already names one position for good. */
export function cursorOf(ctx: GraphqlContext, field: Field): string {
  return ctx.ids.of("Field", field.id);
}
