#pragma once
// Whether two cubins hold the same machine code. An edit of a template's comments or layout changes
// its source hash (and so which results the knowledge base counts as today's) but may leave every
// kernel it compiles to as it was; results measured with the earlier text then still describe it.
#include <span>

namespace soltune {

// Every ELF section compared by name, type, flags, size, alignment, link, info and contents, and the
// ELF header's machine and flags (the architecture), except the debug and line tables (.debug*,
// .nv_debug*, and their .rela*), which follow the source's lines; the symbol table compared symbol
// by symbol, by name and every other field, internal-linkage names made alike (NVRTC numbers them
// afresh in each compile). Conservative: anything else that differs counts as other code. Throws
// Error on a malformed ELF.
bool same_machine_code(std::span<const char> a, std::span<const char> b);

}  // namespace soltune
