/**
 * `npm run openapi`: src/generated/openapi.ts from docs/openapi.json (openapi-typescript), only when that
 * document changed since the last generation. The types follow the document, never the clock: its SHA-256 is
 * kept in dist/, so a checkout, a rebuild or an example run that finds the same document skips the generator
 * (about 4 s) and leaves the file untouched, which `tsc --build` then finds up to date.
 */

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "..", "docs", "openapi.json");
const target = join(root, "src", "generated", "openapi.ts");
const stamp = join(root, "dist", "openapi.json.sha256"); // beside the build, out of the packed files

const digest = createHash("sha256").update(readFileSync(source)).digest("hex");
const current = existsSync(target) && existsSync(stamp) && readFileSync(stamp, "utf8").trim() === digest;
if (!current) {
  const generator = join(root, "node_modules", "openapi-typescript", "bin", "cli.js");
  execFileSync(process.execPath, [generator, source, "-o", target], { stdio: ["ignore", "ignore", "inherit"] });
  mkdirSync(dirname(stamp), { recursive: true });
  writeFileSync(stamp, `${digest}\n`);
}
