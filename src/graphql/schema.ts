// The GraphQL schema: the Query root, the viewer, and the assembly of the farm-data types. Immutable once built.
import { GraphQLBoolean, GraphQLID, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString } from "graphql";
import type { TokenDetails } from "../store/contract.ts";
import type { GraphqlContext } from "./context.ts";
import { filterArgs, pageArgs, FieldConnectionType, FieldType, OrganizationType } from "./field_types.ts";
import { resolveField, resolveFields, resolveOrganizations, type FieldsArgs } from "./resolvers.ts";
import { connectionSelectsBoundary, selects } from "./selection.ts";

const ApplicationType = new GraphQLObjectType<TokenDetails>({
  name: "Application",
  description: "The registered OAuth client through which the request is made.",
  fields: {
    client_id: { type: new GraphQLNonNull(GraphQLString), description: "Public OAuth client_id.", resolve: (t) => t.clientPublicId },
    name: { type: new GraphQLNonNull(GraphQLString), description: "Display name of the application.", resolve: (t) => t.clientName },
  },
});

const ViewerType = new GraphQLObjectType<GraphqlContext, GraphqlContext>({
  name: "Viewer",
  description:
    "The user the request acts as: the approving user for authorization-code tokens, the application's integration user for client-credentials tokens.",
  fields: {
    id: { type: new GraphQLNonNull(GraphQLID), description: "Opaque global id of the user.", resolve: (c) => c.ids.seal("User", c.access.token.userId) },
    username: { type: new GraphQLNonNull(GraphQLString), description: "Sign-in name of the user.", resolve: (c) => c.access.token.username },
    name: { type: GraphQLString, description: "Display name, or null when not set.", resolve: async (c) => (await c.viewer())?.name ?? null },
    is_integration: {
      type: new GraphQLNonNull(GraphQLBoolean),
      description: "True for an application's integration user (client-credentials access), false for a person.",
      resolve: (c) => c.access.token.userKind === "integration",
    },
    scopes: {
      type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLString))),
      description: "Scopes granted to the access token in use.",
      resolve: (c) => [...c.access.scopes],
    },
    organizations: {
      type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(OrganizationType))),
      description: "Organizations the user belongs to.",
      resolve: (c) => resolveOrganizations(c),
    },
    application: {
      type: new GraphQLNonNull(ApplicationType),
      description: "The application the user acts through.",
      resolve: (c) => c.access.token,
    },
  },
});

const QueryType = new GraphQLObjectType<unknown, GraphqlContext>({
  name: "Query",
  description: "Read access to the field data of the organizations the acting user belongs to.",
  fields: {
    fields: {
      type: new GraphQLNonNull(FieldConnectionType),
      description: "Fields of the acting user's organizations, oldest first, one page at a time.",
      args: {
        ...pageArgs,
        organization_id: {
          type: GraphQLID,
          description: "Only this organization's fields; an organization the user does not belong to gives an empty result.",
        },
        ...filterArgs,
      },
      resolve: (_root, args: FieldsArgs, ctx, info) => resolveFields(ctx, args, connectionSelectsBoundary(info)),
    },
    field: {
      type: FieldType,
      description: "One field by id; null when it does not exist or belongs to an organization the user is not in.",
      args: { id: { type: new GraphQLNonNull(GraphQLID), description: "Global id of the field." } },
      resolve: (_root, args: { id: string }, ctx, info) => resolveField(ctx, args.id, selects(info, ["boundary"])),
    },
    organizations: {
      type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(OrganizationType))),
      description: "Organizations the acting user belongs to.",
      resolve: (_root, _args, ctx) => resolveOrganizations(ctx),
    },
    viewer: {
      type: new GraphQLNonNull(ViewerType),
      description: "The acting user and the application it acts through.",
      resolve: (_root, _args, ctx) => ctx,
    },
  },
});

/** Builds the schema; call once per app (it holds no per-request state). */
export function buildFieldSchema(): GraphQLSchema {
  return new GraphQLSchema({ query: QueryType });
}
