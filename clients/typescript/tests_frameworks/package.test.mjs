// The adapters keep the package free of runtime dependencies: each framework is an optional
// peer, pinned only as a dev dependency for these tests, and no adapter imports one.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";

import { packageDir } from "./support/setup.mjs";

const adapters = { ai: "ai", "openai-agents": "@openai/agents", langgraph: "@langchain/langgraph" };

test("the package has no runtime dependency, and each framework is an optional peer pinned for the tests", async () => {
  const pkg = JSON.parse(await readFile(join(packageDir, "package.json"), "utf8"));
  assert.equal(pkg.dependencies, undefined);
  for (const [subpath, framework] of Object.entries(adapters)) {
    assert.deepEqual(pkg.exports[`./${subpath}`], { types: `./dist/${subpath}.d.ts`, default: `./dist/${subpath}.js` });
    assert.ok(pkg.peerDependencies[framework], `${framework} is a peer dependency`);
    assert.equal(pkg.peerDependenciesMeta[framework]?.optional, true, `${framework} is optional`);
    const tested = pkg.devDependencies[framework];
    assert.match(tested, /^\d+\.\d+\.\d+$/, `${framework} is pinned exactly for the tests`);
    // The peer range starts at the version the tests ran: nothing older is promised to work.
    assert.match(pkg.peerDependencies[framework], new RegExp(`^(>=)?${tested.replaceAll(".", "\\.")}( <\\d+)?$`), `${framework}'s peer range starts at ${tested}`);
  }
});

test("no adapter imports anything but the package's own modules", async () => {
  for (const file of [...Object.keys(adapters), "approval"]) {
    const js = await readFile(join(packageDir, "dist", `${file}.js`), "utf8");
    const imports = [...js.matchAll(/^(?:import|export)\b[^;\n]*?from\s+"([^"]+)";$/gm)].map((m) => m[1]);
    for (const spec of imports) assert.match(spec, /^\.\//, `dist/${file}.js imports ${spec}`);
    assert.doesNotMatch(js, /\bimport\(/, `dist/${file}.js imports dynamically`);
  }
});
