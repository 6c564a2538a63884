// GraphQL-over-HTTP request handling: media type negotiation and the query/variables/operationName parameters.
import { mediaType, memberNames, readText } from "../http/body.ts";
import { HttpError, isHttpError } from "../http/errors.ts";
import { MAX_NESTING } from "./document_text.ts";
import type { GraphqlErrorCode } from "./errors.ts";

export const GRAPHQL_RESPONSE = "application/graphql-response+json";
export const JSON_MEDIA = "application/json";
export type ResponseMedia = typeof GRAPHQL_RESPONSE | typeof JSON_MEDIA;

/** A well-formed GraphQL-over-HTTP request. */
export interface GraphqlParams {
  query: string;
  operationName: string | undefined;
  variables: Record<string, unknown> | undefined;
}

/** A malformed request: answered 400 with a GraphQL error whatever the media type. */
export interface ParamsFailure {
  failure: string;
  /** BAD_REQUEST unless said otherwise. */
  code?: GraphqlErrorCode;
}

interface Range {
  type: string;
  q: number;
}

function parseAccept(header: string): Range[] {
  return header.split(",").map((part) => {
    const [type = "", ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith("q="));
    return { type, q: q ? Number(q.slice(2)) : 1 };
  }).filter((range) => range.type !== "" && Number.isFinite(range.q));
}

/** Quality and specificity with which `ranges` accept `type` (specificity 2 exact, 1 type/*, 0 * /*). */
function score(ranges: readonly Range[], type: string): [number, number] {
  let best: [number, number] = [0, -1];
  for (const range of ranges) {
    const specificity = range.type === type ? 2 : range.type === "application/*" ? 1 : range.type === "*/*" ? 0 : -1;
    if (specificity > best[1]) best = [range.q, specificity];
  }
  return best;
}

/**
 * The response media type for an Accept header, or undefined when neither is acceptable (406). No header means
 * application/json, wildcards alone pick application/json (legacy clients), an explicit tie picks
 * application/graphql-response+json (GraphQL over HTTP §"Accept").
 */
export function negotiate(accept: string | null): ResponseMedia | undefined {
  if (accept === null || accept.trim() === "") return JSON_MEDIA;
  const ranges = parseAccept(accept);
  const [gq, gs] = score(ranges, GRAPHQL_RESPONSE);
  const [jq, js] = score(ranges, JSON_MEDIA);
  if (gq <= 0 && jq <= 0) return undefined;
  if (gq !== jq) return gq > jq ? GRAPHQL_RESPONSE : JSON_MEDIA;
  return gs === 2 && gs >= js ? GRAPHQL_RESPONSE : JSON_MEDIA;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const PARAMETERS = ["query", "operationName", "variables", "extensions"];

/**
 * True when `value` nests objects and arrays more than `max` levels deep, found without recursion: JSON.parse builds
 * values nested 100 000 deep, and refusing them here spares every later reader (variable coercion, a JSON scalar, a
 * log line) from having to walk them without recursion.
 */
function nestsDeeper(value: unknown, max: number): boolean {
  const stack: { value: object; depth: number }[] = [];
  if (typeof value === "object" && value !== null) stack.push({ value, depth: 1 });
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (depth > max) return true;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (typeof child === "object" && child !== null) stack.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}

/** Checks the parameter types the GraphQL-over-HTTP spec requires; `extensions` is accepted and ignored. */
function toParams(raw: Record<string, unknown>): GraphqlParams | ParamsFailure {
  const { query, operationName, variables, extensions } = raw;
  if (typeof query !== "string") return { failure: "The query parameter must be a string" };
  if (operationName != null && typeof operationName !== "string") return { failure: "operationName must be a string" };
  if (variables != null && !isObject(variables)) return { failure: "variables must be an object" };
  if (extensions != null && !isObject(extensions)) return { failure: "extensions must be an object" };
  for (const [name, value] of [["variables", variables], ["extensions", extensions]] as const) {
    if (nestsDeeper(value, MAX_NESTING)) {
      return { failure: `${name} nest deeper than ${MAX_NESTING} levels`, code: "NESTING_LIMIT_EXCEEDED" };
    }
  }
  return { query, operationName: operationName ?? undefined, variables: variables ?? undefined };
}

function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** Parameters of a GET request, from the URL query string (GraphQL over HTTP, "GET"). */
export function paramsFromUrl(url: URL): GraphqlParams | ParamsFailure {
  const raw: Record<string, unknown> = {};
  for (const name of PARAMETERS) {
    const values = url.searchParams.getAll(name);
    if (values.length > 1) return { failure: `The ${name} parameter is repeated` };
    if (values.length === 0) continue;
    if (name === "variables" || name === "extensions") {
      const parsed = parseJson(values[0]!);
      if (!parsed) return { failure: `The ${name} parameter is not valid JSON` };
      raw[name] = parsed.value;
    } else {
      raw[name] = values[0];
    }
  }
  return toParams(raw);
}

/**
 * Parameters of a POST request with an application/json body.
 * @throws HttpError unsupported_media_type (415) for another Content-Type or charset, payload_too_large (413)
 */
export async function paramsFromBody(request: Request, maxBytes: number): Promise<GraphqlParams | ParamsFailure> {
  const charset = /;\s*charset=("?)([^";]+)\1/i.exec(request.headers.get("content-type") ?? "")?.[2]?.toLowerCase();
  if (mediaType(request) !== JSON_MEDIA || (charset !== undefined && charset !== "utf-8")) {
    throw new HttpError("unsupported_media_type", "Content-Type must be application/json (UTF-8)");
  }
  let text: string;
  try {
    text = await readText(request, maxBytes);
  } catch (error) {
    // Bytes that are not UTF-8 make a malformed GraphQL request, like text that is not JSON; 413 stays an HTTP refusal.
    if (isHttpError(error) && error.code === "bad_request") return { failure: error.description };
    throw error;
  }
  if (text.trim() === "") return { failure: "Request body is empty" };
  const parsed = parseJson(text);
  if (!parsed) return { failure: "Request body is not valid JSON" };
  if (!isObject(parsed.value)) return { failure: "Request body must be a JSON object" };
  // JSON.parse keeps the last of a repeated member; a proxy or firewall that reads the first would see another
  // operation than we run. Refused like a repeated GET parameter (and a repeated member at the OAuth endpoints).
  const repeated = repeatedParameter(text);
  if (repeated) return { failure: `The ${repeated} parameter is repeated` };
  return toParams(parsed.value);
}

function repeatedParameter(text: string): string | undefined {
  const seen = new Set<string>();
  for (const name of memberNames(text)) {
    if (!PARAMETERS.includes(name)) continue;
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

/** The 406 refusal for a client that accepts neither GraphQL response media type. */
export function notAcceptable(): HttpError {
  return new HttpError("not_acceptable", `Accept must allow ${GRAPHQL_RESPONSE} or ${JSON_MEDIA}`);
}
