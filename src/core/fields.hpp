#pragma once
// A plain struct's fields, listed once beside it: each a name and where it lives. The codecs of the
// formats that carry the struct (the worker's wire, ...) walk the list, so a field added to the
// list crosses every one of them, and a field left off crosses none.
#include <cstddef>
#include <tuple>
#include <type_traits>

namespace soltune {

template <typename S, typename V>
struct Field {
  const char* name;
  V S::*member;
  using Struct = S;
  using Value = V;
};

// kFields<S>: S's fields as a tuple of Field<S, ...>, specialized beside S. A struct without a
// list has nullptr.
template <typename S>
inline constexpr std::nullptr_t kFields = nullptr;
template <typename S>
inline constexpr bool kHasFields = !std::is_same_v<std::remove_cv_t<decltype(kFields<S>)>, std::nullptr_t>;

template <typename Fields, typename F>
constexpr void for_each_field(const Fields& fields, F&& f) {
  std::apply([&](const auto&... field) { (f(field), ...); }, fields);
}

}  // namespace soltune
