#pragma once
// Writes a whole file so that readers see the old file or the new one, never a part: a temporary
// file beside it, renamed into place. Throws Error naming the file (and removes the temporary).
#include <filesystem>
#include <string>

namespace soltune {

void write_file_atomically(const std::filesystem::path& out, const std::string& text);

}  // namespace soltune
