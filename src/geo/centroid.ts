// Centroid of a Polygon or MultiPolygon: area-weighted, computed in a local equirectangular projection.
import type { Geometry, Ring } from "./area.ts";

interface Moments {
  area: number;
  x: number;
  y: number;
}

// Shoelace moments of one ring, with longitudes scaled by cos(lat0) so east-west and north-south distances
// weigh the same; for field-sized shapes the error of this flat approximation is far below a metre.
function ringMoments(ring: Ring, scale: number): Moments {
  let area = 0;
  let x = 0;
  let y = 0;
  for (let i = 0; i < ring.length - 1; i++) {
    const x0 = ring[i]![0]! * scale;
    const y0 = ring[i]![1]!;
    const x1 = ring[i + 1]![0]! * scale;
    const y1 = ring[i + 1]![1]!;
    const cross = x0 * y1 - x1 * y0;
    area += cross;
    x += (x0 + x1) * cross;
    y += (y0 + y1) * cross;
  }
  return { area: area / 2, x: x / 6, y: y / 6 };
}

/** Area-weighted centroid {lon, lat}; falls back to the mean of the outer-ring vertices for degenerate shapes. */
export function geometryCentroid(geometry: Geometry): { lon: number; lat: number } {
  const polygons = geometry.type === "Polygon" ? [geometry.coordinates] : geometry.coordinates;
  const outer = polygons.flatMap((polygon) => (polygon[0] ?? []).slice(0, -1));
  const lat0 = outer.reduce((sum, p) => sum + p[1]!, 0) / Math.max(1, outer.length);
  const scale = Math.cos((lat0 * Math.PI) / 180) || 1;
  let area = 0;
  let x = 0;
  let y = 0;
  for (const polygon of polygons) {
    polygon.forEach((ring, i) => {
      const m = ringMoments(ring, scale);
      // Holes subtract; orientation is normalised so a clockwise outer ring still counts positive.
      const sign = (i === 0 ? 1 : -1) * Math.sign(m.area || 1);
      area += sign * m.area;
      x += sign * m.x;
      y += sign * m.y;
    });
  }
  if (Math.abs(area) < 1e-18) {
    const lon = outer.reduce((sum, p) => sum + p[0]!, 0) / Math.max(1, outer.length);
    return { lon, lat: lat0 };
  }
  return { lon: x / area / scale, lat: y / area };
}
