// `fields import --org ORG [--replace] FILE.geojson`: validates every feature first, then inserts all in one
// transaction (with --replace, after deleting the organization's fields in the same one).
import { GeoJsonError, parseFieldCollection } from "../../geo/geojson.ts";
import { requireFlag } from "../args.ts";
import { validateOrgSlug } from "../registration.ts";
import { plural } from "../text.ts";
import { UsageError, type Command } from "../types.ts";

/** Imports this long are worth a progress line on a terminal. */
const PROGRESS_THRESHOLD = 1000;

export const importFields: Command = {
  name: "fields import",
  summary: "import a GeoJSON FeatureCollection of Polygon/MultiPolygon fields into an organization",
  positionals: ["FILE.geojson"],
  flags: {
    org: { type: "string", value: "ORG", description: "organization slug (must exist)" },
    replace: { type: "boolean", description: "delete the organization's fields first, in the same transaction" },
  },
  validate(args) {
    validateOrgSlug(requireFlag(args, "org"));
  },
  async run({ args, io, deps, store, now }) {
    const path = args.positionals[0]!;
    const organization = await store.organizations.findBySlug(requireFlag(args, "org"));
    if (!organization) throw new UsageError(`no organization "${args.flags.org}" (users add --org creates one)`);
    const text = await deps.readTextFile(path);
    if (text === undefined) throw new UsageError(`cannot read ${path}: no such file`);
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      throw new UsageError(`${path} is not valid JSON`);
    }
    const progress = io.isTTY
      ? (done: number, total: number) => {
        if (total >= PROGRESS_THRESHOLD) io.stderr(`\rvalidated ${done}/${total} features`);
      }
      : undefined;
    let fields;
    try {
      fields = parseFieldCollection(document, progress);
    } catch (error) {
      if (error instanceof GeoJsonError) throw new UsageError(`${path}: ${error.message}; nothing imported`);
      throw error;
    }
    if (progress && fields.length >= PROGRESS_THRESHOLD) io.stderr(`\rwriting ${fields.length} fields…\n`);
    const replace = args.flags.replace === true;
    const before = replace ? 0 : await store.fields.count({ organizationIds: [organization.id] });
    const { inserted, removed } = await store.fields.insertMany(organization.id, fields, { now, replace });
    const hectares = fields.reduce((sum, f) => sum + f.areaHa, 0);
    // Importing the same file twice doubles every field; say so, since nothing else would.
    if (before > 0) {
      io.stderr(`note: ${organization.slug} already had ${plural(before, "field")}; the new ones were added beside them (--replace replaces them)\n`);
    }
    const replaced = replace ? ` (replacing ${plural(removed, "field")})` : "";
    return {
      json: { imported: inserted, replaced: removed, organization: organization.slug, area_ha: Math.round(hectares * 100) / 100 },
      text: `Imported ${plural(inserted, "field")} (${hectares.toFixed(2)} ha) into ${organization.slug}${replaced}.\n`,
    };
  },
};
