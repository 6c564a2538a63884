// HEAD answers: the GET's status and headers, no body, and the length the GET would have sent.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { answerFor } from "../../src/app/head.ts";

const get = (method: string) => new Request("http://x/", { method });

test("a HEAD answer keeps status and headers, drops the body and states its length", async () => {
  const answer = await answerFor(get("HEAD"), new Response("héllo", { status: 201, headers: { "x-a": "1" } }));
  assert.equal(answer.status, 201);
  assert.equal(answer.headers.get("x-a"), "1");
  assert.equal(answer.headers.get("content-length"), "6");
  assert.equal(answer.body, null);
});

test("a GET answer, or a HEAD answer without a body, passes through as it is", async () => {
  const response = new Response("x");
  assert.equal(await answerFor(get("GET"), response), response);
  const empty = new Response(null, { status: 204 });
  assert.equal(await answerFor(get("HEAD"), empty), empty);
});
