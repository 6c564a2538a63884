// GeoJSON (RFC 7946) FeatureCollection validation for field boundaries: Polygon and MultiPolygon features only.
import { geometryCentroid } from "./centroid.ts";
import { GeoJsonError, invalidFeatures, MAX_REPORTED_PROBLEMS, quote, type FeatureProblem } from "./errors.ts";
import { fieldArea } from "./field_area.ts";
import { checkGeometry } from "./geometry.ts";
import { rewindGeometry } from "./orientation.ts";
import { declaredArea, fieldName, optionalText, readableName } from "./properties.ts";
import { checkPartsApart, checkValidity } from "./validity.ts";

/** A field parsed from one feature, ready for store.fields.insertMany. */
export interface ParsedField {
  name: string;
  crop: string | null;
  season: string | null;
  /** The declared area_ha when given, else the computed area; rounded to 1 m². */
  areaHa: number;
  /** The area computed from the geometry, rounded to 1 m², to compare a declared one against. */
  computedAreaHa: number;
  /**
   * The geometry re-serialised as JSON text: only type and coordinates survive, rings in RFC 7946 order
   * (exterior counterclockwise, holes clockwise), positions otherwise as given.
   */
  boundary: string;
  centroid: { lon: number; lat: number };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// Kept: properties name, crop, season, area_ha and the geometry's type and coordinates. Dropped: the Feature's
// id, bbox, foreign members and every other property.
function parseFeature(value: unknown): ParsedField {
  if (!isRecord(value) || value.type !== "Feature") throw new GeoJsonError("is not a GeoJSON Feature");
  const properties = isRecord(value.properties) ? value.properties : {};
  const name = fieldName(properties);
  const crop = optionalText(properties, "crop");
  const season = optionalText(properties, "season");
  const declared = declaredArea(properties);
  const geometry = checkGeometry(value.geometry);
  checkValidity(geometry);
  // Parts that overlap would have their common area counted twice.
  checkPartsApart(geometry);
  const { areaHa, computedAreaHa } = fieldArea(geometry, declared);
  const stored = rewindGeometry(geometry);
  return {
    name,
    crop,
    season,
    areaHa,
    computedAreaHa,
    boundary: JSON.stringify({ type: stored.type, coordinates: stored.coordinates }),
    centroid: geometryCentroid(geometry),
  };
}

/** `feature 12`, or `feature 12 ("Nord-3")` when the feature has a readable name. */
function featureLabel(feature: unknown, index: number): string {
  const name = isRecord(feature) ? readableName(feature.properties) : undefined;
  if (name === undefined) return `feature ${index}`;
  return `feature ${index} (${quote(name.length > 60 ? `${name.slice(0, 59)}…` : name)})`;
}

// GeoJSON 2008 allowed a `crs` member; RFC 7946 dropped it and fixed WGS 84 lon/lat. A file that still names
// another system (an EPSG:25833 export, say) has coordinates in metres: refuse it as a whole, saying why.
const WGS84_CRS = /(?:^|[:/])(?:CRS84|4326)$/i;

function checkCrs(crs: unknown): void {
  if (crs === undefined || crs === null) return;
  const name = isRecord(crs) && isRecord(crs.properties) ? crs.properties.name : undefined;
  if (typeof name === "string" && WGS84_CRS.test(name.trim())) return;
  const shown = typeof name === "string" ? quote(name) : "not a named system";
  throw new GeoJsonError(`FeatureCollection "crs" is ${shown}; GeoJSON must be WGS 84 lon/lat (RFC 7946 §4): reproject the file, e.g. ogr2ogr -t_srs EPSG:4326`);
}

/**
 * Validates a FeatureCollection and returns one ParsedField per feature, in order.
 * @throws GeoJsonError for the file as a whole, or listing the first bad features and how many there are in all;
 *   nothing is returned for a partly valid file.
 */
export function parseFieldCollection(value: unknown, onProgress?: (done: number, total: number) => void): ParsedField[] {
  if (!isRecord(value) || value.type !== "FeatureCollection") throw new GeoJsonError("not a GeoJSON FeatureCollection");
  checkCrs(value.crs);
  if (!Array.isArray(value.features)) throw new GeoJsonError('FeatureCollection has no "features" array');
  const features = value.features as unknown[];
  const fields: ParsedField[] = [];
  const problems: FeatureProblem[] = [];
  let bad = 0;
  features.forEach((feature, index) => {
    try {
      fields.push(parseFeature(feature));
    } catch (error) {
      // Only a validation failure is collected; anything else is a bug and keeps its type and stack.
      if (!(error instanceof GeoJsonError)) throw error;
      bad++;
      if (problems.length < MAX_REPORTED_PROBLEMS) problems.push({ index, label: featureLabel(feature, index), message: error.message });
    }
    if (onProgress && (index + 1) % 1000 === 0) onProgress(index + 1, features.length);
  });
  if (bad > 0) throw invalidFeatures(problems, bad);
  return fields;
}
