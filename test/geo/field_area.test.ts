// The stored area: computed or declared, in range after rounding, and when a declared one is worth a note.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import type { Geometry } from "../../src/geo/area.ts";
import { GeoJsonError } from "../../src/geo/errors.ts";
import { fieldArea, isAreaMismatch, MAX_AREA_HA } from "../../src/geo/field_area.ts";

// About 76.3 ha at 52°N.
const square: Geometry = { type: "Polygon", coordinates: [[[5, 52], [5.01, 52], [5.01, 52.01], [5, 52.01], [5, 52]]] };

test("without a declared area the computed one is stored, rounded to 1 m²", () => {
  const { areaHa, computedAreaHa } = fieldArea(square, undefined);
  assert.equal(areaHa, computedAreaHa);
  assert.equal(areaHa, Math.round(areaHa * 10_000) / 10_000);
  assert.ok(areaHa > 76 && areaHa < 77);
});

test("a declared area is stored rounded to 1 m², beside the computed one", () => {
  const { areaHa, computedAreaHa } = fieldArea(square, 12.345678);
  assert.equal(areaHa, 12.3457);
  assert.ok(computedAreaHa > 76);
});

for (const declared of [0, -1, 0.00004, 1e305, MAX_AREA_HA + 0.001]) {
  test(`a declared area of ${declared} ha is refused`, () => {
    assert.throws(() => fieldArea(square, declared), (error: unknown) => error instanceof GeoJsonError && /area_ha/.test(error.message));
  });
}

test("a declared area of 0.00005 ha rounds up to 1 m² and is kept", () => {
  assert.equal(fieldArea(square, 0.00005).areaHa, 0.0001);
});

test("a mismatch is a difference of more than 10 % of the computed area, either way", () => {
  assert.equal(isAreaMismatch({ areaHa: 110, computedAreaHa: 100 }), false);
  assert.equal(isAreaMismatch({ areaHa: 90, computedAreaHa: 100 }), false);
  assert.equal(isAreaMismatch({ areaHa: 110.01, computedAreaHa: 100 }), true);
  assert.equal(isAreaMismatch({ areaHa: 89.99, computedAreaHa: 100 }), true);
});
