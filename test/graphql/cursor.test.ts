import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createIdCodec, requestIds, type IdType } from "../../src/graphql/cursor.ts";
import { encodeBase64Url } from "../../src/crypto/base64url.ts";
import { webCryptoBlockCipher } from "../../src/crypto/block_cipher.ts";
import type { BlockCipher } from "../../src/deps.ts";
import { buildTestApp, openTestApp, type TestApp } from "../helpers/test_app.ts";

const TYPES: IdType[] = ["Field", "Organization", "User"];

function codecOf(t: TestApp = buildTestApp()) {
  return createIdCodec(t.app.deps);
}

test("global ids round-trip for every type, up to the largest safe row id", async () => {
  const codec = codecOf();
  const rows = [1, 2, 42, 999_999_999_999, Number.MAX_SAFE_INTEGER];
  for (const type of TYPES) {
    const ids = await codec.seal(type, rows);
    assert.deepEqual(await Promise.all(ids.map((id) => codec.open(type, id))), rows);
  }
});

test("a global id is 22 base64url characters with no trace of its row number", async () => {
  const codec = codecOf();
  // Six-digit rows: a random 22-character id spells a given one with odds of about 1 in 4 billion.
  const rows = Array.from({ length: 200 }, (_, i) => 100_000 + i);
  const ids = await codec.seal("Field", rows);
  assert.equal(new Set(ids).size, rows.length);
  for (const [i, id] of ids.entries()) {
    assert.match(id, /^[A-Za-z0-9_-]{22}$/);
    assert.ok(!id.includes(String(rows[i])), `${id} spells ${rows[i]}`);
    const text = new TextDecoder().decode(Uint8Array.from(atob(id.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0)));
    assert.ok(!text.includes(String(rows[i])) && !text.includes("Field"), `${id} decodes to readable text`);
  }
  // Neighbouring rows share no prefix worth the name: a permutation, not a counter.
  const shared = ids.slice(1).map((id, i) => [...id].findIndex((c, k) => c !== ids[i]![k]));
  assert.ok(shared.filter((n) => n >= 3).length < 5, `neighbouring ids share prefixes: ${shared.join(",")}`);
});

test("ids are deterministic: the same row gets the same id from another codec over the same database", async () => {
  const t = await openTestApp();
  const first = await codecOf(t).seal("Field", [1, 6, 7]);
  assert.deepEqual(await codecOf(t).seal("Field", [1, 6, 7]), first);
  assert.deepEqual(await codecOf(t).seal("Field", [6]), [first[1]]);
});

test("another deployment (another database, another key) issues other ids and opens none of these", async () => {
  const ours = codecOf();
  const theirs = codecOf();
  const [id] = await ours.seal("Field", [6]);
  const [their] = await theirs.seal("Field", [6]);
  assert.notEqual(id, their);
  assert.equal(await theirs.open("Field", id!), undefined);
});

test("an id of one type never opens as another", async () => {
  const codec = codecOf();
  for (const type of TYPES) {
    const [id] = await codec.seal(type, [1]);
    for (const other of TYPES.filter((o) => o !== type)) assert.equal(await codec.open(other, id!), undefined, `${type} as ${other}`);
  }
});

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

test("every one-character change of an id is refused, none opens as another row", async () => {
  const codec = codecOf();
  const [id] = await codec.seal("Field", [6]);
  for (let i = 0; i < id!.length; i++) {
    const replacement = ALPHABET[(ALPHABET.indexOf(id![i]!) + 1 + i) % 64]!;
    const altered = id!.slice(0, i) + replacement + id!.slice(i + 1);
    assert.equal(await codec.open("Field", altered), undefined, `position ${i}: ${altered}`);
  }
});

/** A plaintext block: tag, then bytes 1..7, then the 64-bit row id as high and low 32-bit halves. */
function block(tag: number, middle: number, high: number, low: number): Uint8Array {
  const bytes = new Uint8Array(16);
  const view = new DataView(bytes.buffer);
  view.setUint8(0, tag);
  view.setUint8(4, middle);
  view.setUint32(8, high);
  view.setUint32(12, low);
  return bytes;
}

const invalidBlocks = [
  { name: "an unknown type tag", block: block(4, 0, 0, 6) },
  { name: "a nonzero byte where zeros belong", block: block(1, 1, 0, 6) },
  { name: "row 0", block: block(1, 0, 0, 0) },
  { name: "a row id beyond the safe integers", block: block(1, 0, 0x0020_0000, 0) },
];

for (const { name, block: plain } of invalidBlocks) {
  test(`open refuses a block with ${name}, even enciphered under the deployment's own key`, async () => {
    const t = await openTestApp();
    let aes: BlockCipher | undefined;
    const codec = createIdCodec({ ...t.app.deps, blockCipher: async (key) => (aes = await webCryptoBlockCipher(key)) });
    await codec.seal("Field", [1]);
    const valid = encodeBase64Url(await aes!.encrypt(block(1, 0, 0, 6)));
    assert.equal(await codec.open("Field", valid), 6, "the same construction with the right fixed bytes opens");
    assert.equal(await codec.open("Field", encodeBase64Url(await aes!.encrypt(plain))), undefined);
  });
}

const malformed = [
  { name: "empty", value: "" },
  { name: "a raw row number", value: "6" },
  { name: "the old readable id of Field:6", value: "RmllbGQ6Ng" },
  { name: "the old cursor of field 6", value: "Y3Vyc29yOnYxOjY" },
  { name: "21 characters", value: "A".repeat(21) },
  { name: "23 characters", value: "A".repeat(23) },
  { name: "padded", value: "A".repeat(22) + "==" },
  { name: "not base64url", value: "%".repeat(22) },
  { name: "very long", value: "x".repeat(10_000) },
];

for (const { name, value } of malformed) {
  test(`open refuses ${name}`, async () => {
    assert.equal(await codecOf().open("Field", value), undefined);
  });
}

test("open refuses the non-canonical spelling of a valid id (the 4 unused trailing bits set)", async () => {
  const codec = codecOf();
  const [id] = await codec.seal("Field", [6]);
  const last = ALPHABET.indexOf(id!.at(-1)!);
  assert.equal(last % 16, 0, "a canonical id leaves the last character's low 4 bits zero");
  assert.equal(await codec.open("Field", id!.slice(0, -1) + ALPHABET[last + 1]), undefined);
});

test("the key comes from the store once; a failed read is retried, not remembered", async () => {
  const t = await openTestApp();
  const ensure = t.store.secrets.ensure;
  let calls = 0;
  t.store.secrets.ensure = async (...args) => {
    if (++calls === 1) throw new Error("database is locked");
    return ensure(...args);
  };
  const codec = createIdCodec(t.app.deps);
  await assert.rejects(codec.seal("Field", [1]), /database is locked/);
  const [id] = await codec.seal("Field", [1]);
  assert.equal(await codec.open("Field", id!), 1);
  await codec.seal("User", [2]);
  assert.equal(calls, 2);
});

test("a request's ids are read without sealing again, and an unprepared row is an internal error", async () => {
  const ids = requestIds(codecOf());
  await ids.prepare("Field", [3, 4]);
  assert.match(ids.of("Field", 3), /^[A-Za-z0-9_-]{22}$/);
  assert.notEqual(ids.of("Field", 3), ids.of("Field", 4));
  assert.throws(() => ids.of("Field", 5), /no prepared id/);
  assert.throws(() => ids.of("Organization", 3), /no prepared id/);
  assert.equal(await ids.seal("Field", 4), ids.of("Field", 4));
});
