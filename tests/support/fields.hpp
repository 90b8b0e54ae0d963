#pragma once
// Tests over the field lists of core/fields.hpp: a value of its own for every field, and equality
// field by field, so that a test covers a field added to a list without being changed.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "core/fields.hpp"

namespace soltune::test {

// A value of its own for every field of S's list (core/fields.hpp), nested lists included.
template <typename S>
S distinct(int& i) {
  S s{};
  for_each_field(kFields<S>, [&](const auto& f) {
    using V = typename std::remove_cvref_t<decltype(f)>::Value;
    ++i;
    if constexpr (kHasFields<V>) s.*(f.member) = distinct<V>(i);
    else if constexpr (std::is_same_v<V, bool>) s.*(f.member) = !(s.*(f.member));
    else if constexpr (std::is_same_v<V, std::string>) s.*(f.member) = "value " + std::to_string(i);
    else if constexpr (std::is_floating_point_v<V>) s.*(f.member) = i + 0.25;
    else s.*(f.member) = static_cast<V>(i);
  });
  return s;
}
// Every field of S's list equal, named where one is not.
template <typename S>
void expect_fields_equal(const S& a, const S& b, const std::string& where) {
  for_each_field(kFields<S>, [&](const auto& f) {
    using V = typename std::remove_cvref_t<decltype(f)>::Value;
    if constexpr (kHasFields<V>) expect_fields_equal(a.*(f.member), b.*(f.member), where + "." + f.name);
    else EXPECT_EQ(a.*(f.member), b.*(f.member)) << where << "." << f.name;
  });
}

}  // namespace soltune::test
