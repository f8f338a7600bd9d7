// attention_decode_avx2.cpp — attention_decode_body.h with its hot functions built for
// AVX2/FMA/F16C through a target attribute. Called only after cpu_can_use_avx2_kernels() said yes.
#define HWINFER_ATTENTION_DECODE_NS avx2
#define HWINFER_ATTENTION_DECODE_TARGET __attribute__((target("avx2,fma,f16c")))
#define HWINFER_ATTENTION_DECODE_F16C 1
#include "attention_decode_body.h"
