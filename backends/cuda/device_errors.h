// device_errors.h — the codes a kernel writes into its stream's error word when it finds bad data
// that only the device can see (an embedding id outside the vocab, a KV slot or block id outside
// the pool), and the message stream_synchronize turns each into. Included by host code and by
// kernels (plain C++, no runtime headers).
//
// The rule every kernel that validates follows: a validation kernel sets the word (first error
// wins, atomicCAS from 0) and the kernel that computes returns at once when the word is non-zero,
// so bad input writes nothing, as on the CPU backend. stream_synchronize reports the code as
// INVALID_ARGUMENT and clears it.
#ifndef HWINFER_BACKENDS_CUDA_DEVICE_ERRORS_H_
#define HWINFER_BACKENDS_CUDA_DEVICE_ERRORS_H_

#include <cstdint>

namespace hwinfer::gpu {

enum DeviceError : int32_t {
  kDeviceOk = 0,
  kEmbeddingIdOutOfRange = 1,  // embedding: ids[t] outside [0, vocab)
  kKvSlotOutOfRange = 2,       // kv_append: slot_mapping[t] >= num_blocks * block_size
  kContextLenOutOfRange = 3,   // attention: context_lens[s] < 0 or > max_blocks_per_seq*block_size
  kBlockIdOutOfRange = 4,      // attention: a block_tables entry in use outside [0, num_blocks)
  kQueryStartInvalid = 5,      // attention_prefill: query_start not increasing from 0 to n_tokens
  kContextLenWithoutRoom = 6,  // attention_decode_paged: context_lens[s] == 0 (no token to attend)
};

// The message for a code ("embedding: an id is outside [0, vocab)"); never NULL.
inline const char* device_error_message(int32_t code) {
  switch (code) {
    case kEmbeddingIdOutOfRange:
      return "embedding: an id in ids is outside [0, vocab)";
    case kKvSlotOutOfRange:
      return "kv_append: a slot in slot_mapping is outside [0, num_blocks * block_size)";
    case kContextLenOutOfRange:
      return "attention: a context length is negative or longer than the block table holds";
    case kBlockIdOutOfRange:
      return "attention: a block_tables entry in use is outside [0, num_blocks)";
    case kQueryStartInvalid:
      return "attention_prefill: query_start must rise from 0 to n_tokens";
    case kContextLenWithoutRoom:
      return "attention_decode_paged: a sequence has context length 0";
    default:
      return "a kernel reported an unknown data error";
  }
}

}  // namespace hwinfer::gpu

#endif  // HWINFER_BACKENDS_CUDA_DEVICE_ERRORS_H_
