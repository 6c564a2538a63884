// Centroid of a Polygon or MultiPolygon: area-weighted, computed in a flat frame around one of its vertices.
import { polygonsOf, type Geometry } from "./area.ts";
import { fromLocal, localFrameOf, ringMoments, toLocal, type LocalFrame } from "./planar.ts";

// Below this fraction of its bounding box's squared extent a shape counts as having no area. Relative, so a
// 0.01 ha field is as well-defined as a 1 000 ha one; rounding residue of a truly flat ring is ~1e-16 of it.
const DEGENERATE = 1e-9;

/**
 * Area-weighted centroid {lon, lat}, the longitude in [-180, 180]; the mean of the outer-ring vertices for shapes
 * without area. For L- or U-shaped, holed or multi-part fields it can lie outside the field.
 */
export function geometryCentroid(geometry: Geometry): { lon: number; lat: number } {
  const frame = localFrameOf(geometry);
  let area = 0;
  let x = 0;
  let y = 0;
  for (const polygon of polygonsOf(geometry)) {
    polygon.forEach((ring, i) => {
      const m = ringMoments(ring, frame);
      // Holes subtract; orientation is normalised so a clockwise outer ring still counts positive.
      const sign = (i === 0 ? 1 : -1) * Math.sign(m.area || 1);
      area += sign * m.area;
      x += sign * m.x;
      y += sign * m.y;
    });
  }
  const extent = outerExtent(geometry, frame);
  if (!(Math.abs(area) > DEGENERATE * extent * extent)) return outerVertexMean(geometry, frame);
  return fromLocal(frame, x / area, y / area);
}

/** The larger side of the outer rings' bounding box in the frame. */
function outerExtent(geometry: Geometry, frame: LocalFrame): number {
  let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
  for (const polygon of polygonsOf(geometry)) {
    for (const position of polygon[0] ?? []) {
      const [px, py] = toLocal(frame, position);
      minX = Math.min(minX, px);
      maxX = Math.max(maxX, px);
      minY = Math.min(minY, py);
      maxY = Math.max(maxY, py);
    }
  }
  return Math.max(maxX - minX, maxY - minY, 0);
}

function outerVertexMean(geometry: Geometry, frame: LocalFrame): { lon: number; lat: number } {
  const outer = polygonsOf(geometry).flatMap((polygon) => (polygon[0] ?? []).slice(0, -1));
  let x = 0;
  let y = 0;
  for (const position of outer) {
    const [px, py] = toLocal(frame, position);
    x += px;
    y += py;
  }
  const n = Math.max(1, outer.length);
  return fromLocal(frame, x / n, y / n);
}
