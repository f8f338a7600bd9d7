// text_output.cpp — see text_output.h.
#include "text_output.h"

#include <algorithm>

namespace hwinfer::serve {

std::string TextOutput::Push(int32_t token) {
  if (stopped_) return "";
  held_ += decoder_.Push(token);
  // The earliest complete stop string ends the text.
  size_t first = std::string::npos;
  for (const std::string& stop : stop_strings_) first = std::min(first, held_.find(stop));
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, first);
    held_.clear();
    return out;
  }
  // Hold back the longest end of the text that a stop string starts with.
  size_t keep = 0;
  for (const std::string& stop : stop_strings_) {
    for (size_t n = std::min(stop.size() - 1, held_.size()); n > keep; --n) {
      if (held_.compare(held_.size() - n, n, stop, 0, n) == 0) {
        keep = n;
        break;
      }
    }
  }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string TextOutput::Finish() {
  if (stopped_) return "";
  std::string out = held_ + decoder_.Flush();
  held_.clear();
  return out;
}

}  // namespace hwinfer::serve
