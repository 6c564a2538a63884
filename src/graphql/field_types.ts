// Object types for farm data: Field, Organization, GeoPoint and the FieldConnection with its edges and page info.
import {
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLNullableType,
} from "graphql";
import type { Field, Organization } from "../store/contract.ts";
import type { GraphqlContext } from "./context.ts";
import { DateTimeScalar, JsonScalar } from "./json_scalar.ts";
import { cursorOf, fieldConnection, resolveFieldOrganization, type FieldConnection, type FieldsArgs } from "./resolvers.ts";
import { connectionSelectsBoundary } from "./selection.ts";

const nonNull = <T extends GraphQLNullableType>(type: T) => new GraphQLNonNull(type);

/** Paging arguments of every `fields` connection. */
export const pageArgs: GraphQLFieldConfigArgumentMap = {
  first: {
    type: GraphQLInt,
    defaultValue: 50,
    description: "How many fields to return, from 0 up to the server's page size cap (100); larger values are capped.",
  },
  after: {
    type: GraphQLString,
    description: "Return fields after this cursor (an `end_cursor` or edge `cursor` from a previous page).",
  },
};

/** Filter arguments of every `fields` connection. */
export const filterArgs: GraphQLFieldConfigArgumentMap = {
  crop: { type: GraphQLString, description: "Only fields with exactly this crop, e.g. \"wheat\"." },
  season: { type: GraphQLString, description: "Only fields of exactly this season, e.g. \"2026\"." },
};

export const GeoPointType = new GraphQLObjectType<{ lon: number; lat: number }>({
  name: "GeoPoint",
  description: "A position in WGS 84 longitude and latitude degrees (the GeoJSON coordinate reference system).",
  fields: {
    longitude: { type: nonNull(GraphQLFloat), description: "Degrees east of Greenwich, -180 to 180.", resolve: (p) => p.lon },
    latitude: { type: nonNull(GraphQLFloat), description: "Degrees north of the equator, -90 to 90.", resolve: (p) => p.lat },
  },
});

export const OrganizationType: GraphQLObjectType<Organization, GraphqlContext> = new GraphQLObjectType({
  name: "Organization",
  description: "A farm business or cooperative that owns fields; users see only organizations they belong to.",
  fields: () => ({
    id: { type: nonNull(GraphQLID), description: "Opaque global id of the organization.", resolve: (o, _args, ctx) => ctx.ids.of("Organization", o.id) },
    slug: { type: nonNull(GraphQLString), description: "Short unique handle, e.g. \"acme\".", resolve: (o) => o.slug },
    name: { type: nonNull(GraphQLString), description: "Display name.", resolve: (o) => o.name },
    fields: {
      type: nonNull(FieldConnectionType),
      description: "The organization's fields in a stable order, one page at a time.",
      args: { ...pageArgs, ...filterArgs },
      resolve: (o, args: FieldsArgs, ctx, info) => fieldConnection(ctx, [o.id], args, connectionSelectsBoundary(info)),
    },
  }),
});

export const FieldType: GraphQLObjectType<Field, GraphqlContext> = new GraphQLObjectType({
  name: "Field",
  description: "An agricultural field: a bounded area of land farmed as one unit in a season.",
  fields: () => ({
    id: { type: nonNull(GraphQLID), description: "Opaque global id of the field; never reused, also after a re-import.", resolve: (f, _args, ctx) => ctx.ids.of("Field", f.id) },
    name: { type: nonNull(GraphQLString), description: "Name the farm uses for the field.", resolve: (f) => f.name },
    area_ha: { type: nonNull(GraphQLFloat), description: "Area in hectares.", resolve: (f) => f.areaHa },
    crop: { type: GraphQLString, description: "Crop grown this season, or null when not recorded.", resolve: (f) => f.crop },
    season: { type: GraphQLString, description: "Season the crop belongs to, e.g. \"2026\", or null.", resolve: (f) => f.season },
    organization: {
      type: nonNull(OrganizationType),
      description: "The organization that owns the field.",
      resolve: (f, _args, ctx) => resolveFieldOrganization(ctx, f),
    },
    boundary: {
      type: nonNull(JsonScalar),
      description: "The field boundary as a GeoJSON Polygon or MultiPolygon geometry object (RFC 7946), rings in RFC 7946 order.",
      // Stored as JSON.stringify output (src/geo/geojson.ts): spliced into the response as it is. Only numbers and
      // ASCII keys, so its length is its size in bytes, charged against the response's cap (context.ts).
      resolve: (f, _args, ctx): unknown => ctx.rawJson.wrap(ctx.boundaryOf(f)),
    },
    centroid: { type: nonNull(GeoPointType), description: "Area-weighted centre of the boundary; it can lie outside an L- or U-shaped, holed or multi-part field.", resolve: (f) => f.centroid },
    created_at: { type: nonNull(DateTimeScalar), description: "When the field was recorded.", resolve: (f) => new Date(f.createdAt * 1000) },
    updated_at: { type: nonNull(DateTimeScalar), description: "When the field last changed; today always created_at (a re-import with --replace creates new fields).", resolve: (f) => new Date(f.updatedAt * 1000) },
  }),
});

export const FieldEdgeType = new GraphQLObjectType<Field, GraphqlContext>({
  name: "FieldEdge",
  description: "One field in a connection, with the cursor that points at it.",
  fields: {
    cursor: { type: nonNull(GraphQLString), description: "Opaque cursor; pass it as `after` to continue after this field.", resolve: (f, _args, ctx) => cursorOf(ctx, f) },
    node: { type: nonNull(FieldType), description: "The field.", resolve: (f) => f },
  },
});

export const PageInfoType = new GraphQLObjectType<{ hasNextPage: boolean; endCursor: string | null }, GraphqlContext>({
  name: "PageInfo",
  description: "Where a page ends and whether another follows (forward pagination).",
  fields: {
    has_next_page: { type: nonNull(GraphQLBoolean), description: "True when more fields follow this page.", resolve: (p) => p.hasNextPage },
    end_cursor: { type: GraphQLString, description: "Cursor of the last field on this page; null for an empty page.", resolve: (p) => p.endCursor },
  },
});

export const FieldConnectionType: GraphQLObjectType<FieldConnection, GraphqlContext> = new GraphQLObjectType({
  name: "FieldConnection",
  description: "A page of fields plus the total number of fields matching the query.",
  fields: () => ({
    total_count: {
      type: nonNull(GraphQLInt),
      description: "How many fields match the filters across all pages (one COUNT, no page is fetched for it).",
      resolve: (c) => c.totalCount(),
    },
    nodes: {
      type: nonNull(new GraphQLList(nonNull(FieldType))),
      description: "The fields on this page.",
      resolve: async (c) => (await c.page()).nodes,
    },
    edges: {
      type: nonNull(new GraphQLList(nonNull(FieldEdgeType))),
      description: "The fields on this page with their cursors.",
      resolve: async (c) => (await c.page()).nodes,
    },
    page_info: {
      type: nonNull(PageInfoType),
      description: "Pagination state of this page.",
      resolve: async (c, _args, ctx) => {
        const { nodes, hasNextPage } = await c.page();
        const last = nodes.at(-1);
        return { hasNextPage, endCursor: last ? cursorOf(ctx, last) : null };
      },
    },
  }),
});
