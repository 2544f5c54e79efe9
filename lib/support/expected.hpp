// The one failure channel at library boundaries: a function that can fail
// for a reason its caller reports returns Expected<T> (a value or a
// Failure with the message), instead of optional<T> plus a std::string&
// out-parameter. Exceptions thrown inside a library and caught at its one
// boundary stay as they are (docs/ARCHITECTURE.md lists both).
//
// Not std::expected: clang 14 with libstdc++ 12 cannot compile <expected>
// (it needs C++23 concepts support clang 14 lacks). The names follow it, so
// a later switch is a rename.
#pragma once
#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace tessera {

// Why an operation failed: text for the caller to put after its own prefix
// (`path: error: cannot read: <message>`).
struct Failure {
  std::string message;
};

template <class T>
class [[nodiscard]] Expected {
public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Expected(Failure failure) : v_(std::in_place_index<1>, std::move(failure)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(value()); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  // The failure's message; only when !ok().
  const std::string& error() const {
    assert(!ok());
    return std::get<1>(v_).message;
  }
  // The value, or nullopt: for callers that only need to know whether it worked.
  std::optional<T> toOptional() && { return ok() ? std::optional<T>(std::move(value())) : std::nullopt; }

private:
  std::variant<T, Failure> v_;
};

template <>
class [[nodiscard]] Expected<void> {
public:
  Expected() = default;
  Expected(Failure failure) : failure_(std::move(failure)) {}

  bool ok() const { return !failure_; }
  explicit operator bool() const { return ok(); }
  const std::string& error() const {
    assert(!ok());
    return failure_->message;
  }

private:
  std::optional<Failure> failure_;
};

} // namespace tessera
