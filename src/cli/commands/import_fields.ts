// `fields import --org ORG [--replace [--allow-empty]] FILE.geojson`: validates every feature first, then inserts
// all in one transaction (with --replace, after deleting the organization's fields in the same one).
import { auditChange } from "../audit_change.ts";
import { GeoJsonError } from "../../geo/errors.ts";
import { AREA_MISMATCH, isAreaMismatch } from "../../geo/field_area.ts";
import { parseFieldCollection, type ParsedField } from "../../geo/geojson.ts";
import { requireFlag } from "../args.ts";
import { validateOrgSlug } from "../../oauth/registration.ts";
import { plural } from "../text.ts";
import { UsageError, type CliIo, type Command } from "../types.ts";

/** Imports this long are worth a progress line on a terminal. */
const PROGRESS_THRESHOLD = 1000;

/** How many area mismatches the note lists by name; the count covers all. */
const LISTED_MISMATCHES = 5;

export const importFields: Command = {
  name: "fields import",
  summary: "import a GeoJSON FeatureCollection of Polygon/MultiPolygon fields into an organization",
  positionals: ["FILE.geojson"],
  flags: {
    org: { type: "string", value: "ORG", description: "organization slug (must exist)" },
    replace: { type: "boolean", description: "delete the organization's fields first, in the same transaction" },
    "allow-empty": { type: "boolean", description: "with --replace, accept a file without features (deletes every field)" },
  },
  validate(args) {
    validateOrgSlug(requireFlag(args, "org"));
    if (args.flags["allow-empty"] === true && args.flags.replace !== true) throw new UsageError("--allow-empty only applies with --replace");
  },
  async run({ args, io, deps, store, now }) {
    const path = args.positionals[0]!;
    const organization = await store.organizations.findBySlug(requireFlag(args, "org"));
    if (!organization) throw new UsageError(`no organization "${args.flags.org}" (users add --org creates one)`);
    const text = await deps.readTextFile(path);
    if (text === undefined) throw new UsageError(`cannot read ${path}: no such file`);
    const fields = parseFields(parseJson(text, path), path, io);
    if (progressShown(io, fields.length)) io.stderr(`\rwriting ${fields.length} fields…\n`);
    const replace = args.flags.replace === true;
    const before = await store.fields.count({ organizationIds: [organization.id] });
    // A truncated or over-filtered export must not wipe an organization by accident.
    if (replace && fields.length === 0 && args.flags["allow-empty"] !== true) {
      throw new UsageError(`${path} has no features: --replace would leave ${organization.slug} without fields, deleting ` +
        `${plural(before, "field")}; nothing changed (--allow-empty does it)`);
    }
    const { inserted, removed } = await store.fields.insertMany(organization.id, fields, { now, replace });
    // A --replace deletes an organization's fields: the trail says when, and how many.
    await auditChange({ store, deps, io }, "fields_imported", {
      detail: { organization: organization.slug, imported: inserted, replaced: removed },
    });
    const hectares = fields.reduce((sum, f) => sum + f.areaHa, 0);
    // Importing the same file twice doubles every field; say so, since nothing else would.
    if (!replace && before > 0) {
      io.stderr(`note: ${organization.slug} already had ${plural(before, "field")}; the new ones were added beside them (--replace replaces them)\n`);
    }
    const warnings = noteAreaMismatches(fields, io);
    const replaced = replace ? ` (replacing ${plural(removed, "field")})` : "";
    return {
      json: { imported: inserted, replaced: removed, organization: organization.slug, area_ha: Math.round(hectares * 100) / 100, warnings },
      text: `Imported ${plural(inserted, "field")} (${hectares.toFixed(2)} ha) into ${organization.slug}${replaced}.\n`,
    };
  },
};

/** The file's JSON; a byte order mark (written by several Windows GIS tools) is skipped, as RFC 8259 §8.1 allows. */
function parseJson(text: string, path: string): unknown {
  try {
    return JSON.parse(text.startsWith("\uFEFF") ? text.slice(1) : text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    // The parser's message gives the position; its excerpt of the file could hold control characters.
    const reason = error.message.replace(/\p{Cc}/gu, "?");
    throw new UsageError(`${path} is not valid JSON: ${reason}`);
  }
}

function progressShown(io: CliIo, total: number): boolean {
  return io.isTTY && total >= PROGRESS_THRESHOLD;
}

/** Every feature parsed, or a UsageError listing the first bad ones. */
function parseFields(document: unknown, path: string, io: CliIo): ParsedField[] {
  const progress = (done: number, total: number) => {
    if (progressShown(io, total)) io.stderr(`\rvalidated ${done}/${total} features`);
  };
  try {
    return parseFieldCollection(document, progress);
  } catch (error) {
    if (!(error instanceof GeoJsonError)) throw error;
    if (error.total <= 1) throw new UsageError(`${path}: ${error.message}; nothing imported`);
    throw new UsageError(`${path}: ${plural(error.total, "feature")} are invalid; nothing imported:\n  ${error.message.replaceAll("\n", "\n  ")}`);
  }
}

/** A note on stderr for declared areas far from the geometry's (stored as declared all the same); returns the count. */
function noteAreaMismatches(fields: readonly ParsedField[], io: CliIo): number {
  const mismatched = fields.flatMap((field, index) => (isAreaMismatch(field) ? [{ field, index }] : []));
  if (mismatched.length === 0) return 0;
  const lines = mismatched.slice(0, LISTED_MISMATCHES).map(({ field, index }) =>
    `  feature ${index} (${JSON.stringify(field.name)}): ${field.areaHa} ha declared, ${field.computedAreaHa} ha computed\n`);
  if (mismatched.length > LISTED_MISMATCHES) lines.push(`  … and ${mismatched.length - LISTED_MISMATCHES} more\n`);
  const head = `note: area_ha differs from the geometry's area by more than ${AREA_MISMATCH * 100} % for ` +
    `${plural(mismatched.length, "feature")} (stored as declared):\n`;
  io.stderr(head + lines.join(""));
  return mismatched.length;
}
