import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { isVerifiableBcrypt, verifyBcrypt } from "../../src/crypto/bcrypt.ts";
import { passwordIterations, verifyPassword } from "../../src/crypto/hash.ts";

// Cost 4 keeps these fast; the import's fixtures carry cost 12 digests (test/helpers/doorkeeper_fixtures.ts).
const DIGEST = "$2b$04$r39fg.qTAlyxdOv39spsh.0fRNULhXDcOtHormXWNwnyuwK8eWcn2";
const COST_15 = "$2b$15$nx0cv58o9C8uXTclEjKVmOoghEX6IOso47JR9XJHDgO.AmdZS7zuW";

test("verifyBcrypt accepts the right password and refuses a wrong one", async () => {
  assert.equal(await verifyBcrypt("four rounds only", DIGEST), true);
  assert.equal(await verifyBcrypt("four rounds onlY", DIGEST), false);
});

test("verifyPassword checks an imported bcrypt digest, and passwordIterations reports 0 so sign-in rehashes it", async () => {
  assert.equal(await verifyPassword("four rounds only", DIGEST), true);
  assert.equal(passwordIterations(DIGEST), 0);
  assert.equal(passwordIterations("pbkdf2-sha256$1000$AAAA$BBBB"), 1000);
});

test("verifyPassword sends a bcrypt digest to the injected bcrypt and a PBKDF2 hash to pbkdf2", async () => {
  const checked: string[] = [];
  const bcrypt = async (_password: string, digest: string) => (checked.push(digest), true);
  assert.equal(await verifyPassword("anything", DIGEST, { bcrypt }), true);
  assert.equal(await verifyPassword("anything", "pbkdf2-sha256$1000$AAAA$BBBB", { bcrypt }), false);
  assert.deepEqual(checked, [DIGEST]);
});

for (const [name, digest] of [
  ["a cost above 14", COST_15],
  ["a cost below 4", "$2b$03$r39fg.qTAlyxdOv39spsh.0fRNULhXDcOtHormXWNwnyuwK8eWcn2"],
  ["another variant", "$2x$04$r39fg.qTAlyxdOv39spsh.0fRNULhXDcOtHormXWNwnyuwK8eWcn2"],
  ["a truncated digest", DIGEST.slice(0, 40)],
] as const) {
  test(`verifyBcrypt refuses ${name} without running it`, async () => {
    assert.equal(isVerifiableBcrypt(digest), false);
    assert.equal(await verifyBcrypt("four rounds only", digest), false);
  });
}
