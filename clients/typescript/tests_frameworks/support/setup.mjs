// What the framework tests share: the real server (tests/support/server.mjs), the package
// installed under its own name so `sayso` and `sayso/ai` resolve as in a user's project, and
// a scratch folder for state and count files.

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export { Server, packageDir, pause } from "../../tests/support/server.mjs";

export async function scratch() {
  const dir = await mkdtemp(join(tmpdir(), "sayso-fw-"));
  return { dir, file: (name) => join(dir, name), remove: () => rm(dir, { recursive: true, force: true }) };
}

/** How many times the tool ran: the lines of its count file. */
export async function runs(countFile) {
  if (!existsSync(countFile)) return 0;
  return (await readFile(countFile, "utf8")).split("\n").filter(Boolean).length;
}
