// A Headers implementation over a Map, for the request headers the Node adapter builds from the parser's raw pairs
// (parsed_request.ts) and a light response's headers (light_response.ts): undici's Headers spent ~4 µs per request
// validating and copying fields the app never reads, and ~3 µs per response on constant fields (in-process
// total_count 30–43 → 28–33 µs, bench/inproc.ts count).
// The behaviour follows the Fetch standard's Headers: names fold to lower case, repeated fields join with ", ",
// Set-Cookie values stay separate, iteration is sorted by name, and set/append/delete refuse invalid names and
// values with a TypeError.

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FORBIDDEN_IN_VALUE = /[\0\r\n]/;
// Leading and trailing HTTP whitespace (tab, line feed, carriage return, space) is removed from values.
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

function checkedName(name: string): string {
  if (!TOKEN.test(name)) throw new TypeError(`Invalid header name: "${name}"`);
  return name.toLowerCase();
}

function normalizedValue(value: string): string {
  const trimmed = String(value).replace(EDGE_WHITESPACE, "");
  if (FORBIDDEN_IN_VALUE.test(trimmed)) throw new TypeError("Invalid header value");
  return trimmed;
}

/**
 * Extends Headers only so that `instanceof Headers` holds for code handed our requests and responses; every member
 * is overridden, and the inherited (empty) header list is never used. To copy one into a standard Request, Response
 * or Headers, pass its pairs (`[...headers]`): undici iterates a Headers subclass like any iterable, but Deno reads
 * the internal list of anything that is a Headers, which is empty here.
 */
type PairIterator = ReturnType<Headers["entries"]>;
type TextIterator = ReturnType<Headers["keys"]>;

export class MapHeaders extends Headers {
  // Lower-case name -> combined value; Set-Cookie values are kept apart in `cookies`.
  readonly #values = new Map<string, string>();
  #cookies: string[] = [];

  /**
   * From header pairs an HTTP parser already validated and trimmed ([name, value, name, value, ...]): llhttp
   * refuses bad names and values and strips surrounding whitespace, so they are taken as they are.
   */
  static fromRaw(raw: readonly string[]): MapHeaders {
    const headers = new MapHeaders();
    for (let i = 0; i < raw.length; i += 2) headers.#add(raw[i]!.toLowerCase(), raw[i + 1]!);
    return headers;
  }

  /** From a record written by our own code; validated like `new Headers(record)`. */
  static fromRecord(record: Readonly<Record<string, string>> | undefined): MapHeaders {
    const headers = new MapHeaders();
    if (record) for (const name in record) headers.append(name, record[name]!);
    return headers;
  }

  #add(name: string, value: string): void {
    if (name === "set-cookie") {
      this.#cookies.push(value);
      return;
    }
    const previous = this.#values.get(name);
    this.#values.set(name, previous === undefined ? value : `${previous}, ${value}`);
  }

  override append(name: string, value: string): void {
    this.#add(checkedName(name), normalizedValue(value));
  }

  override set(name: string, value: string): void {
    const key = checkedName(name);
    const normalized = normalizedValue(value);
    if (key === "set-cookie") this.#cookies = [normalized];
    else this.#values.set(key, normalized);
  }

  override delete(name: string): void {
    const key = checkedName(name);
    if (key === "set-cookie") this.#cookies = [];
    else this.#values.delete(key);
  }

  override get(name: string): string | null {
    const key = name.toLowerCase();
    if (key === "set-cookie") return this.#cookies.length === 0 ? null : this.#cookies.join(", ");
    const value = this.#values.get(key);
    if (value !== undefined) return value;
    checkedName(name); // like Headers, an invalid name is an error rather than "absent" (checked on misses only)
    return null;
  }

  override has(name: string): boolean {
    const key = name.toLowerCase();
    if (key === "set-cookie" ? this.#cookies.length > 0 : this.#values.has(key)) return true;
    checkedName(name);
    return false;
  }

  override getSetCookie(): string[] {
    return [...this.#cookies];
  }

  /** Sorted by name, each Set-Cookie value on its own, as Headers iterates. */
  #pairs(): [string, string][] {
    const pairs: [string, string][] = [];
    for (const [name, value] of this.#values) pairs.push([name, value]);
    for (const cookie of this.#cookies) pairs.push(["set-cookie", cookie]);
    // Stable sort: the Set-Cookie values keep their order among themselves.
    return pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  // `parent: this` and the iterator types below spelled through Headers itself: the DOM lib TypeScript ships and
  // Deno's own lib declare them differently (Deno's has no HeadersIterator), and an embedder type-checks with either.
  override forEach(callback: (value: string, key: string, parent: this) => void, thisArg?: unknown): void {
    for (const [name, value] of this.#pairs()) callback.call(thisArg, value, name, this);
  }
  override entries(): PairIterator {
    return this.#pairs()[Symbol.iterator]() as unknown as PairIterator;
  }
  override keys(): TextIterator {
    return this.#pairs().map(([name]) => name)[Symbol.iterator]() as unknown as TextIterator;
  }
  override values(): TextIterator {
    return this.#pairs().map(([, value]) => value)[Symbol.iterator]() as unknown as TextIterator;
  }
  override [Symbol.iterator](): PairIterator {
    return this.entries();
  }
}
