// Facts the app works out once per request: its id and the client's address.
import type { Random } from "../deps.ts";
import { isIpAddress, UNKNOWN_ADDRESS } from "../http/throttle.ts";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const HEX_BYTE = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** The client's X-Request-Id when it is sane, otherwise a random 16-hex-digit id from the app's own randomness. */
export function requestIdOf(request: Request, random: Random): string {
  const incoming = request.headers.get("x-request-id");
  if (incoming && REQUEST_ID.test(incoming)) return incoming;
  let id = "";
  for (const byte of random(8)) id += HEX_BYTE[byte]!;
  return id;
}

/**
 * The client's address. Behind exactly one trusted proxy it is the right-most X-Forwarded-For entry: the proxy
 * appends the address it saw (nginx's $proxy_add_x_forwarded_for), everything left of it is whatever the client
 * sent. A value that is not one IP address falls back to the socket address rather than becoming a throttle key.
 */
export function clientAddress(request: Request, { remoteAddress, trustProxy }: { remoteAddress?: string; trustProxy: boolean }): string {
  // Checked like a forwarded one: an embedder's value reaches throttle keys and the audit trail.
  const socket = remoteAddress !== undefined && isIpAddress(remoteAddress) ? remoteAddress : UNKNOWN_ADDRESS;
  const forwarded = trustProxy ? request.headers.get("x-forwarded-for") : null;
  if (forwarded === null) return socket;
  const last = forwarded.slice(forwarded.lastIndexOf(",") + 1).trim();
  return isIpAddress(last) ? last : socket;
}
