// Opaque identifiers: typed global ids ("Field:12") and pagination cursors, both base64url and strictly validated.
import { decodeBase64Url, encodeBase64Url } from "../crypto/base64url.ts";
import { graphqlError } from "./errors.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: false });

export type IdType = "Field" | "Organization" | "User";

function encode(text: string): string {
  return encodeBase64Url(encoder.encode(text));
}

/** Decodes `value` and returns the row id when it is exactly `<prefix><positive integer>` in canonical form. */
function decodeNumber(value: string, prefix: string): number | undefined {
  if (value.length > 64) return undefined;
  const bytes = decodeBase64Url(value);
  if (!bytes) return undefined;
  const text = decoder.decode(bytes);
  if (!text.startsWith(prefix)) return undefined;
  const digits = text.slice(prefix.length);
  if (!/^[1-9][0-9]{0,14}$/.test(digits)) return undefined;
  // Only the canonical encoding is accepted, so one object has exactly one id and one cursor.
  return encode(text) === value ? Number(digits) : undefined;
}

/** The global id of a row, e.g. globalId("Field", 12) is the base64url of "Field:12". */
export function globalId(type: IdType, id: number): string {
  return encode(`${type}:${id}`);
}

/**
 * The row id inside a global id of the expected type.
 * @throws GraphQLError BAD_USER_INPUT when the id is malformed or of another type
 */
export function parseGlobalId(type: IdType, value: string): number {
  const id = decodeNumber(value, `${type}:`);
  if (id === undefined) throw graphqlError("BAD_USER_INPUT", `Not a valid ${type} id`);
  return id;
}

/** The cursor after which a page continues: stable because field ids never change. */
export function encodeCursor(fieldId: number): string {
  return encode(`cursor:v1:${fieldId}`);
}

/**
 * The field id a cursor points at. Cursors carry no authority: the page query stays scoped to the caller's
 * organizations whatever id a cursor holds.
 * @throws GraphQLError BAD_USER_INPUT for anything this server did not issue
 */
export function decodeCursor(value: string): number {
  const id = decodeNumber(value, "cursor:v1:");
  if (id === undefined) throw graphqlError("BAD_USER_INPUT", "Not a valid cursor");
  return id;
}
