// Opaque global ids and cursors: (type, row id) enciphered as one AES block under a per-deployment key, base64url.
import type { Deps } from "../deps.ts";
import { decodeBase64Url, encodeBase64Url } from "../crypto/base64url.ts";
import { BLOCK_BYTES, deriveBlockKey } from "../crypto/block_cipher.ts";
import { serverSecretKey } from "../crypto/server_secret.ts";

export type IdType = "Field" | "Organization" | "User";

/** The first byte of a plaintext block names its type, so an id of one type never opens as another. */
const TYPE_TAGS: Record<IdType, number> = { Field: 1, Organization: 2, User: 3 };
/** The server_secrets row the key comes from; created by the first instance that needs it, kept across restarts. */
const SECRET_NAME = "graphql ids";
const KEY_PURPOSE = "fieldgate graphql ids v1";
/** base64url of one block, unpadded: every id and cursor is exactly this long. */
const ID_SHAPE = /^[A-Za-z0-9_-]{22}$/;
const TWO_32 = 2 ** 32;

/** Seals row ids into global ids and opens them again; one per app, its key read from the store once. */
export interface IdCodec {
  /** The global ids of these rows of `type`, in the same order. */
  seal(type: IdType, rowIds: readonly number[]): Promise<string[]>;
  /** The row id inside `value` when it is a global id of `type` this deployment issued; otherwise undefined. */
  open(type: IdType, value: string): Promise<number | undefined>;
}

/**
 * The plaintext block: type tag, seven zero bytes, the row id as a 64-bit big-endian integer. The 75 bits that a
 * valid block fixes (tag, zeros, the top of a safe integer) are the authentication: a forged or altered id opens to
 * a random block, which passes with probability 2^-75 (encode-then-encipher, Bellare and Rogaway, ASIACRYPT 2000).
 */
function writePlainBlock(view: DataView, offset: number, type: IdType, rowId: number): void {
  if (!Number.isSafeInteger(rowId) || rowId < 1) throw new RangeError(`row id ${rowId} cannot be sealed`);
  view.setUint8(offset, TYPE_TAGS[type]);
  view.setUint32(offset + 8, Math.floor(rowId / TWO_32));
  view.setUint32(offset + 12, rowId % TWO_32);
}

/** The row id a deciphered block holds when it is a valid block of `type`. */
function rowIdInBlock(type: IdType, block: Uint8Array): number | undefined {
  if (block.length !== BLOCK_BYTES || block[0] !== TYPE_TAGS[type]) return undefined;
  for (let i = 1; i < 8; i++) if (block[i] !== 0) return undefined;
  const view = new DataView(block.buffer, block.byteOffset, BLOCK_BYTES);
  const rowId = view.getUint32(8) * TWO_32 + view.getUint32(12);
  return Number.isSafeInteger(rowId) && rowId >= 1 ? rowId : undefined;
}

/**
 * The app's codec. Deterministic (one row, one id, on every instance sharing the database, so clients can cache
 * by id) and short (22 characters); the key is derived from the stored secret on first use, and a failed load is
 * retried by the next request rather than remembered.
 */
export function createIdCodec(deps: Pick<Deps, "store" | "clock" | "random" | "blockCipher">): IdCodec {
  const keyed = serverSecretKey(deps, SECRET_NAME, async (secret) => deps.blockCipher(await deriveBlockKey(secret, KEY_PURPOSE)));
  return {
    async seal(type, rowIds) {
      const aes = await keyed();
      const blocks = new Uint8Array(rowIds.length * BLOCK_BYTES);
      const view = new DataView(blocks.buffer);
      rowIds.forEach((rowId, i) => writePlainBlock(view, i * BLOCK_BYTES, type, rowId));
      const sealed = await aes.encrypt(blocks);
      return rowIds.map((_, i) => encodeBase64Url(sealed.subarray(i * BLOCK_BYTES, (i + 1) * BLOCK_BYTES)));
    },
    async open(type, value) {
      if (!ID_SHAPE.test(value)) return undefined;
      const bytes = decodeBase64Url(value)!;
      // 22 characters carry 132 bits: only the encoding with the last 4 zero is accepted, so each id has one spelling.
      if (encodeBase64Url(bytes) !== value) return undefined;
      return rowIdInBlock(type, await (await keyed()).decrypt(bytes));
    },
  };
}

/** The ids one request has sealed, so that resolvers, which run per field, read them without any cryptography. */
export interface RequestIds {
  /** Seals the ids of these rows for this request; call it where the rows are read, before they are resolved. */
  prepare(type: IdType, rowIds: readonly number[]): Promise<void>;
  /**
   * The global id of a prepared row.
   * @throws Error when the row was not prepared: a resolver reached a row by a path that skipped `prepare`
   */
  of(type: IdType, rowId: number): string;
  /** The global id of one row, prepared on the way: for a row read once per request, such as the viewer. */
  seal(type: IdType, rowId: number): Promise<string>;
  /** The row id inside `value`, or undefined for anything that is not a global id of `type` from this deployment. */
  open(type: IdType, value: string): Promise<number | undefined>;
}

/** A request's id memo over the app's codec. */
export function requestIds(codec: IdCodec): RequestIds {
  const sealed: Record<IdType, Map<number, string>> = { Field: new Map(), Organization: new Map(), User: new Map() };
  const prepare = async (type: IdType, rowIds: readonly number[]): Promise<void> => {
    const known = sealed[type];
    const missing = rowIds.filter((rowId) => !known.has(rowId));
    if (missing.length === 0) return;
    const ids = await codec.seal(type, missing);
    missing.forEach((rowId, i) => known.set(rowId, ids[i]!));
  };
  const of = (type: IdType, rowId: number): string => {
    const id = sealed[type].get(rowId);
    if (id === undefined) throw new Error(`${type} ${rowId} has no prepared id`);
    return id;
  };
  return {
    prepare,
    of,
    async seal(type, rowId) {
      await prepare(type, [rowId]);
      return of(type, rowId);
    },
    open: (type, value) => codec.open(type, value),
  };
}
