// GeoJSON (RFC 7946) FeatureCollection validation for field boundaries: Polygon and MultiPolygon features only.
import { geometryAreaHa, type Geometry, type PolygonCoordinates, type Position } from "./area.ts";
import { geometryCentroid } from "./centroid.ts";

/** A field parsed from one feature, ready for store.fields.insertMany. */
export interface ParsedField {
  name: string;
  crop: string | null;
  season: string | null;
  areaHa: number;
  /** The geometry re-serialised as JSON text (only type and coordinates survive). */
  boundary: string;
  centroid: { lon: number; lat: number };
}

/** A feature that could not be accepted; `index` is its 0-based position in `features`. */
export class GeoJsonError extends Error {
  readonly index: number | undefined;
  constructor(message: string, index?: number) {
    super(index === undefined ? message : `feature ${index}: ${message}`);
    this.name = "GeoJsonError";
    this.index = index;
  }
}

const MAX_NAME_LENGTH = 200;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkPosition(value: unknown, where: string): Position {
  if (!Array.isArray(value) || value.length < 2 || value.length > 3) throw new GeoJsonError(`${where} is not a [lon, lat] position`);
  if (!value.every((n) => typeof n === "number" && Number.isFinite(n))) throw new GeoJsonError(`${where} has a non-numeric coordinate`);
  const [lon, lat] = value as number[];
  if (lon! < -180 || lon! > 180 || lat! < -90 || lat! > 90) throw new GeoJsonError(`${where} is outside longitude/latitude range`);
  return value as number[];
}

// RFC 7946 §3.1.6: a linear ring is closed, with at least four positions.
function checkPolygon(value: unknown, where: string): PolygonCoordinates {
  if (!Array.isArray(value) || value.length === 0) throw new GeoJsonError(`${where} has no rings`);
  return value.map((ring: unknown, r) => {
    const at = `${where} ring ${r}`;
    if (!Array.isArray(ring) || ring.length < 4) throw new GeoJsonError(`${at} needs at least 4 positions`);
    const positions = ring.map((p: unknown, i) => checkPosition(p, `${at} position ${i}`));
    const first = positions[0]!;
    const last = positions[positions.length - 1]!;
    if (first[0] !== last[0] || first[1] !== last[1]) throw new GeoJsonError(`${at} is not closed`);
    const distinct = new Set(positions.map((p) => `${p[0]},${p[1]}`));
    if (distinct.size < 3) throw new GeoJsonError(`${at} is degenerate`);
    return positions;
  });
}

function checkGeometry(value: unknown): Geometry {
  if (!isRecord(value)) throw new GeoJsonError("geometry is missing");
  if (value.type === "Polygon") return { type: "Polygon", coordinates: checkPolygon(value.coordinates, "polygon") };
  if (value.type === "MultiPolygon") {
    if (!Array.isArray(value.coordinates) || value.coordinates.length === 0) throw new GeoJsonError("multipolygon has no polygons");
    const polygons = value.coordinates.map((p: unknown, i) => checkPolygon(p, `polygon ${i}`));
    return { type: "MultiPolygon", coordinates: polygons };
  }
  throw new GeoJsonError(`geometry type must be Polygon or MultiPolygon, got ${JSON.stringify(value.type)}`);
}

function optionalText(properties: Record<string, unknown>, key: string): string | null {
  const value = properties[key];
  if (value === undefined || value === null) return null;
  if (typeof value === "number") return String(value);
  if (typeof value !== "string") throw new GeoJsonError(`property "${key}" must be a string`);
  return value.trim() || null;
}

function parseFeature(value: unknown): ParsedField {
  if (!isRecord(value) || value.type !== "Feature") throw new GeoJsonError("is not a GeoJSON Feature");
  const properties = isRecord(value.properties) ? value.properties : {};
  const name = typeof properties.name === "string" ? properties.name.trim() : "";
  if (!name) throw new GeoJsonError('property "name" is required');
  if (name.length > MAX_NAME_LENGTH) throw new GeoJsonError(`property "name" is longer than ${MAX_NAME_LENGTH} characters`);
  const geometry = checkGeometry(value.geometry);
  const computed = geometryAreaHa(geometry);
  if (!(computed > 0)) throw new GeoJsonError("geometry has zero area");
  const given = properties.area_ha;
  if (given !== undefined && given !== null && (typeof given !== "number" || !Number.isFinite(given) || given <= 0)) {
    throw new GeoJsonError('property "area_ha" must be a positive number');
  }
  return {
    name,
    crop: optionalText(properties, "crop"),
    season: optionalText(properties, "season"),
    areaHa: Math.round((typeof given === "number" ? given : computed) * 10_000) / 10_000,
    boundary: JSON.stringify({ type: geometry.type, coordinates: geometry.coordinates }),
    centroid: geometryCentroid(geometry),
  };
}

/**
 * Validates a FeatureCollection and returns one ParsedField per feature, in order.
 * @throws GeoJsonError naming the index of the first bad feature; nothing is returned for a partly valid file.
 */
export function parseFieldCollection(value: unknown, onProgress?: (done: number, total: number) => void): ParsedField[] {
  if (!isRecord(value) || value.type !== "FeatureCollection") throw new GeoJsonError("not a GeoJSON FeatureCollection");
  if (!Array.isArray(value.features)) throw new GeoJsonError('FeatureCollection has no "features" array');
  const features = value.features as unknown[];
  return features.map((feature, index) => {
    try {
      const field = parseFeature(feature);
      if (onProgress && (index + 1) % 1000 === 0) onProgress(index + 1, features.length);
      return field;
    } catch (error) {
      // Only a validation failure gets the feature's index; anything else is a bug and keeps its type and stack.
      if (error instanceof GeoJsonError && error.index === undefined) throw new GeoJsonError(error.message, index);
      throw error;
    }
  });
}
