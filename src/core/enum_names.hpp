#pragma once
// An enum's names, listed once: the name of a value and the value of a name, for the enums that
// the knowledge base and the command line spell out. parse() throws Error naming the choices.
#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.hpp"

namespace soltune {

template <typename E, size_t N>
struct EnumNames {
  std::string_view what;  // "status", "audit verdict": the error's noun
  std::array<std::pair<E, std::string_view>, N> rows;

  std::string_view name(E v) const {
    for (const auto& [e, n] : rows)
      if (e == v) return n;
    return "?";
  }
  E parse(std::string_view s) const {
    for (const auto& [e, n] : rows)
      if (n == s) return e;
    std::string expected;
    for (size_t i = 0; i < N; ++i) expected += std::string(i ? (i + 1 == N ? " or " : ", ") : "") + std::string(rows[i].second);
    throw Error("unknown " + std::string(what) + " '" + std::string(s) + "' (expected " + expected + ")");
  }
};

}  // namespace soltune
