#!/usr/bin/env node
// Writes the JSON Schemas the repository keeps for editors (schemas/), from @flagstaff/core's TypeBox
// schemas (build first: npm run build). A test checks that the files are what this writes, so a change
// to a schema that is not written out fails the suite. Run: node scripts/write-schemas.mjs
import { mkdirSync, writeFileSync } from "node:fs";
import { PROJECT_DOCUMENT_JSON_SCHEMA } from "../packages/core/dist/src/schemas/index.js";

const dir = new URL("../schemas/", import.meta.url);
mkdirSync(dir, { recursive: true });
writeFileSync(
  new URL("project-document.schema.json", dir),
  `${JSON.stringify(PROJECT_DOCUMENT_JSON_SCHEMA, null, 2)}\n`,
);
console.log("wrote schemas/project-document.schema.json");
