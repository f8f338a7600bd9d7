// scratch_buffer.h — a growable, 64-byte aligned byte buffer a stream keeps for the kernels it
// runs (e.g. a decode GEMV's quantized copy of x), so the hot path allocates only when a call
// needs more than any call before it.
//
// Not thread-safe: only the stream's worker thread (which runs one kernel at a time) may use it.
// Contents are garbage between calls; kernels must not keep pointers into it across calls.
#ifndef HWINFER_BACKENDS_CPU_SCRATCH_BUFFER_H_
#define HWINFER_BACKENDS_CPU_SCRATCH_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace hwinfer::cpu {

class ScratchBuffer {
 public:
  // At least |bytes| bytes, 64-byte aligned, valid until the next get(). Throws std::bad_alloc.
  void* get(size_t bytes) {
    if (bytes > capacity_) {
      data_.reset();
      capacity_ = 0;
      data_.reset(static_cast<uint8_t*>(::operator new (bytes, std::align_val_t{64})));
      capacity_ = bytes;
    }
    return data_.get();
  }

 private:
  struct AlignedDelete {
    void operator()(uint8_t* p) const { ::operator delete (p, std::align_val_t{64}); }
  };
  std::unique_ptr<uint8_t[], AlignedDelete> data_;
  size_t capacity_ = 0;
};

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_SCRATCH_BUFFER_H_
