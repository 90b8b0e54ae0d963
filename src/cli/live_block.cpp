#include "cli/live_block.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace soltune::cli {
namespace {

winsize window(std::FILE* out) {
  winsize w{};
  if (ioctl(fileno(out), TIOCGWINSZ, &w) != 0) w = winsize{};
  return w;
}

}  // namespace

bool stdout_is_live_terminal() {
  if (const char* v = std::getenv("SOLTUNE_PROGRESS"); v && *v) return std::strcmp(v, "live") == 0;
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) && term && *term && std::strcmp(term, "dumb") != 0;
}

int LiveBlock::columns() const {
  const int c = window(out_).ws_col;
  return c > 0 ? c : 80;
}

int LiveBlock::rows() const {
  const int r = window(out_).ws_row;
  return r > 0 ? r : 24;
}

void LiveBlock::erase() {
  // To the first line of the block (CSI n F), then clear from there to the end of the screen.
  if (drawn_ > 0) std::fprintf(out_, "\x1b[%dF\x1b[J", drawn_);
  drawn_ = 0;
}

void LiveBlock::put_lines() {
  const size_t width = static_cast<size_t>(columns() > 1 ? columns() - 1 : 1);
  // Each line cleared as it is written over (CSI 2K), what is left below cleared at the end (CSI J):
  // no moment shows an empty block, so it does not flicker.
  for (const auto& l : lines_)
    std::fprintf(out_, "\x1b[2K%s\n", l.size() > width ? l.substr(0, width).c_str() : l.c_str());  // ASCII lines
  std::fputs("\x1b[J", out_);
  drawn_ = static_cast<int>(lines_.size());
  std::fflush(out_);
}

void LiveBlock::event(const std::string& text) {
  erase();
  std::fputs(text.c_str(), out_);
  if (text.empty() || text.back() != '\n') std::fputc('\n', out_);
  put_lines();
}

void LiveBlock::draw(const std::vector<std::string>& lines) {
  if (drawn_ > 0) std::fprintf(out_, "\x1b[%dF", drawn_);  // to the block's first line
  lines_ = lines;
  put_lines();
}

void LiveBlock::clear() {
  erase();
  lines_.clear();
  std::fflush(out_);
}

}  // namespace soltune::cli
