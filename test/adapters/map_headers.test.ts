// MapHeaders behaves as the platform's Headers for every operation sequence: values, iteration, Set-Cookie, errors.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { MapHeaders } from "../../src/adapters/map_headers.ts";

type Op = { kind: "append" | "set" | "delete"; name: string; value: string };

const name = fc.oneof(
  fc.constantFrom("Content-Type", "content-type", "Set-Cookie", "set-cookie", "X-Request-Id", "Vary", "www-authenticate"),
  fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,8}$/),
  // Invalid names: both must refuse them.
  fc.constantFrom("bad name", "", "é", "a:b"),
);
// Deno's Headers (2.9) departs from the Fetch standard in one case: appending " x" after an empty value gives "x"
// instead of ", x" (undici and the standard's "combine" give ", x"). MapHeaders follows the standard; under Deno
// the generated values are not empty, so the comparison covers everything else.
const IS_DENO = "Deno" in globalThis;
const value = fc.oneof(
  fc.stringMatching(/^[\x20-\x7e\t]{0,12}$/),
  fc.constantFrom(" padded ", "\tx\t", "a\r\nb", "nul\0", "", "sid=1; Path=/"),
).filter((v) => !IS_DENO || v.trim() !== "");
const op = fc.record({ kind: fc.constantFrom("append", "set", "delete") as fc.Arbitrary<Op["kind"]>, name, value });

/** Runs one operation on a Headers-like object; the outcome is "ok" or the error's type. */
function apply(h: Headers, o: Op): string {
  try {
    if (o.kind === "append") h.append(o.name, o.value);
    else if (o.kind === "set") h.set(o.name, o.value);
    else h.delete(o.name);
    return "ok";
  } catch (error) {
    return (error as Error).constructor.name;
  }
}

function observe(h: Headers, probes: string[]) {
  const read = (f: () => unknown) => {
    try {
      return f();
    } catch (error) {
      return (error as Error).constructor.name;
    }
  };
  return {
    entries: [...h],
    forEach: (() => {
      const seen: [string, string][] = [];
      h.forEach((v, k) => seen.push([k, v]));
      return seen;
    })(),
    keys: [...h.keys()],
    values: [...h.values()],
    cookies: h.getSetCookie(),
    probes: probes.map((p) => [read(() => h.get(p)), read(() => h.has(p))]),
  };
}

test("any sequence of append/set/delete leaves MapHeaders and Headers indistinguishable", () => {
  fc.assert(fc.property(fc.array(op, { maxLength: 25 }), fc.array(name, { maxLength: 6 }), (ops, probes) => {
    const ours = new MapHeaders();
    const theirs = new Headers();
    for (const o of ops) assert.equal(apply(ours, o), apply(theirs, o), JSON.stringify(o));
    const names = [...new Set([...ops.map((o) => o.name), ...probes])];
    assert.deepEqual(observe(ours, names), observe(theirs, names));
  }), { numRuns: 500 });
});

test("an empty value combines as the Fetch standard says: \"\" then \" x\" reads \", x\"", () => {
  const h = new MapHeaders();
  h.append("x-a", "");
  h.append("x-a", " x");
  assert.equal(h.get("x-a"), ", x");
});

test("fromRecord validates like new Headers(record), fromRaw takes parser pairs as they are", () => {
  assert.deepEqual([...MapHeaders.fromRecord({ "Content-Type": " text/plain ", Vary: "a" })], [...new Headers({ "Content-Type": " text/plain ", Vary: "a" })]);
  assert.throws(() => MapHeaders.fromRecord({ "bad name": "x" }), TypeError);
  assert.throws(() => MapHeaders.fromRecord({ ok: "a\nb" }), TypeError);
  const raw = ["Host", "a", "Set-Cookie", "x=1", "set-cookie", "y=2", "Accept", "b", "accept", "c"];
  const fromRaw = MapHeaders.fromRaw(raw);
  const standard = new Headers([["Host", "a"], ["Set-Cookie", "x=1"], ["set-cookie", "y=2"], ["Accept", "b"], ["accept", "c"]]);
  assert.deepEqual([...fromRaw], [...standard]);
  assert.deepEqual(fromRaw.getSetCookie(), ["x=1", "y=2"]);
  assert.equal(fromRaw.get("set-cookie"), standard.get("set-cookie"));
  assert.equal(Object.prototype.toString.call(fromRaw), "[object Headers]");
});

test("a MapHeaders is a Headers, and its pairs copy into Response, Request and Headers on every runtime", async () => {
  const h = MapHeaders.fromRecord({ "content-type": "text/plain" });
  h.append("set-cookie", "a=1");
  h.append("set-cookie", "b=2");
  assert.ok(h instanceof Headers);
  const copies = [new Response("x", { headers: [...h] }).headers, new Request("http://x/", { headers: [...h] }).headers, new Headers([...h])];
  // undici (Node, where the adapter builds these) also takes the object itself; Deno reads a Headers' internal list.
  if (!("Deno" in globalThis)) copies.push(new Response("x", { headers: h }).headers, new Headers(h));
  for (const copy of copies) {
    assert.equal(copy.get("content-type"), "text/plain");
    assert.deepEqual(copy.getSetCookie(), ["a=1", "b=2"]);
  }
});
