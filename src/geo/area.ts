// Area of GeoJSON polygons on the WGS84 ellipsoid, in hectares: the spherical ring-area formula on authalic latitudes.

/** Authalic (equal-area) radius of the WGS84 ellipsoid in metres: the sphere with the ellipsoid's surface. */
export const AUTHALIC_RADIUS_M = 6_371_007.181;

export type Position = readonly number[];
export type Ring = readonly Position[];
export type PolygonCoordinates = readonly Ring[];

export type Geometry =
  | { type: "Polygon"; coordinates: PolygonCoordinates }
  | { type: "MultiPolygon"; coordinates: readonly PolygonCoordinates[] };

const RAD = Math.PI / 180;
// WGS84: semi-major axis 6 378 137 m, flattening 1/298.257223563; E is the first eccentricity.
const E2 = (1 / 298.257223563) * (2 - 1 / 298.257223563);
const E = Math.sqrt(E2);

/** Snyder's q(φ) ("Map Projections: A Working Manual", USGS 1987, eq. 3-12), from sin φ. */
function authalicQ(sinPhi: number): number {
  return (1 - E2) * (sinPhi / (1 - E2 * sinPhi * sinPhi) + Math.atanh(E * sinPhi) / E);
}

const Q_POLE = authalicQ(1);

/**
 * Sine of the authalic latitude β of geodetic latitude φ (degrees): sin β = q(φ) / q_p. The sphere of radius
 * AUTHALIC_RADIUS_M with latitudes β has the ellipsoid's area between any two parallels and meridians.
 */
export function sinAuthalicLatitude(latDeg: number): number {
  return authalicQ(Math.sin(latDeg * RAD)) / Q_POLE;
}

/**
 * Unsigned area of one closed ring in square metres. Chamberlain & Duquette, "Some algorithms for polygons on a
 * sphere" (JPL 2007): sum of (λ[i+1] − λ[i−1])·sin β[i] times R²/2, with β the authalic latitude, so edges along
 * meridians and parallels get the ellipsoid's exact area. Rings must not cross the antimeridian (validity.ts).
 */
export function ringAreaM2(ring: Ring): number {
  const n = ring.length - 1; // the last position repeats the first
  if (n < 3) return 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const prev = ring[(i + n - 1) % n]!;
    const next = ring[(i + 1) % n]!;
    sum += (next[0]! - prev[0]!) * RAD * sinAuthalicLatitude(ring[i]![1]!);
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

/** The polygons of a Polygon or MultiPolygon, as one list. */
export function polygonsOf(geometry: Geometry): readonly PolygonCoordinates[] {
  return geometry.type === "Polygon" ? [geometry.coordinates] : geometry.coordinates;
}

/** Area of a Polygon or MultiPolygon geometry in hectares (1 ha = 10 000 m²). */
export function geometryAreaHa(geometry: Geometry): number {
  let m2 = 0;
  for (const polygon of polygonsOf(geometry)) m2 += polygonAreaM2(polygon);
  return m2 / 10_000;
}
