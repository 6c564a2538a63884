// The route table: every route the app serves, from each feature area's route factory.
import type { Deps } from "../deps.ts";
import { createRouter } from "../http/router.ts";
import { graphqlRoutes } from "../graphql/endpoint.ts";
import { oauthRoutes } from "../oauth/routes.ts";
import { uiRoutes } from "../ui/routes.ts";
import { healthRoutes, type StorageFaults } from "./health_route.ts";
import { metricsRoutes } from "./metrics_route.ts";

/** The router over health, OAuth, GraphQL, the pages and metrics. */
export function createRouteTable(deps: Deps, faults: StorageFaults): ReturnType<typeof createRouter> {
  return createRouter([
    ...healthRoutes(deps, faults), ...oauthRoutes(deps), ...graphqlRoutes(deps), ...uiRoutes(deps), ...metricsRoutes(deps),
  ]);
}
