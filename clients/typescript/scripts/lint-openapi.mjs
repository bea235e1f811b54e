// Lints an OpenAPI document (default: the snapshot, openapi.json) with Redocly's
// recommended rules, the library behind openapi-typescript, and checks what generating
// a client needs: every operation has an id, every error answer the Error schema.
// Exits 1 on any error; warnings are printed.
import { createConfig, lint, formatProblems, getTotals } from "@redocly/openapi-core";
import { readFileSync } from "node:fs";

const file = process.argv[2] ?? new URL("../openapi.json", import.meta.url).pathname;
const config = await createConfig({
  extends: ["recommended"],
  rules: { "operation-operationId": "error" },
});
const problems = await lint({ ref: file, config });
const totals = getTotals(problems);
if (problems.length > 0) {
  formatProblems(problems, { format: "stylish", totals, version: "lint-openapi" });
}

const doc = JSON.parse(readFileSync(file, "utf8"));
const errors = [];
for (const [path, item] of Object.entries(doc.paths ?? {})) {
  for (const method of ["get", "put", "post", "delete", "patch"]) {
    const op = item[method];
    if (!op) continue;
    const where = `${method.toUpperCase()} ${path}`;
    if (!op.operationId) errors.push(`${where}: no operationId`);
    for (const [status, res] of Object.entries(op.responses ?? {})) {
      if (status !== "default" && Number(status) < 400) continue;
      const ref = res.content?.["application/json"]?.schema?.$ref;
      if (ref !== "#/components/schemas/Error") errors.push(`${where}: response ${status} lacks the Error schema`);
    }
  }
}
for (const e of errors) console.error(e);
if (totals.errors > 0 || errors.length > 0) {
  console.error(`${file}: ${totals.errors + errors.length} errors`);
  process.exit(1);
}
console.log(`${file}: no errors, ${totals.warnings} warnings`);
