// SHA-256 hex digests through node:crypto for the Node adapter; same output as crypto/hash.ts sha256Hex.
import { hash } from "node:crypto";
import type { Digest } from "../deps.ts";

/**
 * The Node adapter's digest: a synchronous one-shot hash (about 0.5 µs) instead of crypto.subtle.digest, whose
 * thread-pool round trip measured 40–50 µs per call here; token issuance takes two digests per request.
 */
export const nodeSha256Hex: Digest = async (value) => hash("sha256", value, "hex");
