// source_location.cpp — formats a SourceLocation the way compilers do ("file:line:col"), so
// editors and terminals can jump to it. Must stay a pure formatter: no I/O, no policy.
#include "hwinfer/config.h"

namespace hwinfer {

std::string SourceLocation::ToString() const {
  if (line <= 0) return file;
  std::string out = file + ":" + std::to_string(line);
  if (column > 0) out += ":" + std::to_string(column);
  return out;
}

}  // namespace hwinfer
