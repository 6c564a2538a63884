import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { decodeBase64Url, encodeBase64Url } from "../../src/crypto/base64url.ts";

// RFC 4648 §10 test vectors, in the URL-safe alphabet without padding.
const vectors: [string, string][] = [["", ""], ["f", "Zg"], ["fo", "Zm8"], ["foo", "Zm9v"], ["foob", "Zm9vYg"], ["fooba", "Zm9vYmE"], ["foobar", "Zm9vYmFy"]];

for (const [plain, encoded] of vectors) {
  test(`base64url encodes and decodes "${plain}"`, () => {
    const bytes = new TextEncoder().encode(plain);
    assert.equal(encodeBase64Url(bytes), encoded);
    assert.deepEqual(decodeBase64Url(encoded), bytes);
  });
}

test("base64url uses - and _ instead of + and /", () => {
  assert.equal(encodeBase64Url(new Uint8Array([0xfb, 0xff, 0xbf])), "-_-_");
  assert.deepEqual(decodeBase64Url("-_-_"), new Uint8Array([0xfb, 0xff, 0xbf]));
});

for (const bad of ["a+b", "a/b", "a b", "abcde", "Zg==="]) {
  test(`base64url refuses ${JSON.stringify(bad)}`, () => {
    assert.equal(decodeBase64Url(bad), undefined);
  });
}
