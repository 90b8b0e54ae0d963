#pragma once
// Writes what a command's -o names, the way a user means it: a regular file is replaced whole (a
// temporary file beside it, renamed into place, so readers see the old text or the new, never a
// part, and a failed write leaves the old one); a symbolic link is followed and its target written;
// a FIFO or a character device (/dev/stdout, /dev/null) is written into, never replaced; a folder,
// a socket or a block device is refused. Throws Error naming the path and the reason.
#include <filesystem>
#include <string>

namespace soltune {

void write_output_file(const std::filesystem::path& out, const std::string& text);

}  // namespace soltune
