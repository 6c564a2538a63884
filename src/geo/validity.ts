// Validity of field polygons by the OGC simple-features rules, so that the area formula means something: simple
// rings, holes inside their shell and apart, MultiPolygon parts apart. A bow-tie's lobes cancel, a hole outside
// its shell is subtracted anyway, overlapping parts count twice: each gives a wrong area without any error.
import { polygonsOf, type Geometry, type Ring } from "./area.ts";
import { GeoJsonError } from "./errors.ts";
import { contactOf, onSegment, turn, type Point } from "./segments.ts";

type Rings = readonly (readonly Point[])[];

/** How messages name rings and polygons: `polygon ring 1`, or `polygon 2 ring 1` in a MultiPolygon. */
interface Names {
  part(part: number): string;
  ring(part: number, ring: number): string;
}

/** The geometry's rings as points without repeats, and how to name them. */
function prepare(geometry: Geometry): { polygons: Rings[]; names: Names } {
  const multi = geometry.type === "MultiPolygon";
  const names: Names = {
    part: (part) => (multi ? `polygon ${part}` : "polygon"),
    ring: (part, ring) => `${multi ? `polygon ${part}` : "polygon"} ring ${ring}`,
  };
  return { polygons: polygonsOf(geometry).map((polygon) => polygon.map(withoutRepeats)), names };
}

/**
 * Throws GeoJsonError naming the polygon, ring and a nearby position when a polygon (each part of a MultiPolygon
 * on its own) is not valid: a ring across the antimeridian, a ring that crosses or touches itself or has a spike,
 * rings that cross or share an edge, a hole outside its shell or inside another hole. Repeated consecutive
 * positions (common in GPS tracks) are skipped for the checks; they stay in the stored geometry.
 */
export function checkValidity(geometry: Geometry): void {
  const { polygons, names } = prepare(geometry);
  polygons.forEach((rings, part) => rings.forEach((ring, r) => {
    checkAntimeridian(ring, names.ring(part, r));
    checkSpikes(ring, names.ring(part, r));
  }));
  checkEdges(polygons, names, (e, f) => e.part === f.part);
  polygons.forEach((rings, part) => checkHoles(rings, part, names));
}

/**
 * Throws GeoJsonError when parts of a MultiPolygon cross, share an edge or overlap (one inside another's area);
 * they may touch at points. Call after checkValidity, which this relies on for each part being valid.
 */
export function checkPartsApart(geometry: Geometry): void {
  if (geometry.type !== "MultiPolygon") return;
  const { polygons, names } = prepare(geometry);
  checkEdges(polygons, names, (e, f) => e.part !== f.part);
  checkParts(polygons, names);
}

function withoutRepeats(ring: Ring): Point[] {
  const points: Point[] = [];
  for (const [x, y] of ring) {
    const last = points[points.length - 1];
    if (!last || last.x !== x || last.y !== y) points.push({ x: x!, y: y! });
  }
  return points;
}

/** "near lon,lat", rounded to about a centimetre. */
function near(p: Point): string {
  return `near ${Number(p.x.toFixed(7))},${Number(p.y.toFixed(7))}`;
}

// An edge longer than half the world almost always means a ring drawn across ±180 without being split.
function checkAntimeridian(ring: readonly Point[], name: string): void {
  for (let i = 1; i < ring.length; i++) {
    if (Math.abs(ring[i]!.x - ring[i - 1]!.x) > 180) {
      throw new GeoJsonError(`${name} crosses the antimeridian ${near(ring[i - 1]!)}: split it at the antimeridian (RFC 7946 §3.1.9)`);
    }
  }
}

// A ring that goes out and comes back along the same line (a → b → a, or a → b → back past a) encloses nothing
// there; it is usually a GPS or digitising slip. Checked before the sweep, which then only looks at non-neighbours.
function checkSpikes(ring: readonly Point[], name: string): void {
  const n = ring.length - 1;
  for (let i = 0; i < n; i++) {
    const a = ring[(i + n - 1) % n]!;
    const b = ring[i]!;
    const c = ring[i + 1]!;
    const back = (b.x - a.x) * (c.x - b.x) + (b.y - a.y) * (c.y - b.y) < 0;
    if (back && turn(a, b, c) === 0) throw new GeoJsonError(`${name} turns back on itself (a spike) ${near(b)}`);
  }
}

interface Edge {
  a: Point;
  b: Point;
  minX: number;
  maxX: number;
  minY: number;
  maxY: number;
  part: number;
  ring: number;
  /** Position of the edge in its ring, and how many edges the ring has (to tell neighbours). */
  index: number;
  count: number;
}

function edgesOf(polygons: readonly Rings[]): Edge[] {
  const edges: Edge[] = [];
  polygons.forEach((rings, part) => rings.forEach((points, ring) => {
    for (let index = 0; index < points.length - 1; index++) {
      const a = points[index]!;
      const b = points[index + 1]!;
      const box = { minX: Math.min(a.x, b.x), maxX: Math.max(a.x, b.x), minY: Math.min(a.y, b.y), maxY: Math.max(a.y, b.y) };
      edges.push({ a, b, ...box, part, ring, index, count: points.length - 1 });
    }
  }));
  return edges;
}

/**
 * Every pair of edges whose boxes overlap, found by a sweep over edges sorted by their west end: each edge meets
 * only those that start before it ends, so a typical field costs about n log n, not n².
 */
function checkEdges(polygons: readonly Rings[], names: Names, wanted: (e: Edge, f: Edge) => boolean): void {
  const edges = edgesOf(polygons).sort((e, f) => e.minX - f.minX);
  for (let i = 0; i < edges.length; i++) {
    const e = edges[i]!;
    for (let j = i + 1; j < edges.length && edges[j]!.minX <= e.maxX; j++) {
      const f = edges[j]!;
      if (f.minY <= e.maxY && f.maxY >= e.minY && wanted(e, f)) checkPair(e, f, names);
    }
  }
}

// Within a ring, neighbours share a vertex and meet only there (checkSpikes saw to that); other edges may not meet
// at all. Different rings and parts may touch at points, never cross or share a stretch of boundary (OGC simple
// features, 06-103r4 §6.1.11.1).
function checkPair(e: Edge, f: Edge, names: Names): void {
  const sameRing = e.part === f.part && e.ring === f.ring;
  if (sameRing && neighbours(e, f)) return;
  const contact = contactOf(e.a, e.b, f.a, f.b);
  if (contact.kind === "none") return;
  if (sameRing) throw new GeoJsonError(`${names.ring(e.part, e.ring)} crosses or touches itself ${near(contact.at)}`);
  const pair = e.part === f.part
    ? `${names.part(e.part)} rings ${Math.min(e.ring, f.ring)} and ${Math.max(e.ring, f.ring)}`
    : `${names.ring(e.part, e.ring)} and ${names.ring(f.part, f.ring)}`;
  if (contact.kind === "cross") throw new GeoJsonError(`${pair} cross ${near(contact.at)}`);
  if (contact.kind === "overlap") throw new GeoJsonError(`${pair} share an edge ${near(contact.at)}`);
}

function neighbours(e: Edge, f: Edge): boolean {
  const gap = Math.abs(e.index - f.index);
  return gap === 1 || gap === e.count - 1;
}

/** Winding-number test with exact-sign turns: 1 inside, 0 on the ring, -1 outside. */
function pointInRing(p: Point, ring: readonly Point[]): -1 | 0 | 1 {
  let winding = 0;
  for (let i = 0; i < ring.length - 1; i++) {
    const a = ring[i]!;
    const b = ring[i + 1]!;
    if (onSegment(p, a, b)) return 0;
    if (a.y <= p.y && b.y > p.y && turn(a, b, p) > 0) winding++;
    else if (b.y <= p.y && a.y > p.y && turn(a, b, p) < 0) winding--;
  }
  return winding === 0 ? -1 : 1;
}

/**
 * A point of `ring` on none of the `others`: a vertex, or failing that an edge midpoint. Rings that neither cross
 * nor share edges touch at points only, so such a point tells on which side of each other ring the whole ring is.
 */
function samplePoint(ring: readonly Point[], others: Rings): Point | undefined {
  const clear = (p: Point) => others.every((other) => pointInRing(p, other) !== 0);
  const vertex = ring.slice(0, -1).find(clear);
  if (vertex) return vertex;
  for (let i = 0; i < ring.length - 1; i++) {
    const mid = { x: (ring[i]!.x + ring[i + 1]!.x) / 2, y: (ring[i]!.y + ring[i + 1]!.y) / 2 };
    if (clear(mid)) return mid;
  }
  return undefined;
}

/** Whether ring `inner` lies inside ring `outer`, with a point showing it (or undefined when it does not). */
function insideRing(inner: readonly Point[], outer: readonly Point[]): Point | undefined {
  const p = samplePoint(inner, [outer]);
  return p && pointInRing(p, outer) > 0 ? p : undefined;
}

function checkHoles(rings: Rings, part: number, names: Names): void {
  const shell = rings[0]!;
  for (let h = 1; h < rings.length; h++) {
    const p = samplePoint(rings[h]!, [shell]);
    if (p && pointInRing(p, shell) < 0) {
      throw new GeoJsonError(`${names.ring(part, h)} (a hole) is not inside ring 0 ${near(p)}`);
    }
  }
  const boxes = rings.map(boxOf);
  for (let i = 1; i < rings.length; i++) {
    for (let j = 1; j < rings.length; j++) {
      if (i === j || !boxesMeet(boxes[i]!, boxes[j]!)) continue;
      const p = insideRing(rings[j]!, rings[i]!);
      if (p) throw new GeoJsonError(`${names.ring(part, j)} (a hole) is inside ring ${i}, another hole, ${near(p)}`);
    }
  }
}

/** Whether p lies in the polygon's area: inside its shell and not inside (nor on) any of its holes. */
function inArea(p: Point, rings: Rings): boolean {
  return pointInRing(p, rings[0]!) > 0 && rings.slice(1).every((hole) => pointInRing(p, hole) < 0);
}

// Parts whose boundaries neither cross nor share edges overlap exactly when one part's shell lies in the other's
// area (an island inside another part's hole is fine).
function checkParts(polygons: readonly Rings[], names: Names): void {
  const boxes = polygons.map((rings) => boxOf(rings[0]!));
  for (let a = 0; a < polygons.length; a++) {
    for (let b = 0; b < polygons.length; b++) {
      if (a === b || !boxesMeet(boxes[a]!, boxes[b]!)) continue;
      const p = samplePoint(polygons[b]![0]!, polygons[a]!);
      if (p && inArea(p, polygons[a]!)) {
        throw new GeoJsonError(`${names.part(b)} overlaps ${names.part(a)} ${near(p)}: MultiPolygon parts must not overlap`);
      }
    }
  }
}

interface Box {
  minX: number;
  maxX: number;
  minY: number;
  maxY: number;
}

function boxOf(ring: readonly Point[]): Box {
  const box = { minX: Infinity, maxX: -Infinity, minY: Infinity, maxY: -Infinity };
  for (const p of ring) {
    box.minX = Math.min(box.minX, p.x);
    box.maxX = Math.max(box.maxX, p.x);
    box.minY = Math.min(box.minY, p.y);
    box.maxY = Math.max(box.maxY, p.y);
  }
  return box;
}

function boxesMeet(a: Box, b: Box): boolean {
  return a.minX <= b.maxX && b.minX <= a.maxX && a.minY <= b.maxY && b.minY <= a.maxY;
}
