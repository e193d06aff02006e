// Once before each test run, in the main process: the fixtures' build caches kept within the disk
// (tests/helpers/fixture-cache.ts says why and how).
import { FIXTURE_CACHES, pruneFixtureCache } from "./helpers/fixture-cache.js";

export default function setup(): void {
  for (const root of FIXTURE_CACHES) {
    const { removed, freedBytes } = pruneFixtureCache(root);
    if (removed.length > 0) console.log(`fixture cache ${root}: removed ${removed.length} builds (${(freedBytes / 1024 ** 3).toFixed(1)} GB)`);
  }
}
