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

// SOLTUNE_FIELDS(Timing, median_us, reps) lists Timing's fields, each named as its member:
//   template <> inline constexpr auto kFields<Timing> = std::tuple{Field{"median_us", &Timing::median_us}, ...};
// (inside namespace soltune). The expansion below is the usual recursion of __VA_OPT__ (256 rescans:
// as many fields), standing in for the reflection C++20 lacks.
#define SOLTUNE_FIELDS(S, ...) \
  template <>              \
  inline constexpr auto kFields<S> = std::tuple { SOLTUNE_FIELDS_EXPAND(SOLTUNE_FIELDS_EACH(S, __VA_ARGS__)) }
#define SOLTUNE_FIELDS_EACH(S, m, ...) Field{#m, &S::m} __VA_OPT__(, SOLTUNE_FIELDS_AGAIN SOLTUNE_FIELDS_PARENS(S, __VA_ARGS__))
#define SOLTUNE_FIELDS_AGAIN() SOLTUNE_FIELDS_EACH
#define SOLTUNE_FIELDS_PARENS ()
#define SOLTUNE_FIELDS_EXPAND(...) SOLTUNE_FIELDS_EXPAND3(SOLTUNE_FIELDS_EXPAND3(SOLTUNE_FIELDS_EXPAND3(SOLTUNE_FIELDS_EXPAND3(__VA_ARGS__))))
#define SOLTUNE_FIELDS_EXPAND3(...) SOLTUNE_FIELDS_EXPAND2(SOLTUNE_FIELDS_EXPAND2(SOLTUNE_FIELDS_EXPAND2(SOLTUNE_FIELDS_EXPAND2(__VA_ARGS__))))
#define SOLTUNE_FIELDS_EXPAND2(...) SOLTUNE_FIELDS_EXPAND1(SOLTUNE_FIELDS_EXPAND1(SOLTUNE_FIELDS_EXPAND1(SOLTUNE_FIELDS_EXPAND1(__VA_ARGS__))))
#define SOLTUNE_FIELDS_EXPAND1(...) __VA_ARGS__

template <typename Fields, typename F>
constexpr void for_each_field(const Fields& fields, F&& f) {
  std::apply([&](const auto&... field) { (f(field), ...); }, fields);
}

}  // namespace soltune
