// Per-request GraphQL context: who is acting, which organizations they may see, and memoized loaders.
import type { Deps } from "../deps.ts";
import type { AccessContext } from "../oauth/bearer_auth.ts";
import type { Organization } from "../store/organizations.ts";
import type { User } from "../store/users.ts";

/** Everything a resolver may use; built once per request, never shared between requests. */
export interface GraphqlContext {
  deps: Deps;
  access: AccessContext;
  /** Ids of the organizations the acting user belongs to (read with the token): the scope of every data read. */
  organizationIds: ReadonlySet<number>;
  /** Those organizations in full, read only when a resolver needs their names or slugs. */
  organizations(): Promise<ReadonlyMap<number, Organization>>;
  /** The acting user (the integration user for client credentials, the approving user for code tokens). */
  viewer(): Promise<User | undefined>;
}

function once<T>(load: () => Promise<T>): () => Promise<T> {
  let promise: Promise<T> | undefined;
  return () => (promise ??= load());
}

/** Builds the context for one request from the authenticated access token. */
export function createContext(deps: Deps, access: AccessContext): GraphqlContext {
  const userId = access.token.userId;
  return {
    deps,
    access,
    organizationIds: access.organizationIds,
    organizations: once(async () => {
      const list = await deps.store.organizations.listForUser(userId);
      return new Map(list.map((organization) => [organization.id, organization]));
    }),
    viewer: once(() => deps.store.users.findById(userId)),
  };
}
