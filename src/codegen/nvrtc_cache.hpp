#pragma once
// Content-addressed disk cache of compile results: one file per key, <dir>/<key>.nvrtc.
// Compiles are deterministic given the source, name expressions, options and NVRTC version, so
// failures are cached too. Entries are written to a temp file and renamed into place, which is
// atomic, so concurrent threads and processes never see half an entry. Headers that the source
// includes from the include dirs are not hashed: a toolkit update changes the NVRTC version.
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "codegen/compiler.hpp"

namespace soltune {

// 32 hex digits of XXH3-128 over every input of a compile, each field length-prefixed.
std::string nvrtc_cache_key(const CompileRequest& r, const std::vector<std::string>& options,
                            int nvrtc_version);

// The on-disk form of a result (ms and cache_hit are not stored), and back. decode returns nullopt
// for anything malformed: bad magic or version, wrong length or checksum, another key.
std::string encode_cache_entry(const CompileResult& res);
std::optional<CompileResult> decode_cache_entry(const std::string& bytes, const std::string& key);

class NvrtcCache {
 public:
  // Creates dir if missing; if that fails, the cache stays disabled (see take_note).
  explicit NvrtcCache(std::filesystem::path dir);

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path entry_path(const std::string& key) const;
  bool enabled() const;

  // A miss (nullopt) when absent, unreadable or corrupt; never throws for a bad file.
  std::optional<CompileResult> load(const std::string& key) const;
  // Never throws; a failed write disables the cache for the rest of this object's life.
  void store(const CompileResult& res);
  // Why the cache was disabled, returned once (to be noted in one result's log), else "".
  std::string take_note();

 private:
  void disable(const std::string& why);

  std::filesystem::path dir_;
  mutable std::mutex mu_;
  bool disabled_ = false;
  bool noted_ = false;
  std::string note_;
};

}  // namespace soltune
