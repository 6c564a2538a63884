import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { isInputObjectType, isInterfaceType, isObjectType, printSchema } from "graphql";
import { buildFieldSchema } from "../../src/graphql/schema.ts";

test("the committed schema.graphql matches the schema the code builds", async () => {
  const committed = await readFile(new URL("../../src/graphql/schema.graphql", import.meta.url), "utf8");
  // Regenerate after a schema change with the command in docs/graphql.md.
  assert.equal(committed, printSchema(buildFieldSchema()) + "\n");
});

test("every type, field and argument of the schema has a description", () => {
  const schema = buildFieldSchema();
  const missing: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith("__")) continue;
    if (!type.description) missing.push(type.name);
    if (!(isObjectType(type) || isInterfaceType(type) || isInputObjectType(type))) continue;
    for (const field of Object.values(type.getFields())) {
      if (!field.description) missing.push(`${type.name}.${field.name}`);
      for (const arg of "args" in field ? field.args : []) {
        if (!arg.description) missing.push(`${type.name}.${field.name}(${arg.name})`);
      }
    }
  }
  assert.deepEqual(missing.filter((name) => !["String", "Int", "Float", "Boolean", "ID"].includes(name)), []);
});

test("field names are snake_case as the spec's total_count", () => {
  const schema = buildFieldSchema();
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith("__") || !isObjectType(type)) continue;
    for (const name of Object.keys(type.getFields())) assert.match(name, /^[a-z][a-z0-9_]*$/, `${type.name}.${name}`);
  }
});
