/**
 * Java programs that end in HotSpot's fatal error handler, for the tests: a JNI library's write
 * through NULL, a heap exhausted under -XX:+CrashOnOutOfMemoryError, an Unsafe read near NULL from
 * compiled code, and tests/helpers/jvm.ts's HeaderReader. Each is built in a folder and run on the
 * machine's JDK with a small VM; what the VM wrote is its hs_err log and, when asked for, a core
 * taken by gdb at the VM's abort.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";

import { HEADER_READER, coreAtAbort, javaLauncher } from "./jvm.js";

/** Loads `name=value` records into a native table through JNI, two Java calls above the native method. */
export const JNI_RECORDS_JAVA = `/** Loads configuration records into the native record table. */
public class RecordLoader {
    static {
        System.loadLibrary("records");
    }

    static native int parse(String line);

    static int apply(String line) {
        return parse(line);
    }

    static int load(String[] lines) {
        int stored = 0;
        for (String line : lines) stored += apply(line);
        return stored;
    }

    public static void main(String[] args) {
        System.out.println(load(new String[] { "id=7", "name=disk", "owner=root" }));
    }
}
`;

/** The record table: a record's field is looked up by name, and one the table does not have is NULL. */
export const JNI_RECORDS_C = `#include <jni.h>
#include <string.h>

struct field {
    const char *name;
    long value;
    int set;
};

static struct field fields[] = { { "id", 0, 0 }, { "name", 0, 0 }, { "size", 0, 0 } };

static struct field *find_field(const char *name, size_t length) {
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (strlen(fields[i].name) == length && memcmp(fields[i].name, name, length) == 0) return &fields[i];
    }
    return NULL;
}

static long value_of(const char *text) {
    long value = 0;
    for (; *text != '\\0'; text++) value = value * 31 + *text;
    return value;
}

int store_record(const char *line) {
    const char *equals = strchr(line, '=');
    if (equals == NULL) return 0;
    struct field *field = find_field(line, (size_t)(equals - line));
    field->value = value_of(equals + 1); // CULPRIT
    field->set = 1;
    return 1;
}

JNIEXPORT jint JNICALL Java_RecordLoader_parse(JNIEnv *env, jclass loader, jstring line) {
    (void)loader;
    const char *chars = (*env)->GetStringUTFChars(env, line, NULL);
    if (chars == NULL) return 0;
    int stored = store_record(chars);
    (*env)->ReleaseStringUTFChars(env, line, chars);
    return stored;
}
`;

/** A cache that never evicts: chunks appended to a list, two calls below main, until the heap is gone. */
export const OOM_JAVA = `import java.util.ArrayList;
import java.util.List;

/** Keeps every chunk it reads. */
public class ChunkCache {
    static final List<byte[]> chunks = new ArrayList<>();

    static void fill(int size) {
        while (true) chunks.add(new byte[size]); // CULPRIT
    }

    static void warm() {
        fill(1 << 20);
    }

    public static void main(String[] args) {
        warm();
    }
}
`;

/**
 * HeaderReader's read made hot before it is given 0: the loop runs readHeader on a real buffer until
 * the JIT has compiled it (and Unsafe.getLong into it), so the fault is in compiled Java code.
 */
export const HOT_HEADER_READER_JAVA = `import java.lang.reflect.Field;
import sun.misc.Unsafe;

/** Reads records' headers through Unsafe, many times over, then from an address a caller computed. */
public class HotHeaderReader {
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
        Unsafe unsafe = unsafe();
        long buffer = unsafe.allocateMemory(64);
        unsafe.setMemory(buffer, 64, (byte) 1);
        long sum = 0;
        for (int i = 0; i < 2_000_000; i++) sum += handle(unsafe, buffer);
        System.out.println(sum + handle(unsafe, 0L));
    }
}
`;

/** What a crashed JVM left: its hs_err log, the core gdb took at its abort (when asked for), the launcher it ran. */
export interface JvmCrash {
  hsErr: string;
  core: string | null;
  java: string;
}

/** The JDK's headers, from the launcher's JDK (`/usr/lib/jvm/…/bin/java` → `/usr/lib/jvm/…/include`). */
function jniIncludes(java: string): string[] {
  const include = path.join(path.dirname(java), "..", "include");
  return [`-I${include}`, `-I${path.join(include, "linux")}`];
}

/** The line of `source` marked `// CULPRIT`, counted from 1. */
export function culpritLineOf(source: string): number {
  return source.split("\n").findIndex((line) => line.includes("// CULPRIT")) + 1;
}

/** The JNI library built with debug info in `dir` (`librecords.so`); its path, its C source's path and the faulting line. */
export function buildJniRecords(dir: string): { library: string; source: string; culpritLine: number } {
  const source = path.join(dir, "records.c");
  const library = path.join(dir, "librecords.so");
  writeFileSync(source, JNI_RECORDS_C);
  execFileSync("gcc", ["-shared", "-fPIC", "-g", ...jniIncludes(javaLauncher()), "-o", library, source], { stdio: "ignore" });
  return { library, source, culpritLine: culpritLineOf(JNI_RECORDS_C) };
}

/** RecordLoader and its JNI library built in `dir` and run to the library's write through NULL. */
export function jniRecordsCrash(dir: string, options: { core?: boolean } = {}): JvmCrash {
  buildJniRecords(dir);
  return crash(dir, "RecordLoader", JNI_RECORDS_JAVA, [`-Djava.library.path=${dir}`], options);
}

/** ChunkCache run in `dir` to an exhausted heap, which -XX:+CrashOnOutOfMemoryError makes a fatal error. */
export function oomCrash(dir: string, options: { core?: boolean } = {}): JvmCrash {
  return crash(dir, "ChunkCache", OOM_JAVA, ["-XX:+CrashOnOutOfMemoryError"], options);
}

/** HotHeaderReader run in `dir`: its Unsafe read of 0 + 8 faults in JIT-compiled code. */
export function hotHeaderReaderCrash(dir: string, options: { core?: boolean } = {}): JvmCrash {
  return crash(dir, "HotHeaderReader", HOT_HEADER_READER_JAVA, [], options);
}

/** tests/helpers/jvm.ts's HeaderReader run in `dir`: its Unsafe read of 0 + 8 faults in the VM's Unsafe_GetLong. */
export function headerReaderCrash(dir: string, options: { core?: boolean } = {}): JvmCrash {
  return crash(dir, "HeaderReader", HEADER_READER, [], options);
}

const SMALL_VM = ["-Xmx32m", "-Xss512k", "-XX:ReservedCodeCacheSize=16m", "-XX:CompressedClassSpaceSize=16m", "-XX:+UseSerialGC", "-XX:-UsePerfData"];

/**
 * `main` compiled in `dir` and run to the VM's fatal error. Without a core the VM is told to write
 * none (it exits instead of aborting); with one, gdb passes the VM its signals and takes the core
 * at the abort, as tests/helpers/jvm.ts's coreAtAbort does.
 */
function crash(dir: string, main: string, source: string, flags: string[], options: { core?: boolean }): JvmCrash {
  writeFileSync(path.join(dir, `${main}.java`), source);
  execFileSync("javac", ["-nowarn", "-d", dir, path.join(dir, `${main}.java`)], { stdio: "ignore" });
  const java = javaLauncher();
  const argv = [java, ...SMALL_VM, `-XX:ErrorFile=${path.join(dir, "hs_err_pid%p.log")}`, ...flags, "-cp", dir, main];
  let core: string | null = null;
  if (options.core) core = coreAtAbort(path.join(dir, `${main}.core`), argv);
  else spawnSync(argv[0]!, ["-XX:-CreateCoredumpOnCrash", ...argv.slice(1)], { cwd: dir, stdio: "ignore", timeout: 180_000 });
  const logs = readdirSync(dir).filter((name) => /^hs_err_pid\d+\.log$/.test(name));
  if (logs.length !== 1) throw new Error(`${main} left ${logs.length} hs_err logs in ${dir}`);
  return { hsErr: path.join(dir, logs[0]!), core, java };
}
