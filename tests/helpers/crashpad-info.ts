/**
 * Adds Crashpad's own stream (MINIDUMP_CRASHPAD_INFO) to a minidump, as Crashpad's writer lays it
 * out (crashpad/minidump/minidump_extensions.h): the stream and everything it points to appended
 * after the dump's data, and a new stream directory after them that lists it with the others.
 */
import { Writer } from "./dump-writers.js";

const CRASHPAD_INFO = 0x43500001;

export interface CrashpadInfoSpec {
  reportId?: Buffer;
  clientId?: Buffer;
  simple?: Record<string, string>;
  /** By index in the dump's module list. */
  modules?: { index: number; list?: string[]; simple?: Record<string, string>; objects?: Record<string, string> }[];
}

export function withCrashpadInfo(dump: Buffer, spec: CrashpadInfoSpec): Buffer {
  const out = Buffer.from(dump);
  const writer = new Writer();
  writer.append(out);
  const place = (bytes: Buffer): number => writer.append(bytes, 8);
  const u32s = (...values: number[]) => {
    const b = Buffer.alloc(values.length * 4);
    values.forEach((v, i) => b.writeUInt32LE(v >>> 0, i * 4));
    return b;
  };
  const utf8 = (text: string) => place(Buffer.concat([u32s(Buffer.byteLength(text)), Buffer.from(`${text}\0`, "utf8")]));
  const dictionary = (pairs: Record<string, string>) => {
    const entries = Object.entries(pairs).flatMap(([key, value]) => [utf8(key), utf8(value)]);
    const body = u32s(entries.length / 2, ...entries);
    return { size: body.length, rva: place(body) };
  };
  const none = { size: 0, rva: 0 };

  const links = (spec.modules ?? []).map((module) => {
    const listRvas = (module.list ?? []).map(utf8);
    const listBody = u32s(listRvas.length, ...listRvas);
    const list = module.list ? { size: listBody.length, rva: place(listBody) } : none;
    const simple = module.simple ? dictionary(module.simple) : none;
    const objects = module.objects
      ? (() => {
          const entries = Object.entries(module.objects ?? {}).map(([name, value]) => {
            const nameRva = utf8(name);
            const bytes = Buffer.from(value, "utf8");
            const valueRva = place(Buffer.concat([u32s(bytes.length), bytes]));
            const entry = Buffer.alloc(12);
            entry.writeUInt32LE(nameRva, 0);
            entry.writeUInt16LE(1, 4); // Annotation::Type::kString
            entry.writeUInt32LE(valueRva, 8);
            return entry;
          });
          const body = Buffer.concat([u32s(entries.length), ...entries]);
          return { size: body.length, rva: place(body) };
        })()
      : none;
    const info = u32s(1, list.size, list.rva, simple.size, simple.rva, objects.size, objects.rva);
    return { index: module.index, size: info.length, rva: place(info) };
  });
  const moduleList = links.length > 0 ? (() => {
    const body = u32s(links.length, ...links.flatMap((link) => [link.index, link.size, link.rva]));
    return { size: body.length, rva: place(body) };
  })() : none;
  const simple = spec.simple ? dictionary(spec.simple) : none;
  const info = Buffer.concat([u32s(1), spec.reportId ?? Buffer.alloc(16), spec.clientId ?? Buffer.alloc(16), u32s(simple.size, simple.rva, moduleList.size, moduleList.rva)]);
  const infoRva = place(info);

  // The new directory: the old entries, then the Crashpad stream's.
  const count = out.readUInt32LE(8);
  const oldDirectory = out.readUInt32LE(12);
  const directory = Buffer.concat([out.subarray(oldDirectory, oldDirectory + count * 12), u32s(CRASHPAD_INFO, info.length, infoRva)]);
  const directoryRva = place(directory);
  out.writeUInt32LE(count + 1, 8);
  out.writeUInt32LE(directoryRva, 12);
  return writer.bytes();
}
