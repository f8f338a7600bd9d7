// kit_test_support.h — what the kit tests on fake backends share: a returned hwinfer_error as
// values, and a bandwidth-probe descriptor (the one kind every fake backend runs).
#ifndef HWINFER_TESTS_UNIT_KIT_KIT_TEST_SUPPORT_H_
#define HWINFER_TESTS_UNIT_KIT_KIT_TEST_SUPPORT_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "hwinfer/plugin.h"

namespace hwinfer::kit {

// The code and message of |error| (OK and "" for NULL); the error is destroyed.
inline std::pair<uint32_t, std::string> Take(hwinfer_error* error) {
  if (error == nullptr) return {HWINFER_STATUS_OK, ""};
  std::pair<uint32_t, std::string> taken{error->code, error->message};
  error->destroy(error);
  return taken;
}

// A rank-1 I8 view of |n| bytes of |buffer| (NULL: a view without buffer, as kernel_query sees).
inline hwinfer_tensor_view BytesView(hwinfer_buffer* buffer, int64_t n) {
  hwinfer_tensor_view view;
  std::memset(&view, 0, sizeof(view));
  view.struct_size = sizeof(view);
  view.dtype = HWINFER_DTYPE_I8;
  view.buffer = buffer;
  view.rank = 1;
  view.shape[0] = n;
  view.strides_bytes[0] = 1;
  return view;
}

// A one-iteration COPY probe of |n| bytes from |src| to |dst|.
inline hwinfer_bandwidth_probe_desc CopyProbe(hwinfer_buffer* src, hwinfer_buffer* dst, int64_t n) {
  hwinfer_bandwidth_probe_desc probe;
  std::memset(&probe, 0, sizeof(probe));
  probe.struct_size = sizeof(probe);
  probe.kind = HWINFER_KERNEL_BANDWIDTH_PROBE;
  probe.mode = HWINFER_PROBE_COPY;
  probe.iterations = 1;
  probe.size_bytes = static_cast<uint64_t>(n);
  probe.src = BytesView(src, n);
  probe.dst = BytesView(dst, n);
  return probe;
}

}  // namespace hwinfer::kit

#endif  // HWINFER_TESTS_UNIT_KIT_KIT_TEST_SUPPORT_H_
