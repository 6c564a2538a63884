// The Feature properties a field keeps: name, crop and season as text, and a declared area_ha; others are dropped.
import { GeoJsonError } from "./errors.ts";

// name, crop and season alike: each is shown in listings and returned by every GraphQL page that selects it.
const MAX_TEXT_LENGTH = 200;

// C0 and C1 controls and DEL (Unicode category Cc): a newline or escape in a name would break CSV exports and
// terminal listings, and a NUL cuts strings short in C-based tools. Tab and newline are refused too; surrounding
// whitespace is trimmed before this check, so only controls inside the text count.
const CONTROL = /\p{Cc}/u;

function typeName(value: unknown): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : typeof value;
}

/** A string or number property as trimmed text (numbers as written, e.g. field number 12 or season 2026). */
function text(properties: Record<string, unknown>, key: string): string | null {
  const value = properties[key];
  if (value === undefined || value === null) return null;
  if (typeof value === "number") return String(value);
  if (typeof value !== "string") throw new GeoJsonError(`property "${key}" must be a string, got ${typeName(value)}`);
  const trimmed = value.trim();
  const control = CONTROL.exec(trimmed);
  if (control) {
    const code = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
    throw new GeoJsonError(`property "${key}" contains a control character (U+${code})`);
  }
  if (trimmed.length > MAX_TEXT_LENGTH) throw new GeoJsonError(`property "${key}" is longer than ${MAX_TEXT_LENGTH} characters`);
  return trimmed || null;
}

/** The required `name`, trimmed; a number is taken as text. */
export function fieldName(properties: Record<string, unknown>): string {
  const name = text(properties, "name");
  if (!name) throw new GeoJsonError('property "name" is required');
  return name;
}

/** An optional text property (`crop`, `season`), or null when absent or blank. */
export function optionalText(properties: Record<string, unknown>, key: "crop" | "season"): string | null {
  return text(properties, key);
}

/** The declared `area_ha` as given, or undefined; its range is checked after rounding (field_area.ts). */
export function declaredArea(properties: Record<string, unknown>): number | undefined {
  const value = properties.area_ha;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number") throw new GeoJsonError(`property "area_ha" must be a number of hectares, got ${typeName(value)}`);
  return value;
}

/** The name as a person would recognise it in a message, even when the feature is otherwise invalid. */
export function readableName(properties: unknown): string | undefined {
  if (typeof properties !== "object" || properties === null) return undefined;
  const name = (properties as Record<string, unknown>).name;
  if (typeof name === "number") return String(name);
  return typeof name === "string" && name.trim() ? name.trim() : undefined;
}
