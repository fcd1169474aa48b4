// The package as it is installed: the committed dist/ is what the sources compile to, a
// fresh project installs the folder with nothing from the network, and a TypeScript user's
// code type-checks against the shipped declarations.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";

import { packageDir } from "./support/server.mjs";

const run = promisify(execFile);
const tsc = join(packageDir, "node_modules", "typescript", "bin", "tsc");

test("the committed dist/ is what the sources compile to", async () => {
  const out = await mkdtemp(join(tmpdir(), "sayso-dist-"));
  try {
    await run(process.execPath, [tsc, "-p", join(packageDir, "tsconfig.json"), "--outDir", out]);
    const built = (await readdir(out)).sort();
    const shipped = (await readdir(join(packageDir, "dist"))).sort();
    assert.deepEqual(shipped, built, "dist/ has the same files as a build");
    for (const file of built) {
      const [a, b] = await Promise.all([readFile(join(out, file), "utf8"), readFile(join(packageDir, "dist", file), "utf8")]);
      assert.equal(b, a, `dist/${file} is stale: run npm run build in clients/typescript`);
    }
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test("a fresh project installs the folder offline and imports it, types included", async () => {
  const app = await mkdtemp(join(tmpdir(), "sayso-app-"));
  try {
    await writeFile(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    await run(npm, ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts=false", packageDir], { cwd: app });
    const installed = JSON.parse(await readFile(join(app, "package.json"), "utf8"));
    assert.ok(installed.dependencies?.sayso, "recorded as a dependency");
    const { stdout } = await run(
      process.execPath,
      ["--input-type=module", "-e", 'import * as s from "sayso"; console.log(Object.keys(s).sort().join(","))'],
      { cwd: app },
    );
    assert.equal(stdout.trim(), "DEFAULT_TOLERANCE_S,Sayso,SaysoError,SaysoTimeoutError,TERMINAL_STATUSES,WebhookVerificationError,verifyWebhook");

    // A user's TypeScript, strict, against the declarations the package ships.
    await writeFile(
      join(app, "use.ts"),
      `import { Sayso, SaysoError, SaysoTimeoutError, type Decision } from "sayso";
const sayso = new Sayso({ url: "http://127.0.0.1:8080", key: "sk_x" });
export async function deploy(): Promise<boolean> {
  const handle = await sayso.ask({ question: "Deploy?", kind: "choose", options: ["Now", "Later"], ttl_minutes: 30 });
  const id: string = handle.decision_id;
  try {
    const d: Decision = await sayso.wait(id, { timeout: 1000, signal: AbortSignal.timeout(5000) });
    return d.status === "answered" && d.outcome === "Now";
  } catch (e) {
    if (e instanceof SaysoTimeoutError) return e.decision?.status === "pending";
    if (e instanceof SaysoError) console.log(e.status, e.code, e.details.map((x) => x.path));
    throw e;
  }
}
// @ts-expect-error: the statuses are a closed set
export const bad: Decision["status"] = "maybe";
`,
    );
    await writeFile(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022", "DOM"], types: [] },
        files: ["use.ts"],
      }),
    );
    await run(process.execPath, [tsc, "-p", join(app, "tsconfig.json")], { cwd: app }).catch((e) => {
      assert.fail(`the declarations do not type-check a user's code:\n${e.stdout}${e.stderr}`);
    });
  } finally {
    await rm(app, { recursive: true, force: true });
  }
});
