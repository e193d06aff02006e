/**
 * CPython programs that die in native code, for the tests: a C extension module built here against
 * each interpreter's own headers (a ledger importer's record layouts, with a NULL read, a failed
 * `assert` and a `Py_FatalError` in it), `os.abort()`, and a memoised recursion that runs the C stack
 * out. Each runs under gdb, which writes the core where the process stops; with `-X faulthandler`,
 * gdb lets the first fault through to the handler and dumps the signal it raises again. The lines
 * the tests look for are marked `# CULPRIT …` in Python and `// CULPRIT …` in C.
 */
import { execFile } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

import { markedLines, type PythonCore } from "./cpython.js";

const run = promisify(execFile);

/** A core of a Python program that imported the records extension, with the extension's source and its marked lines. */
export interface ExtensionCore extends PythonCore {
  /** The extension's C source, as its debug information names it. */
  extension: string;
  /** `{ "CULPRIT width": 41 }`: each `// CULPRIT …` comment of the C source, with its line. */
  extensionLines: Record<string, number>;
}

/** The records extension: fixed-width layouts by record kind, with three bugs a caller can reach. */
export const RECORDS_EXTENSION = `/* records: the fixed-width layouts of a ledger export's records, looked up by their kind. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <assert.h>
#include <string.h>

#define MAX_LAYOUTS 4

struct field {
    const char *name;
    long width;
};

struct layout {
    char kind[16];
    const struct field *fields;
    int count;
};

static const struct field invoice_fields[] = {{"number", 10}, {"customer", 32}, {"amount", 12}};
static const struct field payment_fields[] = {{"invoice", 10}, {"amount", 12}};
static const struct field custom_fields[] = {{"payload", 64}};

static struct layout layouts[MAX_LAYOUTS] = {
    {"invoice", invoice_fields, 3},
    {"payment", payment_fields, 2},
};
static int defined = 2;

/* The layout of a kind of record; NULL for a kind the table does not hold. */
static const struct layout *find_layout(const char *kind)
{
    for (int i = 0; i < defined; i++)
        if (strcmp(layouts[i].kind, kind) == 0)
            return &layouts[i];
    return NULL;
}

static long record_width(const struct layout *layout)
{
    long width = 0;
    for (int i = 0; i < layout->count; i++)  // CULPRIT width
        width += layout->fields[i].width;
    return width;
}

static long checked_width(const struct layout *layout)
{
    assert(layout != NULL && "every record kind has a layout");  // CULPRIT validate
    return record_width(layout);
}

/* width(kind) -> the bytes a record of that kind takes. */
static PyObject *records_width(PyObject *self, PyObject *kind)
{
    const char *name = PyUnicode_AsUTF8(kind);
    if (name == NULL)
        return NULL;
    return PyLong_FromLong(record_width(find_layout(name)));
}

/* validate(kind) -> the same, checked. */
static PyObject *records_validate(PyObject *self, PyObject *kind)
{
    const char *name = PyUnicode_AsUTF8(kind);
    if (name == NULL)
        return NULL;
    return PyLong_FromLong(checked_width(find_layout(name)));
}

/* define(kind) adds a kind of one free-form field; the table has room for MAX_LAYOUTS. */
static PyObject *records_define(PyObject *self, PyObject *kind)
{
    const char *name = PyUnicode_AsUTF8(kind);
    if (name == NULL)
        return NULL;
    if (defined == MAX_LAYOUTS)
        Py_FatalError("record table full");  // CULPRIT define
    struct layout *layout = &layouts[defined++];
    strncpy(layout->kind, name, sizeof layout->kind - 1);
    layout->fields = custom_fields;
    layout->count = 1;
    Py_RETURN_NONE;
}

/* describe(kind) -> the name of a kind's first field. */
static PyObject *records_describe(PyObject *self, PyObject *kind)
{
    const char *name = PyUnicode_AsUTF8(kind);
    if (name == NULL)
        return NULL;
    const struct layout *layout = find_layout(name);
    if (layout == NULL)
        PyErr_Format(PyExc_LookupError, "no layout for record kind '%s'", name);
    return PyUnicode_FromString(layout->fields[0].name);  // CULPRIT describe
}

static PyMethodDef methods[] = {
    {"width", records_width, METH_O, "The bytes a record of a kind takes."},
    {"describe", records_describe, METH_O, "The name of a kind's first field."},
    {"validate", records_validate, METH_O, "The bytes a record of a kind takes, checked."},
    {"define", records_define, METH_O, "Adds a kind of record of one free-form field."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "records", NULL, -1, methods};

PyMODINIT_FUNC PyInit_records(void)
{
    return PyModule_Create(&module);
}
`;

/** Prints the first field of each kind of record; "refund" has no layout: records.describe sets a LookupError and reads on through NULL. */
export const LEDGER_DESCRIBE = `"""Lists the first field of each kind of record in a ledger export."""
import records


def first_fields(kinds):
    return [records.describe(kind) for kind in kinds]  # CULPRIT first_fields


print(first_fields(["invoice", "refund"]))
`;

/** Sizes each line of a ledger export by its kind; "refund" has no layout, and records.width reads through NULL. */
export const LEDGER_IMPORT = `"""Sizes the records of a ledger export by their kind."""
import records

LINES = ["invoice 0000000001 ACME", "payment 0000000001", "refund 0000000001"]


def record_size(line):
    kind = line.split(" ", 1)[0]
    return records.width(kind)  # CULPRIT record_size


def import_ledger(lines):
    total = 0
    for line in lines:
        total += record_size(line)  # CULPRIT import_ledger
    return total


print(import_ledger(LINES), flush=True)
`;

/** The same, through records.validate, whose assert fails for "refund". */
export const LEDGER_CHECK = `"""Checks that every kind of record in a ledger export has a layout."""
import records

KINDS = ["invoice", "payment", "refund"]


def check_kind(kind):
    return records.validate(kind)  # CULPRIT check_kind


def check_export(kinds):
    for kind in kinds:
        check_kind(kind)  # CULPRIT check_export


check_export(KINDS)
print("ok", flush=True)
`;

/** Defines more kinds than the table holds: records.define calls Py_FatalError. */
export const LEDGER_SETUP = `"""Registers the custom record kinds a ledger export uses."""
import records

CUSTOM = ["refund", "credit", "transfer"]


def register(kinds):
    for kind in kinds:
        records.define(kind)  # CULPRIT register


register(CUSTOM)
print("registered", flush=True)
`;

/** A worker that aborts, for a core, when its job queue runs dry. */
export const JOB_WORKER = `"""Takes jobs off a queue; an empty queue is a bug upstream, so it aborts for a core."""
import os


def take_job(queue):
    if not queue:
        os.abort()  # CULPRIT take_job
    return queue.pop()


def work(queue):
    while True:
        job = take_job(queue)  # CULPRIT work
        print("done", job, flush=True)


work(["nightly-report", "backup"])
`;

/**
 * The depth of a category in a long chain of parents, memoised with functools.lru_cache: each call
 * goes through the cache's C code and into a new evaluation loop, so the recursion, allowed by a
 * raised recursion limit, runs the C stack out.
 */
export const CATEGORY_DEPTH = `"""Depth of a category in the catalogue's tree: its parent's depth plus one."""
import functools
import sys

sys.setrecursionlimit(10**6)
PARENT = {category: category - 1 for category in range(1, 500_000)}


@functools.lru_cache(maxsize=None)
def depth(category):
    parent = PARENT.get(category)
    return 0 if parent is None else depth(parent) + 1  # CULPRIT depth


print(depth(499_999), flush=True)
`;

/** How long a program may take to crash under gdb, and gdb to write its core. */
const RUN_TIMEOUT_MS = 120_000;

/** Builds RECORDS_EXTENSION in `dir` with gcc, against `python`'s own headers and named with its extension suffix. */
export async function buildRecordsExtension(dir: string, python: string): Promise<string> {
  const source = path.join(dir, "records.c");
  writeFileSync(source, RECORDS_EXTENSION);
  const config = await run(python, ["-c", "import sysconfig; print(sysconfig.get_paths()['include']); print(sysconfig.get_config_var('EXT_SUFFIX'))"], { encoding: "utf8" });
  const [include, suffix] = config.stdout.trim().split("\n");
  const built = path.join(dir, `records${suffix}`);
  await run("gcc", ["-shared", "-fPIC", "-g", "-O0", `-I${include}`, "-o", built, source], { encoding: "utf8" });
  return source;
}

/** Whether gcc is here to build the extension. */
export function hasGcc(): boolean {
  return ["/usr/bin/gcc", "/usr/local/bin/gcc"].some((file) => existsSync(file));
}

/**
 * `source` run as `app.py` in `dir` under gdb, dumped where it stops. With `faulthandler`, the program
 * runs with `-X faulthandler` and gdb passes the first fault on to its handler, then dumps the
 * signal the handler raises again, as the kernel would have.
 */
export async function pythonCore(dir: string, python: string, source: string, options: { faulthandler?: boolean } = {}): Promise<PythonCore> {
  const program = path.join(dir, "app.py");
  writeFileSync(program, source);
  const core = path.join(dir, "core");
  const flags = options.faulthandler ? ["-X", "faulthandler"] : [];
  const passOn = options.faulthandler ? ["-ex", "continue"] : [];
  const gdb = ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-ex", "run", ...passOn, "-ex", `generate-core-file ${core}`, "--args", python, ...flags, program];
  const ran = await run("gdb", gdb, { cwd: dir, timeout: RUN_TIMEOUT_MS, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (!existsSync(core)) throw new Error(`gdb wrote no core of ${program} on ${python}:\n${ran.stdout}${ran.stderr}`);
  return { core, python, program, sourceLines: markedLines(source) };
}

/** `program` importing the records extension, built in `dir` for `python`, run and dumped as `pythonCore` does. */
export async function extensionCore(dir: string, python: string, program: string): Promise<ExtensionCore> {
  const extension = await buildRecordsExtension(dir, python);
  const core = await pythonCore(dir, python, program);
  return { ...core, extension, extensionLines: markedCLines(RECORDS_EXTENSION) };
}

/** The marked lines of a C source by their marks: `// CULPRIT width` on line 41 is `{ "CULPRIT width": 41 }`. */
function markedCLines(source: string): Record<string, number> {
  const lines: Record<string, number> = {};
  source.split("\n").forEach((line, index) => {
    const mark = /\/\/ (CULPRIT\b.*)$/.exec(line);
    if (mark) lines[mark[1]!] = index + 1;
  });
  return lines;
}
