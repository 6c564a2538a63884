// Request builders for black-box tests through app.fetch.

export const BASE = "http://fieldgate.test";

/** A POST with a JSON body, as the service spec sends every request. */
export function postJson(path: string, body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(BASE + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** A POST with an application/x-www-form-urlencoded body, as RFC 6749 clients send it. */
export function postForm(path: string, body: Record<string, string> | string, headers: Record<string, string> = {}): Request {
  return new Request(BASE + path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: typeof body === "string" ? body : new URLSearchParams(body).toString(),
  });
}

/** A GET, optionally with headers. */
export function get(path: string, headers: Record<string, string> = {}): Request {
  return new Request(BASE + path, { headers });
}

/** HTTP Basic credentials per RFC 6749 §2.3.1 (form-urlencoded before base64). */
export function basicAuth(clientId: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, "+");
  return "Basic " + btoa(`${enc(clientId)}:${enc(secret)}`);
}
