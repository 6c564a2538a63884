// A flat local frame around a reference vertex, and shoelace moments of rings in it: for centroids and winding.
import { polygonsOf, type Geometry, type Position, type Ring } from "./area.ts";

/**
 * Local coordinates in degrees of latitude: x = (lon − lon0)·cos(lat0) with the longitude step folded into
 * [-180, 180), y = lat − lat0. Working relative to a vertex of the shape keeps the shoelace cross products small:
 * on absolute coordinates (lon·cos ≈ 120, lat ≈ 44) a 0.01 ha field loses most significant digits and its
 * centroid lands metres to 150 m away, often outside the field. Folding lets a MultiPolygon split at ±180
 * (RFC 7946 §3.1.9) sit in one piece.
 */
export interface LocalFrame {
  lon0: number;
  lat0: number;
  scale: number;
}

export interface Moments {
  /** Signed area (counterclockwise positive), in square degrees of latitude. */
  area: number;
  /** First moments: x·area and y·area summed, so centroid x = x / area. */
  x: number;
  y: number;
}

/** A longitude difference in degrees folded into [-180, 180). */
function foldLongitude(delta: number): number {
  if (delta >= 180) return delta - 360;
  if (delta < -180) return delta + 360;
  return delta;
}

/** The frame around the first vertex of the first outer ring. */
export function localFrameOf(geometry: Geometry): LocalFrame {
  const [lon0, lat0] = polygonsOf(geometry)[0]?.[0]?.[0] ?? [0, 0];
  return { lon0: lon0!, lat0: lat0!, scale: Math.cos((lat0! * Math.PI) / 180) || 1 };
}

/** A position in the frame: [x, y]. */
export function toLocal(frame: LocalFrame, position: Position): [number, number] {
  return [foldLongitude(position[0]! - frame.lon0) * frame.scale, position[1]! - frame.lat0];
}

/** Back from the frame to longitude and latitude, the longitude wrapped into [-180, 180]. */
export function fromLocal(frame: LocalFrame, x: number, y: number): { lon: number; lat: number } {
  let lon = frame.lon0 + x / frame.scale;
  if (lon > 180) lon -= 360;
  if (lon < -180) lon += 360;
  return { lon, lat: frame.lat0 + y };
}

/** Shoelace area and first moments of one closed ring in the frame. */
export function ringMoments(ring: Ring, frame: LocalFrame): Moments {
  let area = 0;
  let x = 0;
  let y = 0;
  let [x0, y0] = toLocal(frame, ring[0]!);
  for (let i = 1; i < ring.length; i++) {
    const [x1, y1] = toLocal(frame, ring[i]!);
    const cross = x0 * y1 - x1 * y0;
    area += cross;
    x += (x0 + x1) * cross;
    y += (y0 + y1) * cross;
    x0 = x1;
    y0 = y1;
  }
  return { area: area / 2, x: x / 6, y: y / 6 };
}
