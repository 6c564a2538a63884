// Per-request GraphQL context: who is acting, which organizations they may see, memoized loaders, the boundary budget.
import type { Deps } from "../deps.ts";
import type { AccessContext } from "../oauth/bearer_auth.ts";
import type { Boundaries, FieldStore } from "../store/fields.ts";
import type { Organization } from "../store/organizations.ts";
import type { User } from "../store/users.ts";
import { graphqlError } from "./errors.ts";

/** Everything a resolver may use; built once per request, never shared between requests. */
export interface GraphqlContext {
  deps: Deps;
  access: AccessContext;
  /** Ids of the organizations the acting user belongs to (read with the token): the scope of every data read. */
  organizationIds: ReadonlySet<number>;
  /** Those organizations (the same snapshot) in full, read only when a resolver needs their names or slugs. */
  organizations(): Promise<ReadonlyMap<number, Organization>>;
  /** The acting user (the integration user for client credentials, the approving user for code tokens). */
  viewer(): Promise<User | undefined>;
  /**
   * The field's boundary text. The boundaries one pass of the resolvers asks for are read together, in one
   * statement pair, and the response serves at most `config.graphql.maxBoundaryBytes` of them; what is read from
   * the store stays within the same budget.
   * @throws GraphQLError BOUNDARY_LIMIT_EXCEEDED once the boundaries served would pass the cap
   * @throws GraphQLError FIELD_DELETED when the field was deleted after its page was read
   */
  boundary(fieldId: number): Promise<string>;
}

function once<T>(load: () => Promise<T>): () => Promise<T> {
  let promise: Promise<T> | undefined;
  return () => (promise ??= load());
}

interface Waiter {
  resolve(text: string): void;
  reject(error: unknown): void;
}

/**
 * Boundaries for one response. graphql-js asks for the boundaries of a page's nodes in one synchronous pass, so
 * every id asked for before the next microtask is read in one store call; the response's running total of
 * boundary bytes decides which are served. Once past the cap every later boundary fails too, so the response (and
 * memory) never holds more than the cap of boundary text, however many the query selects or how large they are.
 */
function boundaryLoader(fields: FieldStore, organizationIds: readonly number[], maxBytes: number) {
  let spent = 0;
  let batch: Map<number, Waiter[]> | undefined;
  const overCap = () =>
    graphqlError("BOUNDARY_LIMIT_EXCEEDED", `The boundaries in this response would exceed ${maxBytes} bytes; ask for fewer fields per request`);
  const serve = async (wanted: Map<number, Waiter[]>) => {
    const ids = [...wanted.keys()].sort((a, b) => a - b);
    let loaded: Boundaries;
    try {
      loaded = spent > maxBytes ? { texts: new Map(), cut: true } : await fields.boundaries(ids, organizationIds, maxBytes - spent);
    } catch (error) {
      for (const waiters of wanted.values()) for (const waiter of waiters) waiter.reject(error);
      return;
    }
    for (const id of ids) {
      const text = loaded.texts.get(id);
      // Each waiter is one copy of the text in the response (the same field under two aliases is served twice).
      for (const waiter of wanted.get(id)!) {
        if (text === undefined) {
          waiter.reject(loaded.cut ? overCap() : graphqlError("FIELD_DELETED", "The field was deleted while this request ran"));
          continue;
        }
        spent += text.length;
        if (spent > maxBytes) waiter.reject(overCap());
        else waiter.resolve(text);
      }
    }
  };
  return (fieldId: number): Promise<string> =>
    new Promise((resolve, reject) => {
      if (!batch) {
        const current = (batch = new Map());
        queueMicrotask(() => {
          batch = undefined;
          void serve(current);
        });
      }
      const waiters = batch.get(fieldId);
      if (waiters) waiters.push({ resolve, reject });
      else batch.set(fieldId, [{ resolve, reject }]);
    });
}

/** Builds the context for one request from the authenticated access token. */
export function createContext(deps: Deps, access: AccessContext): GraphqlContext {
  const userId = access.token.userId;
  return {
    deps,
    access,
    organizationIds: access.organizationIds,
    organizations: once(async () => {
      // By the snapshot's ids, not the memberships read again: every resolver of a request must see the same ones.
      // A membership ended since the bearer check left fields read under the snapshot without their organization,
      // which Field.organization reported as an internal error and non-null propagation turned into data: null.
      const list = await deps.store.organizations.listByIds([...access.organizationIds]);
      return new Map(list.map((organization) => [organization.id, organization]));
    }),
    viewer: once(() => deps.store.users.findById(userId)),
    boundary: boundaryLoader(deps.store.fields, [...access.organizationIds], deps.config.graphql.maxBoundaryBytes),
  };
}
