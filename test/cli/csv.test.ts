// The strict CSV reader: round trips of arbitrary tables (fast-check), and the malformed inputs it refuses.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { CsvError, parseCsvRecords, readCsvTable } from "../../src/cli/csv.ts";

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
