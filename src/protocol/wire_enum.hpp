// Enums off the wire. CUDA's enums are C's, where any number of the
// underlying type may be passed and CUDA refuses those no enumerator names;
// in C++ an enum holding a number beyond its enumerators' bit width is
// undefined. So an enum argument is checked as a number before it becomes
// an enum, and an enum field of a struct off the wire is read as a number
// until it has been checked.
#pragma once
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#include "protocol/codec.hpp"

namespace rgpu::proto {

// An enum argument as the number the client sent: any value of the enum's
// underlying type, until checked.
template <typename E>
  requires std::is_enum_v<E>
using EnumNumber = std::underlying_type_t<E>;

template <typename E>
  requires std::is_enum_v<E>
std::underlying_type_t<E> enum_number(const E& field) {
  std::underlying_type_t<E> n;
  std::memcpy(&n, &field, sizeof n);
  return n;
}

// Sets an enum field of a struct that goes to CUDA unchecked (CUDA judges
// it) to the client's number, which a C++ enum may not hold as a value.
template <typename E>
  requires std::is_enum_v<E>
void set_enum_number(E* field, std::underlying_type_t<E> n) {
  std::memcpy(field, &n, sizeof n);
}

// Whether n, an enum argument's number, lies in [lowest, highest].
template <typename E>
  requires std::is_enum_v<E>
bool enum_in_range(EnumNumber<E> n, E lowest, E highest) {
  return static_cast<int64_t>(n) >= static_cast<int64_t>(lowest) &&
         static_cast<int64_t>(n) <= static_cast<int64_t>(highest);
}

// Whether n, an enum argument's number, is one of `named`.
template <typename E>
  requires std::is_enum_v<E>
bool enum_is_one_of(EnumNumber<E> n, std::initializer_list<E> named) {
  for (E e : named)
    if (static_cast<int64_t>(n) == static_cast<int64_t>(e)) return true;
  return false;
}

// An enum argument whose enumerators lie in [lowest, highest]; any other
// number is malformed (the dispatcher answers cudaErrorInvalidValue).
template <typename E>
  requires std::is_enum_v<E>
E get_enum(Reader& r, int64_t lowest, int64_t highest) {
  const int64_t n = r.get<std::underlying_type_t<E>>();
  if (n < lowest || n > highest) throw DecodeError("enum argument out of range");
  return static_cast<E>(n);
}

}  // namespace rgpu::proto
