#pragma once
// Writes what a command's -o names, the way a user means it: a regular file is replaced whole (a
// temporary file beside it, renamed into place, so readers see the old text or the new, never a
// part, and a failed write leaves the old one); a symbolic link is followed and its target written;
// a FIFO or a character device (/dev/null) is written into, never replaced; a folder, a socket or a
// block device is refused. Standard output (`-`) and a path that names one of this process's own
// descriptors (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N) are written through that
// descriptor, where the shell left it: after what came before, appended where it opened with >>,
// into a pipe as into a file. Throws Error naming the path and the reason.
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

namespace soltune {

void write_output_file(const std::filesystem::path& out, const std::string& text);

// The descriptor of this process that `out` names (`-` is 1), or none.
std::optional<int> own_descriptor(const std::filesystem::path& out);
// Whether `out` is written as a stream: a descriptor of this process, a FIFO or a character device.
// Nothing can be read back from it or replaced in it (a recording is written there once, at its end).
bool is_stream_output(const std::filesystem::path& out);
// Where a command reports what it wrote: standard error when `out` is standard output (the report
// would land inside what was written), else standard output.
std::FILE* report_stream(const std::filesystem::path& out);

}  // namespace soltune
