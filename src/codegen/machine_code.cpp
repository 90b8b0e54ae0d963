#include "codegen/machine_code.hpp"

#include <elf.h>

#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/error.hpp"

namespace soltune {
namespace {

// A section as compared: its header fields that matter and its bytes (none for NOBITS, e.g. static
// shared memory, whose size is the part that counts).
using Section = std::tuple<uint32_t, uint64_t, uint64_t, uint64_t, uint32_t, uint32_t, std::string_view>;

// A symbol as compared: its name (internal ones normalised, below) and every field but the name's offset.
using Symbol = std::tuple<std::string, unsigned char, unsigned char, uint16_t, uint64_t, uint64_t>;

struct Cubin {
  uint16_t machine = 0;
  uint32_t flags = 0;
  std::map<std::string_view, Section> sections;  // all but the symbol table and its names
  std::vector<Symbol> symbols;
};

// A mangled name with its internal-linkage identifiers made alike: NVRTC names each
// `_INTERNAL_<...>_<file>_<hash>_<number>` (libcu++'s cuda::ptx tags have internal linkage) with a hash
// and a number that change from one compile of the same text to the next. The identifier's length
// comes before it in the mangling, so it is replaced whole, length included.
std::string normalised(std::string_view name) {
  static constexpr std::string_view kInternal = "_INTERNAL_";
  std::string out;
  size_t from = 0;
  for (size_t at = name.find(kInternal); at != std::string_view::npos; at = name.find(kInternal, from)) {
    size_t digits = at;
    while (digits > from && name[digits - 1] >= '0' && name[digits - 1] <= '9') --digits;
    size_t length = 0;
    for (size_t i = digits; i < at; ++i) length = length * 10 + static_cast<size_t>(name[i] - '0');
    if (digits == at || at + length > name.size()) {  // not a mangled identifier: left as it is
      out.append(name.substr(from, at + kInternal.size() - from));
      from = at + kInternal.size();
      continue;
    }
    out.append(name.substr(from, digits - from)).append("<internal>");
    from = at + length;
  }
  return out.append(name.substr(from));
}

bool debug_section(std::string_view name) {
  for (std::string_view p : {".debug", ".nv_debug", ".rela.debug", ".rela.nv_debug"})
    if (name.substr(0, p.size()) == p) return true;
  return false;
}

Cubin read_cubin(std::span<const char> bytes) {
  const std::string_view all(bytes.data(), bytes.size());
  auto bad = [](const std::string& why) { return Error("cubin: not a readable ELF file (" + why + ")"); };
  auto at = [&](uint64_t off, uint64_t size, const char* what) {
    if (off > all.size() || size > all.size() - off) throw bad(std::string(what) + " out of bounds");
    return all.substr(off, size);
  };
  Elf64_Ehdr eh;
  std::memcpy(&eh, at(0, sizeof eh, "header").data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) throw bad("no 64-bit ELF magic");
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) throw bad("unexpected section header size");
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  if (!sh.empty()) std::memcpy(sh.data(), at(eh.e_shoff, sh.size() * sizeof(Elf64_Shdr), "section headers").data(), sh.size() * sizeof(Elf64_Shdr));
  if (eh.e_shstrndx >= sh.size()) throw bad("no section name table");
  const auto names = at(sh[eh.e_shstrndx].sh_offset, sh[eh.e_shstrndx].sh_size, "section names");
  Cubin c{eh.e_machine, eh.e_flags, {}, {}};
  const Elf64_Shdr* symtab = nullptr;
  for (const auto& s : sh) {
    if (s.sh_name >= names.size()) throw bad("section name out of bounds");
    const auto rest = names.substr(s.sh_name);
    const auto name = rest.substr(0, rest.find('\0'));
    if (debug_section(name)) continue;
    if (s.sh_type == SHT_SYMTAB) symtab = &s;
    if (s.sh_type == SHT_SYMTAB || name == ".strtab") continue;  // compared as symbols, below
    const auto data = s.sh_type == SHT_NOBITS ? std::string_view() : at(s.sh_offset, s.sh_size, "section");
    if (!c.sections.emplace(name, Section{s.sh_type, s.sh_flags, s.sh_size, s.sh_addralign, s.sh_link, s.sh_info, data}).second)
      throw bad("section '" + std::string(name) + "' twice");
  }
  if (symtab) {
    if (symtab->sh_entsize != sizeof(Elf64_Sym) || symtab->sh_link >= sh.size()) throw bad("malformed symbol table");
    const auto strings = at(sh[symtab->sh_link].sh_offset, sh[symtab->sh_link].sh_size, "symbol names");
    const auto table = at(symtab->sh_offset, symtab->sh_size, "symbol table");
    for (size_t i = 0; i + sizeof(Elf64_Sym) <= table.size(); i += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, table.data() + i, sizeof sym);
      if (sym.st_name >= strings.size() && sym.st_name != 0) throw bad("symbol name out of bounds");
      const auto rest = sym.st_name < strings.size() ? strings.substr(sym.st_name) : std::string_view();
      c.symbols.emplace_back(normalised(rest.substr(0, rest.find('\0'))), sym.st_info, sym.st_other, sym.st_shndx,
                             sym.st_value, sym.st_size);
    }
  }
  return c;
}

}  // namespace

bool same_machine_code(std::span<const char> a, std::span<const char> b) {
  const auto x = read_cubin(a), y = read_cubin(b);
  return x.machine == y.machine && x.flags == y.flags && x.sections == y.sections && x.symbols == y.symbols;
}

}  // namespace soltune
