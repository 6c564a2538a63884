// The strict CSV reader: round trips of arbitrary tables (fast-check), any chunking of a stream, bounded reading, and the
// malformed inputs it refuses.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { CsvError, MAX_RECORD_CHARS, parseCsvRecords, readCsvTable, streamCsvRecords, streamCsvTable } from "../../src/cli/csv.ts";

/** RFC 4180 writing: a field is quoted when it holds a comma, quote, CR or LF, or when a lone empty field would vanish. */
function writeCsv(rows: string[][], options: { eol: string; quoteAll: boolean; finalEol: boolean }): string {
  const field = (value: string, alone: boolean) =>
    options.quoteAll || /[",\r\n]/.test(value) || (alone && value === "") ? `"${value.replaceAll('"', '""')}"` : value;
  const text = rows.map((row) => row.map((value) => field(value, row.length === 1)).join(",")).join(options.eol);
  return options.finalEol && rows.length > 0 ? text + options.eol : text;
}

const cell = fc.string({ unit: fc.constantFrom("a", "b", " ", ",", '"', "\n", "\r\n", "é", "\t", "x") });
const table = fc.integer({ min: 1, max: 5 }).chain((width) =>
  fc.array(fc.array(cell, { minLength: width, maxLength: width }), { maxLength: 8 })
);
const style = fc.record({ eol: fc.constantFrom("\n", "\r\n"), quoteAll: fc.boolean(), finalEol: fc.boolean() });

test("parseCsvRecords reads back any table RFC 4180 writes, with LF or CRLF, quoted or not", () => {
  fc.assert(fc.property(table, style, (rows, options) => {
    const parsed = parseCsvRecords(writeCsv(rows, options)).map((record) => record.values);
    assert.deepEqual(parsed, rows);
  }), { numRuns: 300 });
});

test("parseCsvRecords reports the line each record starts on, counting newlines inside quoted fields", () => {
  fc.assert(fc.property(table, (rows) => {
    const records = parseCsvRecords(writeCsv(rows, { eol: "\n", quoteAll: false, finalEol: true }));
    let line = 1;
    records.forEach((record, index) => {
      assert.equal(record.line, line);
      line += 1 + rows[index]!.join("").split("\n").length - 1;
    });
  }), { numRuns: 200 });
});

test("parseCsvRecords never splits a quoted field on its commas or newlines", () => {
  fc.assert(fc.property(fc.array(cell, { minLength: 2, maxLength: 6 }), (values) => {
    const parsed = parseCsvRecords(writeCsv([values], { eol: "\n", quoteAll: true, finalEol: false }));
    assert.equal(parsed.length, 1);
    assert.deepEqual(parsed[0]!.values, values);
  }));
});

for (const row of [
  { name: "a quote inside an unquoted field", text: 'a,b\n1,x"y\n', line: 2 },
  { name: "text after a closing quote", text: 'a,b\n1,"x"y\n', line: 2 },
  { name: "an unclosed quote", text: 'a,b\n1,"x\n2,3\n', line: 2 },
  { name: "a bare carriage return", text: "a,b\r1,2\n", line: 1 },
]) {
  test(`parseCsvRecords refuses ${row.name}, naming the line`, () => {
    assert.throws(() => parseCsvRecords(row.text), (error: unknown) => error instanceof CsvError && error.line === row.line);
  });
}

test("readCsvTable keys fields by lowercased header name, in any column order, and skips a byte order mark", () => {
  const records = readCsvTable('\uFEFFSecret,UID,extra\n"s,1",app-1,z\n', ["uid", "secret"]);
  assert.deepEqual(records.map((r) => ({ ...r.fields })), [{ secret: "s,1", uid: "app-1", extra: "z" }]);
  assert.equal(records[0]!.line, 2);
});

for (const row of [
  { name: "an empty file", text: "", error: /empty/ },
  { name: "a missing required column", text: "uid,name\n", error: /lacks the column secret/ },
  { name: "a repeated column", text: "uid,secret,UID\n", error: /twice/ },
  { name: "a record with too few fields", text: "uid,secret\nx\n", error: /line 2: 1 fields where the header has 2/ },
]) {
  test(`readCsvTable refuses ${row.name}`, () => {
    assert.throws(() => readCsvTable(row.text, ["uid", "secret"]), row.error);
  });
}

/** `text` cut at `cuts` (positions, any order), as a stream delivers it. */
async function* pieces(text: string, cuts: number[]): AsyncGenerator<string> {
  let at = 0;
  for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
    if (cut <= at || cut >= text.length) continue;
    yield text.slice(at, cut);
    at = cut;
  }
  yield text.slice(at);
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

test("streamCsvRecords reads the same records, lines included, however the text is cut into chunks", async () => {
  // Cuts fall anywhere: inside a CRLF, between a doubled quote's halves, after a closing quote, in a byte order mark's wake.
  await fc.assert(fc.asyncProperty(table, style, fc.array(fc.nat(), { maxLength: 12 }), async (rows, options, cuts) => {
    const text = "\uFEFF" + writeCsv(rows, options);
    const whole = parseCsvRecords(text);
    assert.deepEqual(await collect(streamCsvRecords(pieces(text, cuts.map((c) => c % (text.length + 1))))), whole);
  }), { numRuns: 300 });
});

for (const row of [
  { name: "an unclosed quote", text: 'a,b\n1,"x\n2,3\n', line: 2 },
  { name: "a bare carriage return", text: "a,b\r1,2\n", line: 1 },
  { name: "text after a closing quote before a CR", text: 'a,b\n1,"x"\ry\n', line: 2 },
]) {
  test(`streamCsvRecords refuses ${row.name} in one-character chunks, naming the line`, async () => {
    await assert.rejects(collect(streamCsvRecords(pieces(row.text, [...row.text].map((_, i) => i)))),
      (error: unknown) => error instanceof CsvError && error.line === row.line);
  });
}

/** A source of `count` 64 KiB chunks of `unit` repeated, counting how many were pulled. */
function countingSource(unit: string, count: number) {
  const chunk = unit.repeat(Math.ceil(65_536 / unit.length));
  const source = {
    pulled: 0,
    async *[Symbol.asyncIterator]() {
      for (let i = 0; i < count; i++) {
        source.pulled++;
        yield i === 0 ? "id,token\n" + chunk : chunk;
      }
    },
  };
  return source;
}

test("streamCsvTable pulls chunks only as records are consumed, so a large file is never held whole", async () => {
  const source = countingSource("7,abcdefghijklmnopqrstuvwxyz0123456789\n", 1_000);
  const records = streamCsvTable(source, ["id", "token"]);
  const first = await records.next();
  assert.deepEqual({ ...first.value?.fields }, { id: "7", token: "abcdefghijklmnopqrstuvwxyz0123456789" });
  assert.equal(source.pulled, 1, "one chunk for the first record");
  let n = 1;
  for await (const _ of records) if (++n === 5_000) break;
  assert.ok(source.pulled < 10, `${source.pulled} chunks for 5 000 records of 38 characters`);
});

test("streamCsvRecords refuses a record longer than MAX_RECORD_CHARS without reading on to its end", async () => {
  // A 30 MB field: the reader stops once the record passes the bound, after about 1 MiB of it.
  const source = countingSource("x", 480);
  await assert.rejects(collect(streamCsvRecords(source)), (error: unknown) => error instanceof CsvError && /longer than/.test(error.message));
  assert.ok(source.pulled <= Math.ceil(MAX_RECORD_CHARS / 65_536) + 1, `${source.pulled} chunks pulled`);
});
