/**
 * zod as dumpdbg builds its schemas with it: without zod's compiled fast path. A run parses each
 * schema a few times at most, and generating and compiling a schema's fast path (`new Function`)
 * costs more than it saves on so few parses: the report's schema takes ~4 ms to parse once with
 * it, ~1 ms without. zod reads the setting when a schema is built, so every module of ours that
 * builds one takes `z` from here, which makes the setting first.
 */
import { z } from "zod";

z.config({ jitless: true });

export { z };
