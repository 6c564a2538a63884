// A strict RFC 4180 CSV reader: header row, quoted fields with "" escapes, CRLF or LF record ends; nothing guessed.

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

/**
 * Every record of `text` as arrays of fields, with the line each starts on. A quote may only open a field and, doubled,
 * stand for itself inside a quoted one; a record ends at CRLF or LF (PostgreSQL, MySQL and sqlite3 write LF); a final
 * line end does not start another record. A byte order mark is skipped.
 * @throws CsvError for a quote inside an unquoted field, text after a closing quote, an unclosed quote, or a bare CR
 */
export function parseCsvRecords(text: string): { line: number; values: string[] }[] {
  const records: { line: number; values: string[] }[] = [];
  let i = text.startsWith("\uFEFF") ? 1 : 0;
  let line = 1;
  while (i < text.length) {
    const start = line;
    const values: string[] = [];
    for (;;) {
      let value = "";
      if (text[i] === '"') {
        const opened = line;
        i++;
        for (;;) {
          if (i >= text.length) throw new CsvError("a quoted field is never closed", opened);
          const c = text[i]!;
          if (c === '"') {
            if (text[i + 1] === '"') {
              value += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (c === "\n") line++;
          value += c;
          i++;
        }
        if (i < text.length && text[i] !== "," && text[i] !== "\n" && !text.startsWith("\r\n", i)) {
          throw new CsvError("text after a closing quote (a quote inside a field must be doubled)", line);
        }
      } else {
        while (i < text.length && text[i] !== "," && text[i] !== "\n" && text[i] !== "\r") {
          if (text[i] === '"') throw new CsvError("a quote inside an unquoted field", line);
          value += text[i];
          i++;
        }
        if (text[i] === "\r" && text[i + 1] !== "\n") throw new CsvError("a carriage return outside quotes", line);
      }
      values.push(value);
      if (text[i] === ",") {
        i++;
        continue;
      }
      i += text[i] === "\r" ? 2 : 1;
      line++;
      break;
    }
    records.push({ line: start, values });
  }
  return records;
}

/**
 * The records of a CSV file with a header row, by lowercased column name; columns it does not know stay in the record
 * and are ignored by whoever reads it.
 * @throws CsvError when the header is missing or repeats a name, a record has another number of fields than the
 *   header, or `required` names a column the header lacks
 */
export function readCsvTable(text: string, required: readonly string[]): CsvRecord[] {
  const [header, ...rows] = parseCsvRecords(text);
  if (!header) throw new CsvError("the file is empty: a header row naming the columns comes first", 1);
  const names = header.values.map((name) => name.trim().toLowerCase());
  const repeated = names.find((name, index) => names.indexOf(name) !== index);
  if (repeated !== undefined) throw new CsvError(`the header names the column "${repeated}" twice`, header.line);
  const missing = required.filter((name) => !names.includes(name));
  if (missing.length > 0) throw new CsvError(`the header lacks the column${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`, header.line);
  return rows.map(({ line, values }) => {
    if (values.length !== names.length) {
      throw new CsvError(`${values.length} fields where the header has ${names.length}`, line);
    }
    const fields: Record<string, string> = Object.create(null);
    names.forEach((name, index) => (fields[name] = values[index]!));
    return { line, fields: Object.freeze(fields) };
  });
}
