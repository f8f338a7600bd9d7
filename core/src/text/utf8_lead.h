// utf8_lead.h — the length of a UTF-8 sequence as its first byte announces it, by its high
// nibble as llama.cpp reads it (a continuation byte or an ASCII byte stands alone; 0xf0-0xff
// announce four bytes). Internal to core/src/text: the tokenizer splits text into characters and
// the streaming decoder holds back incomplete ones with it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hwinfer::text {

inline size_t Utf8LengthFromLead(uint8_t lead) {
  if (lead < 0xc0) return 1;
  if (lead < 0xe0) return 2;
  return lead < 0xf0 ? 3 : 4;
}

}  // namespace hwinfer::text
