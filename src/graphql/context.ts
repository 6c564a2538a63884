// Per-request GraphQL context: who is acting, which organizations they may see, memoized loaders, the boundary budget.
import type { Deps } from "../deps.ts";
import type { AccessContext } from "../oauth/bearer_auth.ts";
import type { BoundaryBudget, Field, Organization, OrganizationIds, User } from "../store/contract.ts";
import { requestIds, type IdCodec, type RequestIds } from "./cursor.ts";
import { graphqlError } from "./errors.ts";
import { createRawJsonWriter, type RawJsonWriter } from "./raw_json.ts";

/** Everything a resolver may use; built once per request, never shared between requests. */
export interface GraphqlContext {
  deps: Deps;
  access: AccessContext;
  /** Ids of the organizations the acting user belongs to (read with the token): the scope of every data read. */
  organizationIds: OrganizationIds;
  /** Global ids of the rows this request serves, sealed where the rows are read (cursor.ts). */
  ids: RequestIds;
  /** Those organizations (the same snapshot) in full, with their ids prepared; read only when a resolver needs them. */
  organizations(): Promise<ReadonlyMap<number, Organization>>;
  /** The acting user (the integration user for client credentials, the approving user for code tokens). */
  viewer(): Promise<User | undefined>;
  /**
   * This response's boundary budget, `config.graphql.maxBoundaryBytes`: the store reads a boundary only if it takes
   * its size, so the boundaries read for one response never exceed the cap whatever the query selects.
   */
  boundaryBudget: BoundaryBudget;
  /**
   * The field's boundary text, read with its row under `boundaryBudget`.
   * @throws GraphQLError BOUNDARY_LIMIT_EXCEEDED when the budget did not take it
   */
  boundaryOf(field: Field): string;
  /** Wraps stored JSON (boundaries) for the response, which the endpoint writes with the same writer. */
  rawJson: RawJsonWriter;
}

function once<T>(load: () => Promise<T>): () => Promise<T> {
  let promise: Promise<T> | undefined;
  return () => (promise ??= load());
}

/**
 * A response's running total of boundary bytes. Once a boundary would pass the cap it and every later one are
 * refused, so the response (and memory) never holds more than the cap of boundary text, however many boundaries
 * the query selects or how large they are.
 */
function boundaryBudget(maxBytes: number): { budget: BoundaryBudget; boundaryOf(field: Field): string } {
  let spent = 0;
  let refused = false;
  const budget: BoundaryBudget = {
    take(bytes) {
      if (refused || spent + bytes > maxBytes) {
        refused = true;
        return false;
      }
      spent += bytes;
      return true;
    },
  };
  // A row's read paid for one copy of its boundary. The same row served again (`a: boundary b: boundary`, or
  // `nodes` and `edges { node }` together) is another copy in the response, and pays again.
  const served = new WeakSet<Field>();
  const mayServe = (field: Field, text: string): boolean => {
    if (served.has(field)) return budget.take(text.length);
    served.add(field);
    return true;
  };
  return {
    budget,
    boundaryOf(field) {
      const text = field.boundary;
      if (text !== undefined && mayServe(field, text)) return text;
      throw graphqlError(
        "BOUNDARY_LIMIT_EXCEEDED",
        `The boundaries in this response would exceed ${maxBytes} bytes; ask for fewer fields per request`,
      );
    },
  };
}

/** Builds the context for one request from the authenticated access token and the app's id codec. */
export function createContext(deps: Deps, access: AccessContext, codec: IdCodec): GraphqlContext {
  const userId = access.token.userId;
  const boundaries = boundaryBudget(deps.config.graphql.maxBoundaryBytes);
  const ids = requestIds(codec);
  return {
    deps,
    access,
    organizationIds: access.organizationIds,
    ids,
    organizations: once(async () => {
      // By the snapshot's ids, not the memberships read again: every resolver of a request must see the same ones.
      // Otherwise a membership ended since the bearer check would leave fields read under the snapshot without their
      // organization, an internal error in Field.organization that non-null propagation turns into data: null.
      const list = await deps.store.organizations.listByIds(access.organizationIds);
      await ids.prepare("Organization", list.map((organization) => organization.id));
      return new Map(list.map((organization) => [organization.id, organization]));
    }),
    viewer: once(() => deps.store.users.findById(userId)),
    boundaryBudget: boundaries.budget,
    boundaryOf: boundaries.boundaryOf,
    rawJson: createRawJsonWriter(deps.random),
  };
}
