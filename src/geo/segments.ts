// How two straight segments in the lon/lat plane meet: not at all, at a point, crossing, or along a stretch.

export interface Point {
  x: number;
  y: number;
}

/** The kind of contact, and a point where it happens. */
export type Contact =
  | { kind: "none" }
  | { kind: "touch" | "cross" | "overlap"; at: Point };

// Shewchuk's error bound for a 2D orientation from rounded products ("Adaptive Precision Floating-Point
// Arithmetic and Fast Robust Geometric Predicates", 1997, ccwerrboundA): below it the sign is not known, and
// the turn counts as straight. Uncertain cases thus read as touching, never as passing clear.
const ORIENT_BOUND = (3 + 16 * Number.EPSILON) * Number.EPSILON;

/** Which way a → b → c turns: 1 left, -1 right, 0 straight (or too close to straight to tell in doubles). */
export function turn(a: Point, b: Point, c: Point): -1 | 0 | 1 {
  const left = (b.x - a.x) * (c.y - a.y);
  const right = (b.y - a.y) * (c.x - a.x);
  const det = left - right;
  const bound = ORIENT_BOUND * (Math.abs(left) + Math.abs(right));
  if (det > bound) return 1;
  if (det < -bound) return -1;
  return 0;
}

/** Whether p, known to be in line with a–b, lies within the segment's box (so on the segment). */
function withinBox(p: Point, a: Point, b: Point): boolean {
  return p.x >= Math.min(a.x, b.x) && p.x <= Math.max(a.x, b.x) && p.y >= Math.min(a.y, b.y) && p.y <= Math.max(a.y, b.y);
}

/** Whether p lies on the segment a–b, ends included. */
export function onSegment(p: Point, a: Point, b: Point): boolean {
  return turn(a, b, p) === 0 && withinBox(p, a, b);
}

/** How segments p1–p2 and q1–q2 meet. Both must have length. */
export function contactOf(p1: Point, p2: Point, q1: Point, q2: Point): Contact {
  const d1 = turn(q1, q2, p1);
  const d2 = turn(q1, q2, p2);
  const d3 = turn(p1, p2, q1);
  const d4 = turn(p1, p2, q2);
  if (d1 * d2 < 0 && d3 * d4 < 0) return { kind: "cross", at: crossingPoint(p1, p2, q1, q2) };
  if (d1 === 0 && d2 === 0) return collinearContact(p1, p2, q1, q2);
  if (d1 === 0 && withinBox(p1, q1, q2)) return { kind: "touch", at: p1 };
  if (d2 === 0 && withinBox(p2, q1, q2)) return { kind: "touch", at: p2 };
  if (d3 === 0 && withinBox(q1, p1, p2)) return { kind: "touch", at: q1 };
  if (d4 === 0 && withinBox(q2, p1, p2)) return { kind: "touch", at: q2 };
  return { kind: "none" };
}

/** Segments on one line: compare their extents along the line's longer axis. */
function collinearContact(p1: Point, p2: Point, q1: Point, q2: Point): Contact {
  const alongX = Math.abs(q2.x - q1.x) >= Math.abs(q2.y - q1.y);
  const t = (p: Point) => (alongX ? p.x : p.y);
  const start = Math.max(Math.min(t(p1), t(p2)), Math.min(t(q1), t(q2)));
  const end = Math.min(Math.max(t(p1), t(p2)), Math.max(t(q1), t(q2)));
  if (end < start) return { kind: "none" };
  const at = [p1, p2, q1, q2].find((p) => t(p) === start)!;
  return { kind: end > start ? "overlap" : "touch", at };
}

function crossingPoint(p1: Point, p2: Point, q1: Point, q2: Point): Point {
  const rx = p2.x - p1.x;
  const ry = p2.y - p1.y;
  const sx = q2.x - q1.x;
  const sy = q2.y - q1.y;
  const t = ((q1.x - p1.x) * sy - (q1.y - p1.y) * sx) / (rx * sy - ry * sx);
  return { x: p1.x + t * rx, y: p1.y + t * ry };
}
