/**
 * What the JVM tests share: whether a JDK is here, the launcher as a core names it, HeaderReader's
 * source, and a core taken where a program stops after its SIGSEGVs were passed to its handlers (the
 * JVM's handler's abort). tests/helpers/jvm-programs.ts runs the programs.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const GDB = ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-ex", "handle SIGSEGV nostop noprint pass"];

/**
 * Runs argv under gdb, its SIGSEGVs passed to its handlers, and writes `core` where it stops next (the
 * handler's abort). A JVM reserves far more than it uses: the core leaves out file-backed mappings (the
 * readers take the JDK's files from disk) and one malloc arena stands for one per thread (the
 * inferior inherits the shell's coredump filter, which gdb honours), and its zeros become holes.
 */
export function coreAtAbort(core: string, argv: string[]): string {
  const gdb = ["gdb", ...GDB, "-ex", "run", "-ex", `generate-core-file ${core}`, "--args", ...argv].map((arg) => `'${arg.replace(/'/g, "'\\''")}'`).join(" ");
  execFileSync("sh", ["-c", `echo 0x33 > /proc/self/coredump_filter; exec ${gdb}`], { stdio: "ignore", timeout: 180_000, env: { ...process.env, MALLOC_ARENA_MAX: "1" } });
  if (!existsSync(core)) throw new Error(`gdb wrote no core of ${argv.join(" ")}`);
  spawnSync("fallocate", ["--dig-holes", core], { stdio: "ignore" });
  return core;
}

export const hasJava = spawnSync("java", ["-version"]).status === 0 && spawnSync("javac", ["-version"]).status === 0;

/** A service's header read through Unsafe from an address its caller computed: 0 + 8. */
export const HEADER_READER = `import java.lang.reflect.Field;
import sun.misc.Unsafe;

/** Reads a record's header through Unsafe from an address a caller computed. */
public class HeaderReader {
    static Unsafe unsafe() throws Exception {
        Field field = Unsafe.class.getDeclaredField("theUnsafe");
        field.setAccessible(true);
        return (Unsafe) field.get(null);
    }

    static long readHeader(Unsafe unsafe, long record) {
        return unsafe.getLong(record + 8); // CULPRIT
    }

    static long handle(Unsafe unsafe, long record) {
        return readHeader(unsafe, record);
    }

    public static void main(String[] args) throws Exception {
        System.out.println(handle(unsafe(), 0L));
    }
}
`;

/** The `java` launcher on PATH, resolved to the JDK's own (`/usr/lib/jvm/…/bin/java`), as the core names it. */
export function javaLauncher(): string {
  return execFileSync("readlink", ["-f", execFileSync("which", ["java"], { encoding: "utf8" }).trim()], { encoding: "utf8" }).trim();
}
