/**
 * Every debugger process this process started (and the private files they write), so that exit,
 * SIGINT and SIGTERM handlers can end them all. Kept apart from process.ts so the CLI can install
 * its handlers without loading execa.
 */

export interface Killable {
  kill(): void;
}

export const live = new Set<Killable>();

/** Kills every debugger this process started. */
export function killAllDebuggers(): void {
  for (const proc of live) {
    try {
      proc.kill();
    } catch {
      // Ending the others matters more than reporting this one.
    }
  }
}
