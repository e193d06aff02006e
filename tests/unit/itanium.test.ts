/**
 * The type_info symbols of thrown types, as a debugger that leaves them mangled shows them. Every
 * expected name below is what `c++filt` (GNU binutils) prints for the same symbol; the symbols
 * `demangleTypeinfo` does not read (templates, substitutions, malformed or overlong) give null.
 */
import { describe, expect, it } from "vitest";
import { demangleTypeinfo } from "../../src/analyzers/itanium.js";

describe("type_info symbols read as c++filt reads them", () => {
  const cases: Array<[string, string]> = [
    ["_ZTISt13runtime_error", "typeinfo for std::runtime_error"],
    ["_ZTISt13runtime_error@GLIBCXX_3.4", "typeinfo for std::runtime_error"],
    ["_ZTISt9bad_alloc@@GLIBCXX_3.4", "typeinfo for std::bad_alloc"],
    ["_ZTIN5myapp6errors8NotFoundE", "typeinfo for myapp::errors::NotFound"],
    ["_ZTINSt8ios_base7failureE", "typeinfo for std::ios_base::failure"],
    ["_ZTINSt3_V214error_categoryE", "typeinfo for std::_V2::error_category"],
    ["_ZTINSt8ios_base7failureB5cxx11E", "typeinfo for std::ios_base::failure[abi:cxx11]"],
    ["_ZTIN3app9BadConfigB8internalE", "typeinfo for app::BadConfig[abi:internal]"],
    ["_ZTI5ErrorB3v2_", "typeinfo for Error[abi:v2_]"],
    // g++'s symbol for a type thrown from an anonymous namespace.
    ["_ZTIN12_GLOBAL__N_19ParseFailE", "typeinfo for (anonymous namespace)::ParseFail"],
    ["_ZTIi", "typeinfo for int"],
    ["_ZTIm", "typeinfo for unsigned long"],
    ["_ZTIPKc", "typeinfo for char const*"],
    ["_ZTIKPc", "typeinfo for char* const"],
    ["_ZTIPPv", "typeinfo for void**"],
  ];
  for (const [symbol, name] of cases) {
    it(`${symbol} → ${name}`, () => expect(demangleTypeinfo(symbol)).toBe(name));
  }
});

describe("what it does not read is null, never a wrong name", () => {
  const cases: Array<[string, string]> = [
    ["a template (std::string with its ABI tag)", "_ZTINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"],
    ["a template", "_ZTISt6vectorIiSaIiEE"],
    ["a substitution", "_ZTISa"],
    ["not a symbol", ""],
    ["not mangled", "typeinfo for int"],
    ["a function, not a type_info", "_ZN3app4mainEv"],
    ["a type_info's name string, not the type_info", "_ZTSi"],
    ["nothing after the prefix", "_ZTI"],
    ["an unknown type code", "_ZTIZ"],
    ["a name of length 0", "_ZTI0"],
    ["an empty nested name", "_ZTINE"],
    ["a nested name never closed", "_ZTIN3app5Error"],
    ["text after the type", "_ZTIN3app5ErrorE3foo"],
    ["a space in the symbol", "_ZTIi extra"],
    ["a length past the end", "_ZTI10runtime"],
    ["a nested length past the end", "_ZTIN5myapp20errorsE"],
    ["a std length past the end", "_ZTISt99runtime_error"],
    ["a huge length", "_ZTI99999999999999999999x"],
    ["an ABI tag without its name", "_ZTIN3app9BadConfigBE"],
    ["a pointer to nothing", "_ZTIPK"],
  ];
  for (const [name, symbol] of cases) {
    it(`${name}: ${JSON.stringify(symbol)}`, () => expect(demangleTypeinfo(symbol)).toBeNull());
  }

  it("a symbol longer than 512 characters is not read; one of 510 is", () => {
    const nested = (parts: number) => `_ZTIN${"3abc".repeat(parts)}E`;
    expect(demangleTypeinfo(nested(127))).toBe(`typeinfo for ${Array(127).fill("abc").join("::")}`);
    expect(demangleTypeinfo(nested(128))).toBeNull();
    expect(demangleTypeinfo(`_ZTI${"P".repeat(100_000)}i`)).toBeNull();
  });
});
