import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { cspSource, page } from "../../src/ui/page.ts";

const sources: Array<[string, string | undefined]> = [
  ["https://client.example/cb?x=1", "https://client.example"],
  ["http://127.0.0.1:8080/cb", "http://127.0.0.1:8080"],
  ["com.example.app:/callback", "com.example.app:"],
  ["not a url", undefined],
];

for (const [target, expected] of sources) {
  test(`page: the CSP source for ${target} is ${expected}`, () => {
    assert.equal(cspSource(target), expected);
  });
}

test("page: form targets extend form-action and keep the rest of the policy", () => {
  const res = page("<p>x</p>", { formTargets: ["https://client.example/cb"], cookies: ["a=1", "b=2"] });
  const csp = res.headers.get("content-security-policy") ?? "";
  assert.match(csp, /form-action 'self' https:\/\/client\.example;/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.deepEqual(res.headers.getSetCookie(), ["a=1", "b=2"]);
});

test("page: without form targets the policy allows forms to post only to ourselves", () => {
  assert.match(page("x").headers.get("content-security-policy") ?? "", /form-action 'self';/);
});
