/** A placeholder until lldb's vocabulary is written: only movesSelection works. */
import type { Vocabulary } from "../probe.js";

export const lldbVocabulary: Vocabulary = {
  debugger: "lldb",
  render: () => {
    throw new Error("lldb vocabulary: not yet");
  },
  read: () => {
    throw new Error("not yet");
  },
  recognise: () => null,
  movesSelection: (c) => /^\s*(thread select|frame select|f|up|down)\b/.test(c),
  syntax: "",
} as Vocabulary;
