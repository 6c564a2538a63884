// The area a field is stored with: computed from the geometry, or the declared area_ha, both checked for range.
import { geometryAreaHa, type Geometry } from "./area.ts";
import { GeoJsonError } from "./errors.ts";

/**
 * Largest area a field may have, in hectares (10 000 km², far beyond any farm field). Above it the geometry is
 * almost certainly not lon/lat, or a declared value is in the wrong unit; an Infinity would break every GraphQL
 * page that contains the field.
 */
export const MAX_AREA_HA = 1_000_000;

/** A declared area farther than this fraction from the computed one is reported (acres, m² and typos show). */
export const AREA_MISMATCH = 0.1;

/** Hectares rounded to 4 decimals: 1 m², as stored. */
function roundHa(ha: number): number {
  return Math.round(ha * 10_000) / 10_000;
}

/**
 * The stored area (declared when given, else computed) and the computed one, both rounded to 1 m².
 * @throws GeoJsonError when the geometry has no area or too much, or the declared value is out of range
 */
export function fieldArea(geometry: Geometry, declared: number | undefined): { areaHa: number; computedAreaHa: number } {
  const computed = roundHa(geometryAreaHa(geometry));
  if (!(computed > 0)) throw new GeoJsonError("geometry has zero area (below 1 m²)");
  if (computed > MAX_AREA_HA) {
    throw new GeoJsonError(`geometry covers ${computed} ha, more than ${MAX_AREA_HA} ha; are the coordinates WGS 84 lon/lat?`);
  }
  if (declared === undefined) return { areaHa: computed, computedAreaHa: computed };
  // Checked after rounding: 1e305 passes a finite check but overflows to Infinity when scaled, 0.00004 rounds to 0.
  const rounded = roundHa(declared);
  if (!(Number.isFinite(rounded) && rounded > 0 && rounded <= MAX_AREA_HA)) {
    throw new GeoJsonError(`property "area_ha" must be from 0.0001 to ${MAX_AREA_HA} hectares, got ${declared}`);
  }
  return { areaHa: rounded, computedAreaHa: computed };
}

/** Whether a stored area differs from the computed one by more than AREA_MISMATCH. */
export function isAreaMismatch(field: { areaHa: number; computedAreaHa: number }): boolean {
  return Math.abs(field.areaHa - field.computedAreaHa) > AREA_MISMATCH * field.computedAreaHa;
}
