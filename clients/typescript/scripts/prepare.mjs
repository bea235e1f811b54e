// npm runs this on `npm ci` / `npm install` in this folder, and when another project
// installs the folder (npm install /path/to/clients/typescript): the package is
// published as compiled JavaScript (dist/), so it is built here. A folder installed
// before its own `npm ci` has no compiler: say so, rather than leave an install whose
// import fails with ERR_MODULE_NOT_FOUND.
import { execSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
if (existsSync(join(root, "node_modules", "typescript"))) {
  execSync("npm run build", { cwd: root, stdio: "inherit" });
} else if (!existsSync(join(root, "dist", "index.js"))) {
  console.error(
    `@credohq/credo is not built, and ${root} has no dev dependencies to build it with: ` +
      `run \`npm ci\` there first (it builds the client), then install it again`,
  );
  process.exit(1);
}
