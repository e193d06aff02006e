/**
 * A frame's language: the one its runtime's reader gave it (a Java frame read by jhsdb), else the
 * one its source file's extension selects, as the compiler driver chose it (gcc compiles `.c` as C
 * and `.cc` as C++). A header, or a frame without a file, has none that can be told.
 */
import type { Frame } from "../debuggers/model.js";

const BY_EXTENSION: Record<string, string> = {
  c: "c",
  cc: "c++",
  cpp: "c++",
  cxx: "c++",
  "c++": "c++",
  C: "c++",
  m: "objective-c",
  mm: "objective-c++",
  rs: "rust",
  go: "go",
  swift: "swift",
  zig: "zig",
  d: "d",
  f90: "fortran",
  f: "fortran",
  java: "java",
  kt: "kotlin",
  scala: "scala",
  py: "python",
  js: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  ts: "typescript",
};

export function languageOf(frame: Pick<Frame, "file" | "language">): string | null {
  if (frame.language) return frame.language;
  const extension = /\.([\w+]{1,5})$/.exec(frame.file ?? "")?.[1];
  return extension === undefined ? null : (BY_EXTENSION[extension] ?? BY_EXTENSION[extension.toLowerCase()] ?? null);
}
