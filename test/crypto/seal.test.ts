import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openSealed, sealText } from "../../src/crypto/seal.ts";
import { cryptoRandom } from "../../src/deps.ts";
import { decodeBase64Url, encodeBase64Url } from "../../src/crypto/base64url.ts";

const SECRET = "fgss_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG";
const options = { purpose: "test", random: cryptoRandom };

test("openSealed returns what sealText sealed, and the sealed text does not contain it", async () => {
  const text = JSON.stringify({ refreshToken: "fgrt_secret-value", note: "äöü ✓" });
  const sealed = await sealText(SECRET, text, options);
  assert.match(sealed, /^[A-Za-z0-9_-]+$/);
  assert.ok(!sealed.includes("fgrt_"));
  assert.equal(await openSealed(SECRET, sealed, options), text);
});

test("sealing the same text twice gives different output (fresh nonce)", async () => {
  assert.notEqual(await sealText(SECRET, "same", options), await sealText(SECRET, "same", options));
});

const refusals: { name: string; open: (sealed: string) => Promise<string | undefined> }[] = [
  { name: "another secret", open: (s) => openSealed(SECRET.replace("0", "1"), s, options) },
  { name: "another purpose", open: (s) => openSealed(SECRET, s, { purpose: "other" }) },
  {
    name: "one flipped bit",
    open: (s) => {
      const bytes = decodeBase64Url(s)!;
      bytes[bytes.length - 20]! ^= 1;
      return openSealed(SECRET, encodeBase64Url(bytes), options);
    },
  },
  { name: "a truncated value", open: (s) => openSealed(SECRET, s.slice(0, 30), options) },
  { name: "text that is not base64url", open: () => openSealed(SECRET, "not base64url!", options) },
];

for (const row of refusals) {
  test(`openSealed gives undefined for ${row.name}`, async () => {
    const sealed = await sealText(SECRET, "the demo state", options);
    assert.equal(await row.open(sealed), undefined);
  });
}
