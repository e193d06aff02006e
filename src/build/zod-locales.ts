/**
 * What zod's `locales` namespaces (`z.locales`, `z.core.locales`, zod/mini's) get in the bundles
 * (build.mjs): English alone, the locale zod sets as its default and the one dumpdbg's messages are
 * in, rather than all 64 (~300 KB of JavaScript, a quarter of the lean bundle, evaluated with zod in
 * every run). Nothing dumpdbg bundles picks another locale.
 */
export { default as en } from "zod/v4/locales/en.js";
