// POST/GET /graphql: GraphQL over HTTP behind bearer tokens.
import type { RouteFactory } from "../http/router.ts";

/** Routes of the GraphQL endpoint. */
export const graphqlRoutes: RouteFactory = () => [];
