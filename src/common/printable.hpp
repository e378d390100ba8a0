// Text a peer chose, made safe to log: a newline or an escape sequence in a
// client's name must not forge a log line or drive the reader's terminal.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace rgpu {

// `text` with control characters, backslashes and non-ASCII bytes written as
// \xNN, cut to about `max` bytes of output ("..." marks a cut).
std::string printable(std::string_view text, size_t max = 128);

}  // namespace rgpu
