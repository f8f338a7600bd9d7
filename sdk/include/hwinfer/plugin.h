/*
 * hwinfer/plugin.h — THE contract between the hwinfer core and a backend plugin.
 *
 * A backend plugin is a shared library loaded with dlopen(RTLD_NOW | RTLD_LOCAL). It exports one
 * symbol, `hwinfer_plugin_query` (see HWINFER_PLUGIN_QUERY_SYMBOL), which hands the host a table
 * of function pointers (`hwinfer_plugin_api`). Everything else crosses this boundary through that
 * table.
 *
 * Rules this header keeps, and that every change to it must keep:
 *   - Plain C99, fixed-width types only. No C++ types, STL, exceptions or host enums cross the ABI.
 *     Enumerations are `uint32_t` fields with the explicit values #defined here; a value a side
 *     does not know means UNSUPPORTED, never undefined behaviour.
 *   - Every struct that crosses the ABI begins with `uint32_t struct_size` (= sizeof as compiled by
 *     the side that filled it). The reader only looks at fields that lie inside `struct_size`;
 *     fields past it read as "not provided" (zero / NULL). The data layouts of quantized blocks
 *     (hwinfer_block_q8_0, hwinfer_block_q4_0) are file formats, not ABI structs, and carry none.
 *   - Tables are APPEND-ONLY. New fields and function slots go at the end and bump the minor
 *     version. Nothing is ever inserted, reordered, retyped or removed within one major version;
 *     such a change needs a new major. A NULL function slot means "not provided".
 *   - The host accepts a plugin of the same major and ANY minor, older or newer.
 *   - Handles are opaque pointers owned by the plugin.
 *   - Errors are values: every fallible call returns `hwinfer_error*`, NULL on success. The error
 *     carries a status code and a message; the CALLER owns it and frees it with err->destroy(err).
 *     A plugin never aborts, exits, throws or prints; it reports through errors and the host's log
 *     callback.
 *
 * Threading, unless a function says otherwise:
 *   - plugin-level and device-level calls (alloc, free, create, destroy, query) may be made from
 * any thread concurrently;
 *   - enqueueing work on one stream must be serialised by the caller (one thread at a time per
 *     stream); different streams may be used from different threads concurrently;
 *   - a handle must not be destroyed while another thread uses it or while queued work uses it.
 */
#ifndef HWINFER_PLUGIN_H_
#define HWINFER_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------------
 * Versioning
 * --------------------------------------------------------------------------------------------- */

/* Bumped only for removals or type changes (incompatible). */
#define HWINFER_ABI_MAJOR 1u
/* Bumped for every appended field or function slot (compatible).
 *   1.1: HWINFER_KERNEL_ROPE_KV_APPEND (kernel_table.rope_kv_append); stream capture into graphs
 *        (hwinfer_plugin_api.stream_begin_capture .. graph_destroy).
 *   1.2: weight dtypes Q4_1, Q5_0, Q5_1, Q2_K .. Q6_K and IQ4_NL for matmul_quantized and
 *        embedding (no struct or table changes; a 1.1 plugin answers UNSUPPORTED for them).
 *   1.3: HWINFER_KERNEL_ARGMAX (kernel_table.argmax): greedy token choice on the device.
 *   1.4: device collectives (hwinfer_plugin_api.comm_create_id .. comm_destroy): an all-reduce
 *        of F32 values across the devices of several ranks, enqueued on a stream. */
#define HWINFER_ABI_MINOR 4u

/* The one exported symbol. Declared with HWINFER_PLUGIN_EXPORT in the plugin. */
#define HWINFER_PLUGIN_QUERY_SYMBOL "hwinfer_plugin_query"

#if defined(_WIN32)
#define HWINFER_PLUGIN_EXPORT __declspec(dllexport)
#else
#define HWINFER_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ------------------------------------------------------------------------------------------------
 * Status codes and errors
 * --------------------------------------------------------------------------------------------- */

/* When to use each code:
 *   INVALID_ARGUMENT    the caller passed something malformed (NULL handle, bad shape, bad dtype
 *                       combination); retrying the same call fails the same way.
 *   UNSUPPORTED         the request is well-formed but this plugin/device cannot do it (unknown
 *                       enum value, kernel variant not implemented, ABI major not offered).
 *   OUT_OF_MEMORY       an allocation failed; freeing memory and retrying may succeed.
 *   UNAVAILABLE         a resource is not there right now (no device, driver missing); may retry.
 *   FAILED_PRECONDITION the object is in the wrong state for the call (e.g. mapping a device-only
 *                       buffer, destroying a stream with pending work from another thread).
 *   OUT_OF_RANGE        an offset/size/ordinal lies outside its object.
 *   INTERNAL            a bug or a driver failure the caller cannot fix. */
#define HWINFER_STATUS_OK 0u
#define HWINFER_STATUS_INVALID_ARGUMENT 1u
#define HWINFER_STATUS_UNSUPPORTED 2u
#define HWINFER_STATUS_OUT_OF_MEMORY 3u
#define HWINFER_STATUS_UNAVAILABLE 4u
#define HWINFER_STATUS_FAILED_PRECONDITION 5u
#define HWINFER_STATUS_OUT_OF_RANGE 6u
#define HWINFER_STATUS_INTERNAL 7u

/* An error returned by any fallible call. Allocated by whoever created it (usually the plugin);
 * the receiver owns it and must call err->destroy(err) exactly once. `message` is a NUL-terminated
 * UTF-8 string valid until destroy. `destroy` is never NULL. */
typedef struct hwinfer_error {
  uint32_t struct_size;
  uint32_t code; /* HWINFER_STATUS_* (never OK) */
  const char* message;
  void (*destroy)(struct hwinfer_error* self);
} hwinfer_error;

/* ------------------------------------------------------------------------------------------------
 * Host services handed to the plugin
 * --------------------------------------------------------------------------------------------- */

#define HWINFER_LOG_DEBUG 0u
#define HWINFER_LOG_INFO 1u
#define HWINFER_LOG_WARNING 2u
#define HWINFER_LOG_ERROR 3u

/* Provided by the host; valid from hwinfer_plugin_query until plugin_destroy returns. The plugin
 * may keep the pointer. All callbacks are thread-safe and may be called from any plugin thread. */
typedef struct hwinfer_host_api {
  uint32_t struct_size;
  uint32_t abi_major; /* host's HWINFER_ABI_MAJOR */
  uint32_t abi_minor; /* host's HWINFER_ABI_MINOR */
  void* host_context; /* passed back as the first argument of every callback */
  /* Logs one message. |plugin_name| and |message| are NUL-terminated and copied by the host. */
  void (*log)(void* host_context, uint32_t level, const char* plugin_name, const char* message);
} hwinfer_host_api;

/* A key=value option, both NUL-terminated; from the YAML config (`options:` maps), stringified. */
typedef struct hwinfer_option {
  uint32_t struct_size;
  const char* key;
  const char* value;
} hwinfer_option;

/* ------------------------------------------------------------------------------------------------
 * Opaque handles (all owned by the plugin)
 * --------------------------------------------------------------------------------------------- */

typedef struct hwinfer_plugin hwinfer_plugin; /* one initialised plugin instance */
typedef struct hwinfer_device hwinfer_device; /* one opened device */
typedef struct hwinfer_buffer hwinfer_buffer; /* one memory allocation on a device */
typedef struct hwinfer_stream hwinfer_stream; /* an in-order queue of copies and kernels */
typedef struct hwinfer_event hwinfer_event;   /* a point in a stream; carries a device timestamp */
typedef struct hwinfer_graph hwinfer_graph;   /* captured stream work, replayable (ABI 1.1) */
typedef struct hwinfer_comm hwinfer_comm;     /* one rank's end of a communicator (ABI 1.4) */

/* Names one communicator to every rank that joins it (ABI 1.4): made once by comm_create_id, sent
 * to the other ranks by the host (any transport), passed to comm_init on every rank. Opaque. */
#define HWINFER_COMM_ID_BYTES 128u
typedef struct hwinfer_comm_id {
  uint8_t bytes[HWINFER_COMM_ID_BYTES];
} hwinfer_comm_id;

/* ------------------------------------------------------------------------------------------------
 * Data types and quantized block layouts
 * --------------------------------------------------------------------------------------------- */

/* Values are GGML's type ids, so GGUF tensor types map one to one. */
#define HWINFER_DTYPE_F32 0u
#define HWINFER_DTYPE_F16 1u
#define HWINFER_DTYPE_Q4_0 2u
#define HWINFER_DTYPE_Q4_1 3u /* ABI 1.2, as are the five K-quants and IQ4_NL */
#define HWINFER_DTYPE_Q5_0 6u
#define HWINFER_DTYPE_Q5_1 7u
#define HWINFER_DTYPE_Q8_0 8u
#define HWINFER_DTYPE_Q2_K 10u
#define HWINFER_DTYPE_Q3_K 11u
#define HWINFER_DTYPE_Q4_K 12u
#define HWINFER_DTYPE_Q5_K 13u
#define HWINFER_DTYPE_Q6_K 14u
#define HWINFER_DTYPE_IQ4_NL 20u
#define HWINFER_DTYPE_I8 24u
#define HWINFER_DTYPE_I32 26u
#define HWINFER_DTYPE_BF16 30u

/* Q8_0: blocks of 32 values along the innermost dimension. value[i] = d * qs[i].
 * `d` is an IEEE binary16 stored as raw bits. 34 bytes, no padding (as in GGUF). */
#define HWINFER_QK8_0 32
typedef struct hwinfer_block_q8_0 {
  uint16_t d;
  int8_t qs[HWINFER_QK8_0];
} hwinfer_block_q8_0;

/* Q4_0: blocks of 32 values. qs[j] holds value j in its low nibble and value j+16 in its high
 * nibble; value = d * (nibble - 8). `d` is binary16 raw bits. 18 bytes, no padding (as in GGUF). */
#define HWINFER_QK4_0 32
typedef struct hwinfer_block_q4_0 {
  uint16_t d;
  uint8_t qs[HWINFER_QK4_0 / 2];
} hwinfer_block_q4_0;

#define HWINFER_Q8_0_BLOCK_BYTES 34u
#define HWINFER_Q4_0_BLOCK_BYTES 18u

/* Q4_1: blocks of 32; nibbles as Q4_0; value = d * nibble + m. 20 bytes. */
#define HWINFER_QK4_1 32
typedef struct hwinfer_block_q4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[HWINFER_QK4_1 / 2];
} hwinfer_block_q4_1;

/* Q5_0: blocks of 32; the low four bits of value j (and j+16) as Q4_0's nibbles, the fifth bit of
 * value j in bit j of the little-endian uint32 qh; value = d * (q - 16), q in 0..31. 22 bytes. */
#define HWINFER_QK5_0 32
typedef struct hwinfer_block_q5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[HWINFER_QK5_0 / 2];
} hwinfer_block_q5_0;

/* Q5_1: as Q5_0 with a min: value = d * q + m, q in 0..31. 24 bytes. */
#define HWINFER_QK5_1 32
typedef struct hwinfer_block_q5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[HWINFER_QK5_1 / 2];
} hwinfer_block_q5_1;

/* IQ4_NL: blocks of 32; nibbles as Q4_0; value = d * hwinfer_iq4nl_values[nibble]. 18 bytes. */
#define HWINFER_QK4_NL 32
typedef struct hwinfer_block_iq4_nl {
  uint16_t d;
  uint8_t qs[HWINFER_QK4_NL / 2];
} hwinfer_block_iq4_nl;
#define HWINFER_IQ4_NL_VALUES \
  { -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113 }

/* K-quants: super-blocks of 256 values along the innermost dimension.
 *
 * Q2_K: 16 sub-blocks of 16. scales[s] = scale (low nibble) | min (high nibble) of sub-block s.
 *   Value i: within each half of 128 (h = i / 128), byte qs[32 h + i % 32] holds, in bits
 *   2 (i % 128 / 32) .. +1, the 2-bit q of value i; value = d * scale * q - dmin * min. 84 bytes.
 */
#define HWINFER_QK_K 256
typedef struct hwinfer_block_q2_k {
  uint8_t scales[HWINFER_QK_K / 16];
  uint8_t qs[HWINFER_QK_K / 4];
  uint16_t d;
  uint16_t dmin;
} hwinfer_block_q2_k;

/* Q3_K: 16 sub-blocks of 16, 6-bit scales stored with a bias of 32: scale s has its low four bits
 *   in scales[s % 8] (low nibble for s < 8, high nibble for s >= 8) and its high two bits in bits
 *   2 (s / 4) .. +1 of scales[8 + s % 4]. The 2-bit low part of q as Q2_K's; the third bit of
 *   value i in bit (i / 32) of hmask[i % 32]; value = d * (scale - 32) * (q2 - (bit ? 0 : 4)).
 *   110 bytes. */
typedef struct hwinfer_block_q3_k {
  uint8_t hmask[HWINFER_QK_K / 8];
  uint8_t qs[HWINFER_QK_K / 4];
  uint8_t scales[12];
  uint16_t d;
} hwinfer_block_q3_k;

/* Q4_K: 8 sub-blocks of 32, 6-bit scales and mins in scales[12]: for s < 4, scale = scales[s] &
 *   63 and min = scales[s + 4] & 63; for s >= 4, scale = (scales[s + 4] & 15) | (scales[s - 4] >>
 *   6) << 4 and min = (scales[s + 4] >> 4) | (scales[s] >> 6) << 4. Value i: within each chunk of
 *   64 (c = i / 64), byte qs[32 c + i % 32] holds it in its low nibble for i % 64 < 32, else in
 *   its high nibble; value = d * scale * q - dmin * min (sub-block i / 32). 144 bytes. */
typedef struct hwinfer_block_q4_k {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[HWINFER_QK_K / 2];
} hwinfer_block_q4_k;

/* Q5_K: as Q4_K, with the fifth bit of value i in bit (i / 32) of qh[i % 32]. 176 bytes. */
typedef struct hwinfer_block_q5_k {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[HWINFER_QK_K / 8];
  uint8_t qs[HWINFER_QK_K / 2];
} hwinfer_block_q5_k;

/* Q6_K: 16 sub-blocks of 16 with int8 scales. Value i: h = i / 128, r = i % 128, l = r % 32,
 *   quarter t = r / 32. The low four bits are in ql[64 h + l + 32 (t & 1)] (low nibble for t < 2,
 *   high for t >= 2), the high two bits in bits 2 t .. +1 of qh[32 h + l];
 *   value = d * scales[i / 16] * (q - 32). 210 bytes. */
typedef struct hwinfer_block_q6_k {
  uint8_t ql[HWINFER_QK_K / 2];
  uint8_t qh[HWINFER_QK_K / 4];
  int8_t scales[HWINFER_QK_K / 16];
  uint16_t d;
} hwinfer_block_q6_k;

#define HWINFER_Q4_1_BLOCK_BYTES 20u
#define HWINFER_Q5_0_BLOCK_BYTES 22u
#define HWINFER_Q5_1_BLOCK_BYTES 24u
#define HWINFER_IQ4_NL_BLOCK_BYTES 18u
#define HWINFER_Q2_K_BLOCK_BYTES 84u
#define HWINFER_Q3_K_BLOCK_BYTES 110u
#define HWINFER_Q4_K_BLOCK_BYTES 144u
#define HWINFER_Q5_K_BLOCK_BYTES 176u
#define HWINFER_Q6_K_BLOCK_BYTES 210u

/* Values per block of a block-quantized dtype above (32 or 256); 0 for every other dtype. */
static inline uint32_t hwinfer_dtype_block_values(uint32_t dtype) {
  switch (dtype) {
    case HWINFER_DTYPE_Q4_0:
    case HWINFER_DTYPE_Q4_1:
    case HWINFER_DTYPE_Q5_0:
    case HWINFER_DTYPE_Q5_1:
    case HWINFER_DTYPE_Q8_0:
    case HWINFER_DTYPE_IQ4_NL:
      return 32u;
    case HWINFER_DTYPE_Q2_K:
    case HWINFER_DTYPE_Q3_K:
    case HWINFER_DTYPE_Q4_K:
    case HWINFER_DTYPE_Q5_K:
    case HWINFER_DTYPE_Q6_K:
      return 256u;
    default:
      return 0u;
  }
}

/* Bytes per block of a block-quantized dtype above; 0 for every other dtype. */
static inline uint32_t hwinfer_dtype_block_bytes(uint32_t dtype) {
  switch (dtype) {
    case HWINFER_DTYPE_Q4_0:
      return HWINFER_Q4_0_BLOCK_BYTES;
    case HWINFER_DTYPE_Q4_1:
      return HWINFER_Q4_1_BLOCK_BYTES;
    case HWINFER_DTYPE_Q5_0:
      return HWINFER_Q5_0_BLOCK_BYTES;
    case HWINFER_DTYPE_Q5_1:
      return HWINFER_Q5_1_BLOCK_BYTES;
    case HWINFER_DTYPE_Q8_0:
      return HWINFER_Q8_0_BLOCK_BYTES;
    case HWINFER_DTYPE_IQ4_NL:
      return HWINFER_IQ4_NL_BLOCK_BYTES;
    case HWINFER_DTYPE_Q2_K:
      return HWINFER_Q2_K_BLOCK_BYTES;
    case HWINFER_DTYPE_Q3_K:
      return HWINFER_Q3_K_BLOCK_BYTES;
    case HWINFER_DTYPE_Q4_K:
      return HWINFER_Q4_K_BLOCK_BYTES;
    case HWINFER_DTYPE_Q5_K:
      return HWINFER_Q5_K_BLOCK_BYTES;
    case HWINFER_DTYPE_Q6_K:
      return HWINFER_Q6_K_BLOCK_BYTES;
    default:
      return 0u;
  }
}

/* ------------------------------------------------------------------------------------------------
 * Tensor views
 * --------------------------------------------------------------------------------------------- */

#define HWINFER_MAX_RANK 4

/* A strided view into a buffer. shape[0] is the OUTERMOST dimension, shape[rank-1] the innermost
 * (row-major, like numpy; note GGUF lists dimensions innermost first). strides_bytes[i] is the
 * distance in bytes between consecutive indices of dimension i. For quantized dtypes the innermost
 * dimension counts VALUES, must be a multiple of the block size, must be contiguous, and
 * strides_bytes[rank-1] is 0 (blocks are packed); outer strides are in bytes.
 * A view whose `buffer` is NULL means "not given" (used by optional kernel operands). */
typedef struct hwinfer_tensor_view {
  uint32_t struct_size;
  uint32_t dtype; /* HWINFER_DTYPE_* */
  hwinfer_buffer* buffer;
  uint64_t offset_bytes;
  uint32_t rank;
  uint32_t reserved0;
  int64_t shape[HWINFER_MAX_RANK];
  int64_t strides_bytes[HWINFER_MAX_RANK];
} hwinfer_tensor_view;

/* ------------------------------------------------------------------------------------------------
 * Device identity and properties
 * --------------------------------------------------------------------------------------------- */

#define HWINFER_DEVICE_TYPE_OTHER 0u
#define HWINFER_DEVICE_TYPE_CPU 1u
#define HWINFER_DEVICE_TYPE_DISCRETE_GPU 2u
#define HWINFER_DEVICE_TYPE_INTEGRATED_GPU 3u
#define HWINFER_DEVICE_TYPE_VIRTUAL 4u /* simulated or software-emulated */

/* Filled by device_get_info. The caller zeroes the struct and sets struct_size; the plugin writes
 * only fields that lie within the caller's struct_size. Zero means "unknown" for every number. */
typedef struct hwinfer_device_info {
  uint32_t struct_size;
  uint32_t device_type; /* HWINFER_DEVICE_TYPE_* */
  char name[128];       /* "AMD EPYC 7B13", "NVIDIA H200" */
  char vendor[64];      /* "NVIDIA", "AMD", "GenuineIntel" */
  char driver[128];     /* driver name and version, free text */
  uint8_t uuid[16];     /* stable across plugins for one physical device; all-zero = none */
  char pci_address[32]; /* "0000:65:00.0" (domain:bus:device.function) or "" */
  uint64_t memory_total_bytes;
  uint64_t memory_free_bytes;
  uint64_t max_allocation_bytes;
  uint64_t alignment_bytes; /* every buffer the device returns is aligned at least to this */
  uint32_t compute_units;   /* SMs, CUs, or CPU threads the plugin uses */
  uint32_t reserved0;
  double spec_peak_bandwidth_bytes_per_s; /* vendor spec; 0 = unknown */
  double spec_peak_flops_f32;
  double spec_peak_flops_f16;
  double spec_peak_flops_bf16;
  double spec_peak_flops_int8; /* ops/s */
} hwinfer_device_info;

/* ------------------------------------------------------------------------------------------------
 * Memory
 * --------------------------------------------------------------------------------------------- */

#define HWINFER_MEMORY_DEVICE 0u       /* device-local; not mappable on discrete devices */
#define HWINFER_MEMORY_HOST_VISIBLE 1u /* pinned host memory the device can reach; mappable */

/* ------------------------------------------------------------------------------------------------
 * Kernels: capability answers
 * --------------------------------------------------------------------------------------------- */

#define HWINFER_KERNEL_SUPPORTED 1u
#define HWINFER_KERNEL_UNSUPPORTED 0u

/* Filled by kernel_query. The caller zeroes it and sets struct_size. */
typedef struct hwinfer_kernel_support {
  uint32_t struct_size;
  uint32_t supported; /* HWINFER_KERNEL_SUPPORTED / _UNSUPPORTED */
  char reason[256];   /* why not, NUL-terminated; may be "" when supported */
} hwinfer_kernel_support;

/* ------------------------------------------------------------------------------------------------
 * Kernel descriptors. Each begins with {struct_size, kind}, so a pointer to any of them can be
 * passed as `const hwinfer_kernel_desc*` to kernel_query. Every tensor operand is a view; shapes
 * in the comments use the names of the scalar fields. Kernels are enqueued on a stream and are
 * asynchronous; their views' buffers must stay alive until the stream has passed them.
 * Unless a kernel says otherwise, outputs must not alias inputs.
 * --------------------------------------------------------------------------------------------- */

#define HWINFER_KERNEL_GEMM 1u
#define HWINFER_KERNEL_MATMUL_QUANTIZED 2u
#define HWINFER_KERNEL_ATTENTION_PREFILL 3u
#define HWINFER_KERNEL_ATTENTION_DECODE_PAGED 4u
#define HWINFER_KERNEL_KV_APPEND 5u
#define HWINFER_KERNEL_RMS_NORM 6u
#define HWINFER_KERNEL_ROPE 7u
#define HWINFER_KERNEL_SILU_MUL 8u
#define HWINFER_KERNEL_EMBEDDING 9u
#define HWINFER_KERNEL_BANDWIDTH_PROBE 10u
#define HWINFER_KERNEL_ROPE_KV_APPEND 11u /* ABI 1.1 */
#define HWINFER_KERNEL_ARGMAX 12u         /* ABI 1.3 */

/* The common prefix of every descriptor. */
typedef struct hwinfer_kernel_desc {
  uint32_t struct_size;
  uint32_t kind; /* HWINFER_KERNEL_* */
} hwinfer_kernel_desc;

/* GEMM / GEMV:  c[m,n] = alpha * sum_k a[m,k] * B[k,n] + beta * c[m,n]
 *   a: [m, k]            dtype F32 | F16 | BF16   (activations)
 *   b: [k, n] or, when b_transposed, [n, k]       dtype F32 | F16 | BF16   (weights; GGUF
 *                        stores a linear layer as [n_out, n_in], i.e. b_transposed = 1)
 *   c: [m, n]            dtype F32 | F16 | BF16
 * m == 1 is the GEMV (decode) case; a backend may pick a different algorithm for it.
 * Accumulation is at least F32. With BF16 weights a backend may round a to BF16 first and
 * multiply in the weights' own precision (as vdpbf16ps and bf16 tensor cores do); the
 * conformance suite allows for it. beta == 0 means c is write-only (its old contents, even NaN,
 * are ignored). */
typedef struct hwinfer_gemm_desc {
  uint32_t struct_size;
  uint32_t kind; /* HWINFER_KERNEL_GEMM */
  int64_t m, n, k;
  uint32_t b_transposed; /* 0 or 1 */
  uint32_t reserved0;
  float alpha;
  float beta;
  hwinfer_tensor_view a;
  hwinfer_tensor_view b;
  hwinfer_tensor_view c;
} hwinfer_gemm_desc;

/* Quantized matmul:  y[m,n] = sum_k x[m,k] * dequant(w)[n,k]
 *   x: [m, k] F32 (a backend may quantize it to 8-bit blocks internally, as llama.cpp does)
 *   w: [n, k] any block-quantized dtype above, blocks packed along k (k a multiple of the block),
 *      GGUF layout; a backend answers UNSUPPORTED, naming the dtype, for one it does not have
 *   y: [m, n] F32 */
typedef struct hwinfer_matmul_quantized_desc {
  uint32_t struct_size;
  uint32_t kind; /* HWINFER_KERNEL_MATMUL_QUANTIZED */
  int64_t m, n, k;
  hwinfer_tensor_view x;
  hwinfer_tensor_view w;
  hwinfer_tensor_view y;
} hwinfer_matmul_quantized_desc;

/* Paged KV-cache layout (shared by the three attention/KV kernels below):
 *   k_cache, v_cache: [num_blocks, block_size, n_kv_heads, head_dim]  F16 | I8
 *   k_scales, v_scales: [num_blocks, n_kv_heads] F32, one scale per block and head, only for I8
 *                       (value = scale * int8); NULL buffer for F16
 *   block_tables: [n_seqs, max_blocks_per_seq] I32 block ids; entries past a sequence's length
 *                 are ignored
 *   context_lens: [n_seqs] I32 tokens of each sequence held in the cache
 * Token t of sequence s lives in block block_tables[s][t / block_size] at row t % block_size. */

/* Fused attention prefill (causal, GQA/MQA), never materialising the full score matrix.
 * The new tokens of n_seqs sequences are packed along dimension 0:
 *   q:   [n_tokens, n_heads, head_dim]     F32 | F16
 *   k,v: [n_tokens, n_kv_heads, head_dim]  F32 | F16   (the new tokens' keys/values)
 *   out: [n_tokens, n_heads, head_dim]     same dtype as q
 *   query_start: [n_seqs + 1] I32, sequence s owns tokens query_start[s] .. query_start[s+1]-1
 * Optional cached prefix (chunked prefill): when k_cache.buffer != NULL, sequence s first attends
 * to the context_lens[s] tokens already in the paged cache, then causally to its new tokens.
 * Head h of q uses KV head h / (n_heads / n_kv_heads). scale is usually 1/sqrt(head_dim). */
typedef struct hwinfer_attention_prefill_desc {
  uint32_t struct_size;
  uint32_t kind; /* HWINFER_KERNEL_ATTENTION_PREFILL */
  int64_t n_tokens, n_seqs, n_heads, n_kv_heads, head_dim;
  int64_t block_size; /* only with a cached prefix */
  float scale;
  uint32_t causal; /* 1 = causal (decoders); 0 = full */
  hwinfer_tensor_view q;
  hwinfer_tensor_view k;
  hwinfer_tensor_view v;
  hwinfer_tensor_view out;
  hwinfer_tensor_view query_start;
  hwinfer_tensor_view k_cache;
  hwinfer_tensor_view v_cache;
  hwinfer_tensor_view k_scales;
  hwinfer_tensor_view v_scales;
  hwinfer_tensor_view block_tables;
  hwinfer_tensor_view context_lens;
} hwinfer_attention_prefill_desc;

/* Paged decode attention: one new query token per sequence against its paged KV history
 * (context_lens[s] tokens, the new token's K/V already appended).
 *   q:   [n_seqs, n_heads, head_dim] F32 | F16
 *   out: [n_seqs, n_heads, head_dim] same dtype as q
 *   plus the paged layout above. A backend may split the KV length across workers
 *   (flash-decoding); the result must not depend on how it splits beyond rounding. */
typedef struct hwinfer_attention_decode_paged_desc {
  uint32_t struct_size;
  uint32_t kind; /* HWINFER_KERNEL_ATTENTION_DECODE_PAGED */
  int64_t n_seqs, n_heads, n_kv_heads, head_dim;
  int64_t block_size, max_blocks_per_seq;
  float scale;
  uint32_t reserved0;
  hwinfer_tensor_view q;
  hwinfer_tensor_view out;
  hwinfer_tensor_view k_cache;
  hwinfer_tensor_view v_cache;
  hwinfer_tensor_view k_scales;
  hwinfer_tensor_view v_scales;
  hwinfer_tensor_view block_tables;
  hwinfer_tensor_view context_lens;
} hwinfer_attention_decode_paged_desc;

/* KV append: writes the keys/values of n_tokens new tokens into the paged pools.
 *   k, v: [n_tokens, n_kv_heads, head_dim] F32 | F16
 *   slot_mapping: [n_tokens] I32, slot = block_id * block_size + row; a negative slot skips the
 *                 token (padding)
 *   k_cache, v_cache (+ k_scales, v_scales for I8): the paged layout above.
 * For I8 pools the kernel owns the per-(block, head) scale: when a token's absolute maximum does
 * not fit the block's current scale, the block's existing rows are requantized to the larger scale.
 */
typedef struct hwinfer_kv_append_desc {
  uint32_t struct_size;
  uint32_t kind; /* HWINFER_KERNEL_KV_APPEND */
  int64_t n_tokens, n_kv_heads, head_dim, block_size, num_blocks;
  hwinfer_tensor_view k;
  hwinfer_tensor_view v;
  hwinfer_tensor_view slot_mapping;
  hwinfer_tensor_view k_cache;
  hwinfer_tensor_view v_cache;
  hwinfer_tensor_view k_scales;
  hwinfer_tensor_view v_scales;
} hwinfer_kv_append_desc;

/* RMSNorm, optionally fused with the residual add:
 *   when residual.buffer != NULL:  residual[t,:] += x[t,:]; h = residual[t,:]   (in place)
 *   otherwise:                     h = x[t,:]
 *   out[t,i] = h[i] / sqrt(mean(h^2) + eps) * weight[i]
 *   x, out, residual: [n_tokens, dim] F32 | F16;  weight: [dim] F32 */
typedef struct hwinfer_rms_norm_desc {
  uint32_t struct_size;
  uint32_t kind; /* HWINFER_KERNEL_RMS_NORM */
  int64_t n_tokens, dim;
  float eps;
  uint32_t reserved0;
  hwinfer_tensor_view x;
  hwinfer_tensor_view residual;
  hwinfer_tensor_view weight;
  hwinfer_tensor_view out;
} hwinfer_rms_norm_desc;

#define HWINFER_ROPE_NORMAL 0u /* rotate pairs (2i, 2i+1), as Llama/GGUF */
#define HWINFER_ROPE_NEOX 1u   /* rotate pairs (i, i + rotary_dim/2), as GPT-NeoX/Qwen */

/* Rotary position embedding, applied IN PLACE to q and k:
 *   q: [n_tokens, n_heads, head_dim], k: [n_tokens, n_kv_heads, head_dim]  F32 | F16
 *   positions: [n_tokens] I32
 * theta_i = positions[t] * theta_base^(-2i / rotary_dim), for i < rotary_dim/2; dimensions past
 * rotary_dim are left as they are. k.buffer may be NULL (q only). */
typedef struct hwinfer_rope_desc {
  uint32_t struct_size;
  uint32_t kind; /* HWINFER_KERNEL_ROPE */
  int64_t n_tokens, n_heads, n_kv_heads, head_dim, rotary_dim;
  float theta_base;
  uint32_t mode; /* HWINFER_ROPE_* */
  hwinfer_tensor_view q;
  hwinfer_tensor_view k;
  hwinfer_tensor_view positions;
} hwinfer_rope_desc;

/* RoPE fused with the KV append (ABI 1.1): the same result as HWINFER_KERNEL_ROPE on (q, k)
 * followed by HWINFER_KERNEL_KV_APPEND of the ROTATED k and of v, in one kernel:
 *   q: [n_tokens, n_heads, head_dim], k, v: [n_tokens, n_kv_heads, head_dim]  F32 | F16
 *   positions, slot_mapping: [n_tokens] I32
 *   q and k are rotated IN PLACE (attention over the new tokens reads them afterwards); the rotated
 *   k and v go into the paged pools (layout, slot and I8 scale rules as KV_APPEND).
 * Every field means what it means in hwinfer_rope_desc and hwinfer_kv_append_desc; a backend must
 * accept exactly the descriptors whose two halves those kernels accept. */
typedef struct hwinfer_rope_kv_append_desc {
  uint32_t struct_size;
  uint32_t kind; /* HWINFER_KERNEL_ROPE_KV_APPEND */
  int64_t n_tokens, n_heads, n_kv_heads, head_dim, rotary_dim;
  int64_t block_size, num_blocks;
  float theta_base;
  uint32_t mode; /* HWINFER_ROPE_* */
  hwinfer_tensor_view q;
  hwinfer_tensor_view k;
  hwinfer_tensor_view v;
  hwinfer_tensor_view positions;
  hwinfer_tensor_view slot_mapping;
  hwinfer_tensor_view k_cache;
  hwinfer_tensor_view v_cache;
  hwinfer_tensor_view k_scales;
  hwinfer_tensor_view v_scales;
} hwinfer_rope_kv_append_desc;

/* SiLU-gated activation: out[t,i] = silu(gate[t,i]) * up[t,i], silu(x) = x / (1 + exp(-x))
 *   gate, up, out: [n_tokens, dim] F32 | F16 */
typedef struct hwinfer_silu_mul_desc {
  uint32_t struct_size;
  uint32_t kind; /* HWINFER_KERNEL_SILU_MUL */
  int64_t n_tokens, dim;
  hwinfer_tensor_view gate;
  hwinfer_tensor_view up;
  hwinfer_tensor_view out;
} hwinfer_silu_mul_desc;

/* Embedding lookup: out[t,:] = dequant(table[ids[t], :])
 *   table: [vocab, dim] F32 | F16 | BF16 | any block-quantized dtype;  ids: [n_tokens] I32;  out:
 * [n_tokens, dim] F32. An id outside [0, vocab) is an error (INVALID_ARGUMENT from the stream's
 * next sync). */
typedef struct hwinfer_embedding_desc {
  uint32_t struct_size;
  uint32_t kind; /* HWINFER_KERNEL_EMBEDDING */
  int64_t n_tokens, vocab, dim;
  hwinfer_tensor_view table;
  hwinfer_tensor_view ids;
  hwinfer_tensor_view out;
} hwinfer_embedding_desc;

#define HWINFER_PROBE_READ 0u  /* read src `iterations` times; bytes = size * iterations */
#define HWINFER_PROBE_COPY 1u  /* copy src to dst `iterations` times; bytes = 2 * size * iter. */
#define HWINFER_PROBE_WRITE 2u /* write dst `iterations` times; bytes = size * iterations */

/* Bandwidth probe: moves memory as fast as the device can, so the host can time it between two
 * events and report the measured peak bandwidth. The kernel must touch every byte each iteration
 * (no caching tricks) and, for READ, write a value derived from what it read into `sink` so the
 * reads cannot be optimised away. Operands a mode does not use are ignored (may be absent).
 *   src: [size_bytes] I8 (READ, COPY);  dst: [size_bytes] I8 (COPY, WRITE);  sink: [>= 64] I8
 * (READ) */
typedef struct hwinfer_bandwidth_probe_desc {
  uint32_t struct_size;
  uint32_t kind; /* HWINFER_KERNEL_BANDWIDTH_PROBE */
  uint32_t mode; /* HWINFER_PROBE_* */
  uint32_t iterations;
  uint64_t size_bytes;
  hwinfer_tensor_view src;
  hwinfer_tensor_view dst;
  hwinfer_tensor_view sink;
} hwinfer_bandwidth_probe_desc;

/* Argmax over each row (ABI 1.3): ids[r] = the smallest index of the largest value of x[r, :];
 * NaN values are never chosen (a row of NaN only gives 0). Greedy sampling on the device: the host
 * copies n_rows ids back instead of n_rows x n_cols logits.
 *   x: [n_rows, n_cols] F32 | F16 (innermost contiguous);  ids: [n_rows] I32, overlapping x not. */
typedef struct hwinfer_argmax_desc {
  uint32_t struct_size;
  uint32_t kind; /* HWINFER_KERNEL_ARGMAX */
  int64_t n_rows, n_cols;
  hwinfer_tensor_view x;
  hwinfer_tensor_view ids;
} hwinfer_argmax_desc;

/* ------------------------------------------------------------------------------------------------
 * The kernel table. Each slot is optional (NULL = not provided: the host reports the kernel
 * UNSUPPORTED and never calls it). Each enqueues one kernel on |stream| and returns at once; shape
 * and dtype errors the plugin can see at enqueue time are returned then, errors found while
 * running are returned by the next stream_synchronize of that stream.
 * Appended slots go at the end.
 * --------------------------------------------------------------------------------------------- */
typedef struct hwinfer_kernel_table {
  uint32_t struct_size;
  uint32_t reserved0;
  hwinfer_error* (*gemm)(hwinfer_stream* stream, const hwinfer_gemm_desc* desc);
  hwinfer_error* (*matmul_quantized)(hwinfer_stream* stream,
                                     const hwinfer_matmul_quantized_desc* desc);
  hwinfer_error* (*attention_prefill)(hwinfer_stream* stream,
                                      const hwinfer_attention_prefill_desc* desc);
  hwinfer_error* (*attention_decode_paged)(hwinfer_stream* stream,
                                           const hwinfer_attention_decode_paged_desc* desc);
  hwinfer_error* (*kv_append)(hwinfer_stream* stream, const hwinfer_kv_append_desc* desc);
  hwinfer_error* (*rms_norm)(hwinfer_stream* stream, const hwinfer_rms_norm_desc* desc);
  hwinfer_error* (*rope)(hwinfer_stream* stream, const hwinfer_rope_desc* desc);
  hwinfer_error* (*silu_mul)(hwinfer_stream* stream, const hwinfer_silu_mul_desc* desc);
  hwinfer_error* (*embedding)(hwinfer_stream* stream, const hwinfer_embedding_desc* desc);
  hwinfer_error* (*bandwidth_probe)(hwinfer_stream* stream,
                                    const hwinfer_bandwidth_probe_desc* desc);
  /* ABI 1.1 */
  hwinfer_error* (*rope_kv_append)(hwinfer_stream* stream, const hwinfer_rope_kv_append_desc* desc);
  /* ABI 1.3 */
  hwinfer_error* (*argmax)(hwinfer_stream* stream, const hwinfer_argmax_desc* desc);
} hwinfer_kernel_table;

/* ------------------------------------------------------------------------------------------------
 * The plugin API table
 * --------------------------------------------------------------------------------------------- */

typedef struct hwinfer_plugin_api {
  uint32_t struct_size;
  uint32_t abi_major; /* the plugin's HWINFER_ABI_MAJOR (must equal the host's) */
  uint32_t abi_minor; /* the plugin's HWINFER_ABI_MINOR (any value is accepted) */
  uint32_t reserved0;
  const char* name;    /* short backend name, e.g. "cpu"; static storage */
  const char* version; /* plugin version, e.g. "0.1.0"; static storage */

  /* --- lifecycle ------------------------------------------------------------------------------ */

  /* Creates the plugin instance. |host| stays valid until plugin_destroy returns. |options| (may be
   * NULL when |n_options| is 0) are copied if kept. Unknown option keys are INVALID_ARGUMENT with
   * the key in the message. On failure nothing is leaked and *out is untouched. */
  hwinfer_error* (*plugin_init)(const hwinfer_host_api* host, const hwinfer_option* options,
                                size_t n_options, hwinfer_plugin** out);
  /* Destroys the instance: stops every thread the plugin started and frees everything. All devices
   * must have been closed. After it returns the host may dlclose the library. Never fails. */
  void (*plugin_destroy)(hwinfer_plugin* plugin);

  /* --- devices -------------------------------------------------------------------------------- */

  /* Number of devices this plugin can open. Zero is a valid answer (e.g. no GPU present). */
  hwinfer_error* (*device_count)(hwinfer_plugin* plugin, uint32_t* out_count);
  /* Identity and properties of device |ordinal| without opening it (see hwinfer_device_info for
   * the struct_size rule). OUT_OF_RANGE for a bad ordinal. */
  hwinfer_error* (*device_get_info)(hwinfer_plugin* plugin, uint32_t ordinal,
                                    hwinfer_device_info* out);
  /* Opens device |ordinal| with per-device |options|. A device may be opened once per plugin
   * instance at a time (FAILED_PRECONDITION otherwise). */
  hwinfer_error* (*device_open)(hwinfer_plugin* plugin, uint32_t ordinal,
                                const hwinfer_option* options, size_t n_options,
                                hwinfer_device** out);
  /* Closes a device. Every buffer, stream and event of it must have been destroyed first. */
  void (*device_close)(hwinfer_device* device);

  /* --- memory --------------------------------------------------------------------------------- */

  /* Allocates |size_bytes| (> 0) of |memory_kind| (HWINFER_MEMORY_*). Contents are undefined.
   * OUT_OF_MEMORY when it cannot; UNSUPPORTED for an unknown kind. */
  hwinfer_error* (*buffer_alloc)(hwinfer_device* device, uint64_t size_bytes, uint32_t memory_kind,
                                 hwinfer_buffer** out);
  /* Frees a buffer. Queued work that uses it must have completed. */
  void (*buffer_free)(hwinfer_buffer* buffer);
  /* Returns a host pointer to the whole buffer, valid until buffer_free. Only for buffers the host
   * can see (HOST_VISIBLE, or DEVICE on devices whose memory is host memory); FAILED_PRECONDITION
   * otherwise. The host must synchronise streams that write the buffer before reading it. */
  hwinfer_error* (*buffer_map)(hwinfer_buffer* buffer, void** out_host_ptr);
  /* Wraps |size_bytes| of host memory at |host_ptr| (e.g. mmap'd weights) as a buffer without
   * copying, where the device can reach host memory. The memory must outlive the buffer. The
   * slot is NULL (or returns UNSUPPORTED) where the device cannot import. */
  hwinfer_error* (*buffer_import_host)(hwinfer_device* device, void* host_ptr, uint64_t size_bytes,
                                       hwinfer_buffer** out);

  /* --- streams -------------------------------------------------------------------------------- */

  hwinfer_error* (*stream_create)(hwinfer_device* device, hwinfer_stream** out);
  /* Waits for the stream's queued work, then destroys it. */
  void (*stream_destroy)(hwinfer_stream* stream);
  /* Blocks until every item queued so far has finished. Returns the first error any of them hit
   * since the last synchronize (and clears it). */
  hwinfer_error* (*stream_synchronize)(hwinfer_stream* stream);

  /* Asynchronous copies, ordered with everything else on |stream|. Offsets and sizes are in bytes
   * and need no alignment; [offset, offset + size) must lie inside the buffer (OUT_OF_RANGE).
   * Host memory must stay valid and untouched until the stream has passed the copy. size 0 is a
   * no-op. D2D buffers may belong to the same buffer but their ranges must not overlap. */
  hwinfer_error* (*copy_h2d)(hwinfer_stream* stream, const void* src, hwinfer_buffer* dst,
                             uint64_t dst_offset, uint64_t size_bytes);
  hwinfer_error* (*copy_d2h)(hwinfer_stream* stream, hwinfer_buffer* src, uint64_t src_offset,
                             void* dst, uint64_t size_bytes);
  hwinfer_error* (*copy_d2d)(hwinfer_stream* stream, hwinfer_buffer* src, uint64_t src_offset,
                             hwinfer_buffer* dst, uint64_t dst_offset, uint64_t size_bytes);

  /* --- events --------------------------------------------------------------------------------- */

  hwinfer_error* (*event_create)(hwinfer_device* device, hwinfer_event** out);
  /* Destroys an event; it must not be waited on by queued work any more. */
  void (*event_destroy)(hwinfer_event* event);
  /* Captures the point the stream has reached in its queue; the event completes when the stream
   * gets there, and takes a device timestamp then. Re-recording resets it. */
  hwinfer_error* (*event_record)(hwinfer_event* event, hwinfer_stream* stream);
  /* Makes later work on |stream| wait until |event| completes (the event may belong to another
   * stream of the same device; cross-device ordering goes through the host for now).
   * Waiting on a never-recorded event is a no-op. */
  hwinfer_error* (*stream_wait_event)(hwinfer_stream* stream, hwinfer_event* event);
  /* Blocks the calling thread until the event completes. */
  hwinfer_error* (*event_synchronize)(hwinfer_event* event);
  /* *out_complete = 1 when the event has completed (or was never recorded), else 0. Never blocks.
   */
  hwinfer_error* (*event_query)(hwinfer_event* event, uint32_t* out_complete);
  /* Device time in nanoseconds between two completed events' timestamps (end - start).
   * FAILED_PRECONDITION when either has not completed or was never recorded, or when |end| was
   * reached before |start|. */
  hwinfer_error* (*event_elapsed_ns)(hwinfer_event* start, hwinfer_event* end,
                                     uint64_t* out_elapsed_ns);

  /* --- kernels -------------------------------------------------------------------------------- */

  /* Answers whether |device| can run the kernel |desc| describes (its kind, dtypes and shapes),
   * with a reason when not. Never enqueues anything. Views may have NULL buffers here: the host
   * asks before it allocates, so only dtypes, shapes and strides are judged. A well-formed
   * request the device cannot run is *out = UNSUPPORTED with a reason; a malformed descriptor
   * (inconsistent shapes, bad rank) is an INVALID_ARGUMENT error, as at enqueue. The host also
   * treats a NULL kernel slot as UNSUPPORTED without calling this. An unknown kind is
   * UNSUPPORTED (not an error). */
  hwinfer_error* (*kernel_query)(hwinfer_device* device, const hwinfer_kernel_desc* desc,
                                 hwinfer_kernel_support* out);
  /* The kernel slots; NULL when the plugin offers no kernels. Static storage. */
  const hwinfer_kernel_table* kernels;

  /* --- graphs (ABI 1.1; all four slots NULL where the plugin cannot capture) -------------------
   *
   * Capture records a stream's work once so it can be replayed with one call (CUDA graphs, HIP
   * graphs, reusable command buffers): the host saves the per-kernel enqueue cost of a decode
   * step that runs the same kernels on the same buffers again and again.
   *
   * Between stream_begin_capture and stream_end_capture the stream RECORDS kernel launches and
   * copy_d2d instead of running them; nothing recorded runs at capture time. Anything else on a
   * capturing stream (copy_h2d, copy_d2h, events, stream_wait_event, stream_synchronize, a second
   * begin) is FAILED_PRECONDITION and leaves the capture going. An enqueue that fails during
   * capture spoils it: stream_end_capture then returns FAILED_PRECONDITION (no graph) and the
   * stream is back to normal. graph_launch enqueues the recorded work on |stream|, which must be
   * the stream it was captured from and not capturing (FAILED_PRECONDITION otherwise), in the
   * recorded order, with the SAME descriptors and buffers: replays see the buffers' current
   * contents, so the host changes a step's inputs by writing into the buffers (copy_h2d) before the
   * launch. Errors a recorded kernel finds while running are reported by the next
   * stream_synchronize, as for a direct launch. Every buffer a graph uses must outlive it; a graph
   * must not be destroyed while a replay of it is queued. A graph may outlive its stream (it can no
   * longer be launched then) and is destroyed without one. */
  hwinfer_error* (*stream_begin_capture)(hwinfer_stream* stream);
  hwinfer_error* (*stream_end_capture)(hwinfer_stream* stream, hwinfer_graph** out);
  hwinfer_error* (*graph_launch)(hwinfer_graph* graph, hwinfer_stream* stream);
  void (*graph_destroy)(hwinfer_graph* graph);

  /* --- device collectives (ABI 1.4; all six slots NULL where the plugin has none) -------------
   *
   * Tensor parallelism sums partial activations across ranks (processes or threads, one device
   * each) twice per layer. These slots let a plugin do it on its devices (NCCL, RCCL, shared
   * memory) instead of the host copying the values out, summing them and copying them back. The
   * host creates one id on one rank, sends it to the others itself, and every rank joins.
   *
   * comm_create_id: a fresh id, unique among the communicators alive on this machine (and, for a
   * plugin that spans machines, among its peers').
   * comm_init: joins rank |rank| (< |nranks|) of the communicator |id| on |device|. Blocks until
   * every rank has joined, at most |timeout_ns| nanoseconds (then UNAVAILABLE, nothing leaked).
   * Every rank must pass the same id and nranks and a different rank. A device may be in several
   * communicators; ranks of one communicator may share a device where the plugin allows it (NCCL
   * does not: it answers INVALID_ARGUMENT "duplicate GPU").
   * comm_all_reduce_sum_f32: enqueues on |stream| (of the communicator's device) the in-place sum
   * over the ranks of the |count| F32 values at byte |offset| of |buffer|: when the stream passes
   * it, every rank's values are the sum, the same bits on every rank. Every rank must enqueue the
   * same sequence of all-reduces with the same counts. It completes only when every rank's stream
   * has reached its matching call: a rank that never does leaves the others' streams waiting
   * until comm_abort. An offset that is not a multiple of 4 is INVALID_ARGUMENT, a range past
   * the buffer OUT_OF_RANGE; count 0 enqueues nothing.
   * comm_get_error: NULL while the communicator is healthy, else the error that broke it (a peer
   * gone, a transport failure, an abort). Never blocks; the host polls it while it waits.
   * comm_abort: breaks the communicator: every queued or running all-reduce of it on this rank
   * finishes with an error (its stream's next synchronize returns it) without waiting for the
   * other ranks, and so does every later one. Never blocks on other ranks. Thread-safe against
   * the stream's work and comm_get_error.
   * comm_destroy: frees this rank's end. Streams that ran its all-reduces must have finished
   * them (synchronized), or it must have been aborted and the streams synchronized since. */
  hwinfer_error* (*comm_create_id)(hwinfer_plugin* plugin, hwinfer_comm_id* out_id);
  hwinfer_error* (*comm_init)(hwinfer_device* device, const hwinfer_comm_id* id, uint32_t nranks,
                              uint32_t rank, uint64_t timeout_ns, hwinfer_comm** out);
  hwinfer_error* (*comm_all_reduce_sum_f32)(hwinfer_comm* comm, hwinfer_stream* stream,
                                            hwinfer_buffer* buffer, uint64_t offset,
                                            uint64_t count);
  hwinfer_error* (*comm_get_error)(hwinfer_comm* comm);
  void (*comm_abort)(hwinfer_comm* comm);
  void (*comm_destroy)(hwinfer_comm* comm);
} hwinfer_plugin_api;

/* The exported entry point. The host passes its ABI major and the newest minor it understands.
 * A plugin that does not implement |abi_major| returns an UNSUPPORTED error naming the majors it
 * has. Otherwise it stores a pointer to its static API table (valid until dlclose) in *out_api.
 * |host| stays valid until the plugin_destroy of every instance created through the table. */
typedef hwinfer_error* (*hwinfer_plugin_query_fn)(uint32_t abi_major, uint32_t host_max_minor,
                                                  const hwinfer_host_api* host,
                                                  const hwinfer_plugin_api** out_api);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HWINFER_PLUGIN_H_ */
