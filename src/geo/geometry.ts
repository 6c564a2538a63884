// The shape of GeoJSON Polygon and MultiPolygon geometries (RFC 7946 §3.1): positions in range, closed rings.
import type { Geometry, PolygonCoordinates, Position } from "./area.ts";
import { GeoJsonError, quote } from "./errors.ts";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// RFC 7946 §4: positions are WGS 84 longitude, latitude (and an optional altitude). Projected coordinates
// (UTM, Web Mercator) are metres, far outside ±180/±90, so the range check is where they show.
function checkPosition(value: unknown, where: string): Position {
  if (!Array.isArray(value)) throw new GeoJsonError(`${where} is not a [lon, lat] position`);
  if (value.length < 2 || value.length > 3) {
    throw new GeoJsonError(`${where} has ${value.length} number${value.length === 1 ? "" : "s"}; a position is [lon, lat] or [lon, lat, altitude]`);
  }
  if (!value.every((n) => typeof n === "number" && Number.isFinite(n))) throw new GeoJsonError(`${where} has a non-numeric coordinate`);
  const [lon, lat] = value as number[];
  if (Math.abs(lon!) > 180 || Math.abs(lat!) > 90) {
    throw new GeoJsonError(`${where} [${lon}, ${lat}] is outside longitude/latitude range; the file looks projected: GeoJSON must be WGS 84 lon/lat (RFC 7946 §4)`);
  }
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

/**
 * Positions one field may have, over all its rings and parts. A surveyed boundary at one point per metre around a
 * 100 ha field has about 4,000. The cap bounds what one field costs everywhere after the import: the validity
 * sweep (a 20,000-position zig-zag ring took 1.1 s and 80,000 took minutes), the stored text (about 40 bytes a
 * position) and every GraphQL response that carries the boundary.
 */
export const MAX_POSITIONS_PER_FIELD = 10_000;

/** The geometry's type and coordinates, checked for shape; validity.ts checks how the rings lie. */
export function checkGeometry(value: unknown): Geometry {
  const geometry = checkShape(value);
  const polygons = geometry.type === "Polygon" ? [geometry.coordinates] : geometry.coordinates;
  const positions = polygons.reduce((n, polygon) => n + polygon.reduce((m, ring) => m + ring.length, 0), 0);
  if (positions > MAX_POSITIONS_PER_FIELD) {
    throw new GeoJsonError(`geometry has ${positions} positions, more than the ${MAX_POSITIONS_PER_FIELD} a field may have; simplify the boundary`);
  }
  return geometry;
}

function checkShape(value: unknown): Geometry {
  if (!isRecord(value)) throw new GeoJsonError("geometry is missing");
  if (value.type === "Polygon") return { type: "Polygon", coordinates: checkPolygon(value.coordinates, "polygon") };
  if (value.type === "MultiPolygon") {
    if (!Array.isArray(value.coordinates) || value.coordinates.length === 0) throw new GeoJsonError("multipolygon has no polygons");
    const polygons = value.coordinates.map((p: unknown, i) => checkPolygon(p, `polygon ${i}`));
    return { type: "MultiPolygon", coordinates: polygons };
  }
  throw new GeoJsonError(`geometry type must be Polygon or MultiPolygon, got ${typeof value.type === "string" ? quote(value.type) : JSON.stringify(value.type)}`);
}
