// Constant-time comparison so the time taken never reveals how much of a secret matched.

const encoder = new TextEncoder();

/** True when both byte arrays (or strings, compared as UTF-8) are equal; time depends only on length. */
export function constantTimeEqual(a: Uint8Array | string, b: Uint8Array | string): boolean {
  const x = typeof a === "string" ? encoder.encode(a) : a;
  const y = typeof b === "string" ? encoder.encode(b) : b;
  // Lengths of digests are public (always 32 bytes / 64 hex chars), so an early length check leaks nothing.
  if (x.length !== y.length) return false;
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}
