// Geodesic area of GeoJSON polygons on a sphere, in hectares: the ring-area formula turf's area also uses.

/** Authalic (equal-area) radius of the WGS84 ellipsoid in metres: the sphere with the ellipsoid's surface. */
export const AUTHALIC_RADIUS_M = 6_371_007.181;

export type Position = readonly number[];
export type Ring = readonly Position[];
export type PolygonCoordinates = readonly Ring[];

const RAD = Math.PI / 180;

/**
 * Unsigned area of one closed ring in square metres. Chamberlain & Duquette, "Some algorithms for polygons on a
 * sphere" (JPL 2007): sum of (λ[i+1] − λ[i−1])·sin φ[i] times R²/2; exact for edges along meridians and parallels.
 */
export function ringAreaM2(ring: Ring): number {
  const n = ring.length - 1; // the last position repeats the first
  if (n < 3) return 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const prev = ring[(i + n - 1) % n]!;
    const next = ring[(i + 1) % n]!;
    sum += (next[0]! - prev[0]!) * RAD * Math.sin(ring[i]![1]! * RAD);
  }
  return Math.abs((sum * AUTHALIC_RADIUS_M * AUTHALIC_RADIUS_M) / 2);
}

/** Area of a polygon (outer ring minus holes) in square metres. */
export function polygonAreaM2(polygon: PolygonCoordinates): number {
  let area = 0;
  polygon.forEach((ring, i) => {
    area += i === 0 ? ringAreaM2(ring) : -ringAreaM2(ring);
  });
  return Math.max(0, area);
}

/** Area of a Polygon or MultiPolygon geometry in hectares (1 ha = 10 000 m²). */
export function geometryAreaHa(geometry: Geometry): number {
  const polygons = geometry.type === "Polygon" ? [geometry.coordinates] : geometry.coordinates;
  let m2 = 0;
  for (const polygon of polygons) m2 += polygonAreaM2(polygon);
  return m2 / 10_000;
}

export type Geometry =
  | { type: "Polygon"; coordinates: PolygonCoordinates }
  | { type: "MultiPolygon"; coordinates: readonly PolygonCoordinates[] };
