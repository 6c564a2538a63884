// A strict RFC 4180 CSV reader that streams: header row, quoted fields with "" escapes, CRLF or LF record ends;
// nothing guessed. It holds one chunk and the one record being read, never the file.

/** Where and why a file is not CSV this reader accepts. */
export class CsvError extends Error {
  /** 1-based line of the file where the problem is. */
  readonly line: number;
  constructor(message: string, line: number) {
    super(`line ${line}: ${message}`);
    this.name = "CsvError";
    this.line = line;
  }
}

/** One data record: its fields by lowercased header name, and the line it starts on (for refusals). */
export interface CsvRecord {
  line: number;
  fields: Readonly<Record<string, string>>;
}

/** A record as its fields in file order, and the line it starts on. */
export interface CsvRow {
  line: number;
  values: string[];
}

/**
 * The longest record the reader takes, in characters: the bound on what it holds besides one chunk. Doorkeeper rows
 * are far below it (a token row is under 1 KB); a file without line ends, or one huge field, is refused instead.
 */
export const MAX_RECORD_CHARS = 1_048_576;

/** A record read from `text` at `start`, or undefined when the text ends before the record does and more may come. */
type Parsed = { values: string[]; end: number; nextLine: number } | undefined;

/** Where the unquoted field starting at text[start] stops: at a comma, CR, LF or quote, or the end of the text. */
function unquotedEnd(text: string, start: number): number {
  let i = start;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 44 || c === 13 || c === 10 || c === 34) break;
  }
  return i;
}

/** Counts LF characters in text[from, to). */
function newlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf("\n", from); i >= 0 && i < to; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** A quoted field opening at text[start]: its value and where it ends, or undefined when the text stops inside it. */
function quotedField(text: string, start: number, line: number, final: boolean): { value: string; end: number; line: number } | undefined {
  const parts: string[] = [];
  let i = start + 1;
  for (;;) {
    const quote = text.indexOf('"', i);
    if (quote < 0) {
      if (final) throw new CsvError("a quoted field is never closed", line);
      return undefined;
    }
    if (quote + 1 >= text.length && !final) return undefined; // a doubled quote may follow in the next chunk
    parts.push(text.slice(i, quote));
    if (text[quote + 1] !== '"') {
      const end = quote + 1;
      if (end < text.length && text[end] !== "," && text[end] !== "\n" && text[end] !== "\r") {
        throw new CsvError("text after a closing quote (a quote inside a field must be doubled)", line + newlines(text, start, end));
      }
      return { value: parts.join(""), end, line: line + newlines(text, start, end) };
    }
    parts.push('"');
    i = quote + 2;
  }
}

/**
 * The record starting at text[start] on `line`. A quote may only open a field and, doubled, stand for itself inside
 * a quoted one; a record ends at CRLF or LF; with `final`, also where the text ends.
 */
function parseRecord(text: string, start: number, line: number, final: boolean): Parsed {
  const values: string[] = [];
  let i = start;
  for (;;) {
    const quoted = text[i] === '"';
    if (quoted) {
      const field = quotedField(text, i, line, final);
      if (!field) return undefined;
      values.push(field.value);
      i = field.end;
      line = field.line;
    } else {
      const stop = unquotedEnd(text, i);
      if (text[stop] === '"') throw new CsvError("a quote inside an unquoted field", line);
      values.push(text.slice(i, stop));
      i = stop;
    }
    if (text[i] === ",") {
      i++;
      continue;
    }
    if (i >= text.length) return final ? { values, end: i, nextLine: line + 1 } : undefined;
    if (text[i] === "\r") {
      if (i + 1 >= text.length && !final) return undefined;
      if (text[i + 1] !== "\n") {
        throw new CsvError(quoted ? "text after a closing quote (a quote inside a field must be doubled)" : "a carriage return outside quotes", line);
      }
      i++;
    }
    return { values, end: i + 1, nextLine: line + 1 };
  }
}

/** Reads records from text that arrives in pieces: `push` yields the records a piece completes; `final` ends the text. */
function createRecordReader(): { push(piece: string, final: boolean): Generator<CsvRow> } {
  let buffer = "";
  let line = 1;
  let first = true;
  return {
    *push(piece, final) {
      buffer += first && piece.startsWith("\uFEFF") ? piece.slice(1) : piece;
      first = false;
      let i = 0;
      while (i < buffer.length) {
        const parsed = parseRecord(buffer, i, line, final);
        if (!parsed) break;
        yield { line, values: parsed.values };
        line = parsed.nextLine;
        i = parsed.end;
      }
      buffer = buffer.slice(i);
      if (buffer.length > MAX_RECORD_CHARS) {
        throw new CsvError(`a record longer than ${MAX_RECORD_CHARS} characters (is this a CSV export?)`, line);
      }
    },
  };
}

/**
 * Every record of the text `chunks` make up, read as they arrive. A final line end does not start another record; a
 * byte order mark is skipped.
 * @throws CsvError for a quote inside an unquoted field, text after a closing quote, an unclosed quote, a bare CR, or
 *   a record longer than MAX_RECORD_CHARS
 */
export async function* streamCsvRecords(chunks: AsyncIterable<string>): AsyncGenerator<CsvRow> {
  const reader = createRecordReader();
  for await (const chunk of chunks) yield* reader.push(chunk, false);
  yield* reader.push("", true);
}

/** Every record of a whole text (see streamCsvRecords). */
export function parseCsvRecords(text: string): CsvRow[] {
  return [...createRecordReader().push(text, true)];
}

/** Turns rows into records keyed by the header row's names: undefined for the header itself. */
function createTableShaper(required: readonly string[]) {
  let names: string[] | undefined;
  return {
    shape({ line, values }: CsvRow): CsvRecord | undefined {
      if (names === undefined) {
        names = headerNames(values, line, required);
        return undefined;
      }
      if (values.length !== names.length) throw new CsvError(`${values.length} fields where the header has ${names.length}`, line);
      const fields: Record<string, string> = Object.create(null);
      names.forEach((name, index) => (fields[name] = values[index]!));
      return { line, fields: Object.freeze(fields) };
    },
    finish(): void {
      if (names === undefined) throw new CsvError("the file is empty: a header row naming the columns comes first", 1);
    },
  };
}

function headerNames(values: readonly string[], line: number, required: readonly string[]): string[] {
  const names = values.map((name) => name.trim().toLowerCase());
  const repeated = names.find((name, index) => names.indexOf(name) !== index);
  if (repeated !== undefined) throw new CsvError(`the header names the column "${repeated}" twice`, line);
  const missing = required.filter((name) => !names.includes(name));
  if (missing.length > 0) throw new CsvError(`the header lacks the column${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`, line);
  return names;
}

/**
 * The records of a CSV file with a header row, by lowercased column name, read as the chunks arrive; columns it
 * does not know stay in the record and are ignored by whoever reads it.
 * @throws CsvError when the header is missing or repeats a name, a record has another number of fields than the
 *   header, or `required` names a column the header lacks
 */
export async function* streamCsvTable(chunks: AsyncIterable<string>, required: readonly string[]): AsyncGenerator<CsvRecord> {
  const table = createTableShaper(required);
  for await (const row of streamCsvRecords(chunks)) {
    const record = table.shape(row);
    if (record) yield record;
  }
  table.finish();
}

/** The records of a whole CSV text with a header row (see streamCsvTable). */
export function readCsvTable(text: string, required: readonly string[]): CsvRecord[] {
  const table = createTableShaper(required);
  const records = parseCsvRecords(text).flatMap((row) => table.shape(row) ?? []);
  table.finish();
  return records;
}
