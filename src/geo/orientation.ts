// Ring winding as RFC 7946 §3.1.6 asks of producers: exterior rings counterclockwise, holes clockwise.
import type { Geometry, PolygonCoordinates } from "./area.ts";
import { localFrameOf, ringMoments, type LocalFrame } from "./planar.ts";

/**
 * The geometry with every ring that winds the wrong way reversed. Parsers must accept either winding (RFC 7946
 * §3.1.6), so files come in both; storing one keeps the served boundary in RFC order whatever the source.
 */
export function rewindGeometry(geometry: Geometry): Geometry {
  const frame = localFrameOf(geometry);
  if (geometry.type === "Polygon") return { type: "Polygon", coordinates: rewindPolygon(geometry.coordinates, frame) };
  return { type: "MultiPolygon", coordinates: geometry.coordinates.map((polygon) => rewindPolygon(polygon, frame)) };
}

function rewindPolygon(polygon: PolygonCoordinates, frame: LocalFrame): PolygonCoordinates {
  return polygon.map((ring, i) => {
    const counterclockwise = ringMoments(ring, frame).area > 0;
    return counterclockwise === (i === 0) ? ring : [...ring].reverse();
  });
}
