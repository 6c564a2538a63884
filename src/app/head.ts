// HEAD answers for embedders: node:http and Deno.serve drop a HEAD response's body themselves, a hand-written
// forwarder would not.

/**
 * A HEAD answer: the GET's status and headers without its body, and with the Content-Length the GET would have
 * sent (RFC 9110 §8.6, §9.3.2). A null body alone is not enough: Deno.serve then writes `content-length: 0`, which
 * tells a client the resource is empty. A body that cannot be read leaves the length out.
 */
export async function withoutBody(response: Response): Promise<Response> {
  const headers = new Headers(response.headers);
  try {
    headers.set("content-length", String((await response.arrayBuffer()).byteLength));
  } catch {
    headers.delete("content-length");
  }
  return new Response(null, { status: response.status, statusText: response.statusText, headers });
}

/** The response as sent to `request`: without its body when the request is a HEAD. */
export async function answerFor(request: Request, response: Response): Promise<Response> {
  return request.method === "HEAD" && response.body ? await withoutBody(response) : response;
}
