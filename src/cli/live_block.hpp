#pragma once
// A block of status lines kept at the bottom of a terminal and redrawn in place, with lines of
// events scrolling above it (what ninja and cargo do). Three ANSI sequences are all it takes: a
// full-screen library would take the terminal over and lose its scrollback. Lines are cut to the
// terminal's width, so that none wraps and the block's height stays known.
#include <cstdio>
#include <string>
#include <vector>

namespace soltune::cli {

// How `tune` shows its progress on stdout: a live block on a terminal, plain lines otherwise.
// SOLTUNE_PROGRESS=live|plain overrides what is detected (TERM=dumb or no terminal: plain).
bool stdout_is_live_terminal();

class LiveBlock {
 public:
  explicit LiveBlock(std::FILE* out = stdout) : out_(out) {}
  ~LiveBlock() { clear(); }
  LiveBlock(const LiveBlock&) = delete;
  LiveBlock& operator=(const LiveBlock&) = delete;

  // Prints `text` (one or more lines) above the block, which is then drawn again as it was.
  void event(const std::string& text);
  // Replaces the block's lines.
  void draw(const std::vector<std::string>& lines);
  // Erases the block; what follows prints where it was.
  void clear();
  int columns() const;  // the terminal's width now (80 when it does not say)
  int rows() const;     // its height (24 when it does not say)

 private:
  void erase();
  void put_lines();

  std::FILE* out_;
  std::vector<std::string> lines_;
  int drawn_ = 0;  // lines of the block on the screen now
};

}  // namespace soltune::cli
