// SPDX-License-Identifier: MIT
/// @brief The one exception type of the engine. It says what failed and why, and whether the
/// cause was the caller's input (exit code 2 in the CLI) or the run itself (exit code 1).
#pragma once

#include <stdexcept>
#include <string>

namespace swapscope {

enum class ErrorKind {
  BadInput,  ///< a file, field, option or value given by the user is wrong
  Runtime,   ///< the input was fine but the work failed (I/O, device, allocation)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), m_kind(kind) {}
  ErrorKind kind() const noexcept { return m_kind; }

 private:
  ErrorKind m_kind;
};

/// Shorthand for the common case: a bad input with its message.
[[noreturn]] inline void throwBadInput(const std::string& message) {
  throw Error(ErrorKind::BadInput, message);
}

}  // namespace swapscope
