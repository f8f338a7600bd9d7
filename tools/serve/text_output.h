// text_output.h — a request's sampled tokens as the text its client is sent: whole UTF-8
// characters only (a character split over tokens goes out once complete), control tokens such as
// EOS shown as nothing, and the request's stop strings cut: text that could be the start of a stop
// string is held back until it is known not to be one; once a stop string appears, the text
// before it is the last sent and the request is done (finish reason "stop", as OpenAI's API).
#pragma once

#include <string>
#include <vector>

#include "hwinfer/tokenizer.h"

namespace hwinfer::serve {

class TextOutput {
 public:
  TextOutput(const Tokenizer& tokenizer, std::vector<std::string> stop_strings)
      : decoder_(tokenizer), stop_strings_(std::move(stop_strings)) {}

  // The text to send after |token| (maybe ""). Nothing more once stopped().
  std::string Push(int32_t token);
  // What is still held back, when the request ended another way (maybe "").
  std::string Finish();
  // A stop string was found.
  bool stopped() const { return stopped_; }

 private:
  StreamingDecoder decoder_;
  std::vector<std::string> stop_strings_;
  std::string held_;  // decoded, not sent: it may be the start of a stop string
  bool stopped_ = false;
};

}  // namespace hwinfer::serve
