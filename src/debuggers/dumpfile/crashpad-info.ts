/**
 * Crashpad's own stream (MINIDUMP_CRASHPAD_INFO, type 0x43500001): the report and client ids, the
 * process's simple annotations, and per module its list annotations, key-value annotations and
 * annotation objects. Every count and string is bounded; the layout is Crashpad's public
 * minidump_extensions.h.
 */
import type { CrashpadInfo } from "../model.js";
import { checkedCount, DumpFile, DumpFileError, Fields } from "./file.js";

const MAX_ANNOTATIONS = 4096;
const MAX_ANNOTATION_BYTES = 64 * 1024;
/** version, report_id, client_id, simple_annotations, module_list. */
const INFO_BYTES = 4 + 16 + 16 + 8 + 8;
const LINK_BYTES = 12;
/** version, list_annotations, simple_annotations; annotation_objects in newer writers. */
const MODULE_INFO_BYTES = 4 + 8 + 8;
const MODULE_INFO_WITH_OBJECTS_BYTES = MODULE_INFO_BYTES + 8;
const ANNOTATION_BYTES = 12;
/** Annotation::Type::kString: the value's bytes are UTF-8 text. */
const STRING_ANNOTATION = 1;

export function readCrashpadInfo(file: DumpFile, fields: Fields, modulePaths: string[]): CrashpadInfo {
  if (!fields.has(0, INFO_BYTES)) throw new DumpFileError(`the CrashpadInfo stream holds ${fields.length} bytes, fewer than the ${INFO_BYTES} of its version 1`);
  const simple = location(fields, 36);
  const list = location(fields, 44);
  const modules = list.size === 0 ? [] : readModuleList(file, list, modulePaths);
  return {
    reportId: uuid(fields.bytes.subarray(4, 20)),
    clientId: uuid(fields.bytes.subarray(20, 36)),
    simple: simple.size === 0 ? {} : readDictionary(file, simple, "the process's simple annotations"),
    modules,
  };
}

interface Location {
  size: number;
  rva: number;
}

function location(fields: Fields, at: number): Location {
  return { size: fields.u32(at), rva: fields.u32(at + 4) };
}

function readModuleList(file: DumpFile, where: Location, modulePaths: string[]): CrashpadInfo["modules"] {
  const head = fieldsAt(file, where, "the Crashpad module list");
  const count = checkedCount(head.u32(0), MAX_ANNOTATIONS, "the Crashpad module list");
  if (!head.has(4, count * LINK_BYTES)) throw new DumpFileError(`the Crashpad module list of ${count} modules does not fit its ${head.length} bytes`);
  const modules: CrashpadInfo["modules"] = [];
  for (let i = 0; i < count; i++) {
    const at = 4 + i * LINK_BYTES;
    const index = head.u32(at);
    const info = fieldsAt(file, location(head, at + 4), `the Crashpad info of module ${index}`);
    if (!info.has(0, MODULE_INFO_BYTES)) throw new DumpFileError(`the Crashpad info of module ${index} holds ${info.length} bytes, fewer than ${MODULE_INFO_BYTES}`);
    const listAt = location(info, 4);
    const simpleAt = location(info, 12);
    const objectsAt = info.has(0, MODULE_INFO_WITH_OBJECTS_BYTES) ? location(info, 20) : { size: 0, rva: 0 };
    const what = `module ${index}'s`;
    modules.push({
      module: modulePaths[index] ?? null,
      list: listAt.size === 0 ? [] : readStringList(file, listAt, `${what} list annotations`),
      simple: simpleAt.size === 0 ? {} : readDictionary(file, simpleAt, `${what} simple annotations`),
      objects: objectsAt.size === 0 ? {} : readObjects(file, objectsAt, `${what} annotation objects`),
    });
  }
  return modules;
}

/** A MinidumpRVAList of MinidumpUTF8Strings. */
function readStringList(file: DumpFile, where: Location, what: string): string[] {
  const list = fieldsAt(file, where, what);
  const count = checkedCount(list.u32(0), MAX_ANNOTATIONS, what);
  if (!list.has(4, count * 4)) throw new DumpFileError(`${what}: ${count} entries do not fit ${list.length} bytes`);
  return Array.from({ length: count }, (_, i) => utf8String(file, list.u32(4 + i * 4), what));
}

/** A MinidumpSimpleStringDictionary: key and value RVAs of MinidumpUTF8Strings. */
function readDictionary(file: DumpFile, where: Location, what: string): Record<string, string> {
  const dictionary = fieldsAt(file, where, what);
  const count = checkedCount(dictionary.u32(0), MAX_ANNOTATIONS, what);
  if (!dictionary.has(4, count * 8)) throw new DumpFileError(`${what}: ${count} pairs do not fit ${dictionary.length} bytes`);
  const pairs: Record<string, string> = {};
  for (let i = 0; i < count; i++) pairs[utf8String(file, dictionary.u32(4 + i * 8), what)] = utf8String(file, dictionary.u32(8 + i * 8), what);
  return pairs;
}

/** A MinidumpAnnotationList: the string-typed objects' names and values (other types are binary). */
function readObjects(file: DumpFile, where: Location, what: string): Record<string, string> {
  const objects = fieldsAt(file, where, what);
  const count = checkedCount(objects.u32(0), MAX_ANNOTATIONS, what);
  if (!objects.has(4, count * ANNOTATION_BYTES)) throw new DumpFileError(`${what}: ${count} objects do not fit ${objects.length} bytes`);
  const read: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const at = 4 + i * ANNOTATION_BYTES;
    if (objects.u16(at + 4) !== STRING_ANNOTATION) continue;
    read[utf8String(file, objects.u32(at), what)] = byteArray(file, objects.u32(at + 8), what).toString("utf8");
  }
  return read;
}

function fieldsAt(file: DumpFile, where: Location, what: string): Fields {
  if (where.size > MAX_ANNOTATION_BYTES * 16) throw new DumpFileError(`${what} claims ${where.size} bytes`);
  return new Fields(file.read(where.rva, where.size, what), what);
}

/** A MinidumpUTF8String: a byte length (the NUL after it not counted), then the bytes. */
function utf8String(file: DumpFile, rva: number, what: string): string {
  return byteArray(file, rva, what).toString("utf8");
}

/** A length-prefixed run of bytes (MinidumpUTF8String, MinidumpByteArray), at most 64 KiB. */
function byteArray(file: DumpFile, rva: number, what: string): Buffer {
  const length = new Fields(file.read(rva, 4, what), what).u32(0);
  if (length > MAX_ANNOTATION_BYTES) throw new DumpFileError(`${what}: a string of ${length} bytes, more than ${MAX_ANNOTATION_BYTES}`);
  return file.read(rva + 4, length, what);
}

/** Crashpad's UUID as it prints it (its first three fields little-endian); null when all zero. */
function uuid(bytes: Buffer): string | null {
  if (bytes.every((b) => b === 0)) return null;
  const hex = (buffer: Buffer) => buffer.toString("hex");
  const le = (at: number, size: number) => hex(Buffer.from(bytes.subarray(at, at + size)).reverse());
  return `${le(0, 4)}-${le(4, 2)}-${le(6, 2)}-${hex(bytes.subarray(8, 10))}-${hex(bytes.subarray(10, 16))}`;
}
