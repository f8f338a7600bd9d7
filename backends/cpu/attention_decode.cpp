// attention_decode.cpp — see attention_decode.h: the baseline build of attention_decode_body.h and
// the run-time choice between it and the AVX2/FMA/F16C build (attention_decode_avx2.cpp).
#define HWINFER_ATTENTION_DECODE_NS portable
#include "attention_decode_body.h"

namespace hwinfer::cpu {

#if HWINFER_CPU_HAVE_AVX2_KERNEL
namespace avx2 {
hwinfer_error* attention_decode_paged(const AttentionDecodeProblem& problem, ThreadPool& pool);
}  // namespace avx2
#endif

hwinfer_error* attention_decode_paged(const AttentionDecodeProblem& problem, ThreadPool& pool,
                                      bool use_avx2) {
#if HWINFER_CPU_HAVE_AVX2_KERNEL
  if (use_avx2) return avx2::attention_decode_paged(problem, pool);
#else
  (void)use_avx2;
#endif
  return portable::attention_decode_paged(problem, pool);
}

}  // namespace hwinfer::cpu
