// GET/POST /graphql: GraphQL over HTTP behind bearer tokens, with CORS when configured.
import type { GraphQLError, GraphQLFormattedError } from "graphql";
import type { Deps, Responders } from "../deps.ts";
import type { RequestContext, Route, RouteFactory } from "../http/router.ts";
import { authenticateBearer, requireScope } from "../oauth/bearer_auth.ts";
import { HttpError, isHttpError } from "../http/errors.ts";
import { OAuthError, isOAuthError } from "../oauth/errors.ts";
import { createContext } from "./context.ts";
import { createIdCodec, type IdCodec } from "./cursor.ts";
import { corsHeaders, everyResponseHeaders, preflightResponse } from "./cors.ts";
import { requestError } from "./errors.ts";
import { createExecutor, operationTypeOf, type Executor, type RunResult } from "./execute.ts";
import type { RawJsonWriter } from "./raw_json.ts";
import { buildFieldSchema } from "./schema.ts";
import {
  GRAPHQL_RESPONSE,
  negotiate,
  notAcceptable,
  paramsFromBody,
  paramsFromUrl,
  type ResponseMedia,
} from "./request.ts";

/** The scope every query needs; the only data scope the service knows. */
export const FIELDS_SCOPE = "fields:read";

/** Where a result goes: the app's responders and the media type the client accepts. */
interface Reply {
  respond: Responders;
  media: ResponseMedia;
}

function respond(
  { respond: responders, media }: Reply,
  body: RunResult,
  status: number,
  options: { headers?: Record<string, string>; rawJson?: RawJsonWriter } = {},
): Response {
  const { headers = {}, rawJson } = options;
  return responders.text(rawJson ? rawJson.stringify(body) : JSON.stringify(body), {
    status,
    // Results are per-user data: never cached by browsers or shared caches.
    headers: { "content-type": `${media}; charset=utf-8`, "cache-control": "no-store", ...headers },
  });
}

/**
 * Status for a result that failed before execution (parse, validation, limits, variable coercion): the
 * application/json media type keeps 200 for legacy clients, application/graphql-response+json uses 400
 * (GraphQL over HTTP, "Response" sections for each media type).
 */
function failedStatus(media: ResponseMedia): number {
  return media === GRAPHQL_RESPONSE ? 400 : 200;
}

function errorsBody(errors: readonly GraphQLFormattedError[]): RunResult {
  return { errors: [...errors] };
}

async function serve(deps: Deps, app: { executor: Executor; ids: IdCodec }, request: Request, ctx: RequestContext): Promise<Response> {
  const { executor } = app;
  const access = await authenticateBearer(deps, request, ctx.url);
  requireScope(access, FIELDS_SCOPE);
  const media = negotiate(request.headers.get("accept"));
  if (!media) throw notAcceptable();
  const reply: Reply = { respond: deps.respond, media };
  const isGet = request.method === "GET" || request.method === "HEAD";
  const params = isGet ? paramsFromUrl(ctx.url) : await paramsFromBody(request, deps.config.maxBodyBytes);
  if ("failure" in params) return respond(reply, errorsBody([requestError(params.code ?? "BAD_REQUEST", params.failure)]), 400);
  const prepared = executor.prepare(params.query);
  const operation = operationTypeOf(prepared, params.operationName);
  if (isGet && operation !== undefined && operation !== "query") {
    // GET must be safe: mutations (and subscriptions) only over POST (GraphQL over HTTP, "GET"). The schema has
    // neither, so the message does not send the client to POST, where validation refuses them.
    const error = requestError("METHOD_NOT_ALLOWED", `Only query operations are allowed over GET`);
    return respond(reply, errorsBody([error]), 405, { headers: { allow: "POST" } });
  }
  if (prepared.errors) return respond(reply, errorsBody(prepared.errors), failedStatus(media));
  const report = (error: GraphQLError) =>
    deps.log("graphql_error", {
      request_id: ctx.requestId,
      path: error.path?.join("."),
      error: error.originalError ? `${error.originalError.name}: ${error.originalError.message}` : error.message,
      stack: error.originalError?.stack,
    });
  const context = createContext(deps, access, app.ids);
  const result = await executor.run({
    document: prepared.document,
    operationName: params.operationName,
    variables: params.variables,
    context,
    report,
    locations: !prepared.otherText,
  });
  return respond(reply, result, "data" in result ? 200 : failedStatus(media), { rawJson: context.rawJson });
}

function withHeaders(response: Response, headers: Record<string, string>): Response {
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

/** Routes of the GraphQL endpoint; the schema, the document cache and the id codec are built once per app. */
export const graphqlRoutes: RouteFactory = (deps) => {
  const app = { executor: createExecutor(buildFieldSchema(), deps.config.graphql), ids: createIdCodec(deps) };
  const handler = async (request: Request, ctx: RequestContext): Promise<Response> => {
    const cors = corsHeaders(deps.config, request);
    try {
      return withHeaders(await serve(deps, app, request, ctx), cors);
    } catch (error) {
      // Known refusals (401, 403, 413, 415, 406) still need the CORS headers, or a browser cannot read them.
      if (Object.keys(cors).length === 0) throw error;
      if (isHttpError(error)) throw new HttpError(error.code, error.description, { headers: { ...error.headers, ...cors }, cause: error });
      if (!isOAuthError(error)) throw error;
      throw new OAuthError(error.code, error.description, {
        status: error.status,
        headers: { ...error.headers, ...cors },
        cause: error,
      });
    }
  };
  // The router answers other methods (PUT /graphql) itself; its 405 is a /graphql response too.
  const refusalHeaders = everyResponseHeaders(deps.config);
  const routes: Route[] = [
    { method: "POST", path: "/graphql", handler, refusalHeaders },
    { method: "GET", path: "/graphql", handler, refusalHeaders },
  ];
  if (deps.config.corsOrigins.length > 0) {
    routes.push({ method: "OPTIONS", path: "/graphql", handler: async (request) => preflightResponse(deps.config, request) });
  }
  return routes;
};
