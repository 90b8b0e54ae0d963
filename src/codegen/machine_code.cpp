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

struct Cubin {
  uint16_t machine = 0;
  uint32_t flags = 0;
  std::map<std::string_view, Section> sections;
};

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
  Cubin c{eh.e_machine, eh.e_flags, {}};
  for (const auto& s : sh) {
    if (s.sh_name >= names.size()) throw bad("section name out of bounds");
    const auto rest = names.substr(s.sh_name);
    const auto name = rest.substr(0, rest.find('\0'));
    if (debug_section(name)) continue;
    const auto data = s.sh_type == SHT_NOBITS ? std::string_view() : at(s.sh_offset, s.sh_size, "section");
    if (!c.sections.emplace(name, Section{s.sh_type, s.sh_flags, s.sh_size, s.sh_addralign, s.sh_link, s.sh_info, data}).second)
      throw bad("section '" + std::string(name) + "' twice");
  }
  return c;
}

}  // namespace

bool same_machine_code(std::span<const char> a, std::span<const char> b) {
  const auto x = read_cubin(a), y = read_cubin(b);
  return x.machine == y.machine && x.flags == y.flags && x.sections == y.sections;
}

}  // namespace soltune
