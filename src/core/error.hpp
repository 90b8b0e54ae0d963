#pragma once
// One error type for infrastructure failures and bad input. Per-candidate failures are values
// (see measure.hpp), never exceptions.
#include <stdexcept>
#include <string>

namespace soltune {

// Where a piece of user input came from: file, and line/column when known (1-based; 0 = unknown).
struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;
  std::string str() const;  // "file:line:col" (parts that are unknown are left out)
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
  Error(const SourceLoc& loc, const std::string& what) : std::runtime_error(loc.str() + ": " + what) {}
};

}  // namespace soltune
