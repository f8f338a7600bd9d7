/*
 * hwinfer/plugin_support.h — small header-only helpers for plugin authors (C99 and C++).
 *
 * Not part of the ABI: nothing here crosses the boundary by itself. It saves every plugin from
 * writing the same error allocation and struct_size-respecting copies. Everything is static inline,
 * so a plugin that includes it carries its own copy and owes the host nothing.
 */
#ifndef HWINFER_PLUGIN_SUPPORT_H_
#define HWINFER_PLUGIN_SUPPORT_H_

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwinfer/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The error object these helpers allocate: the public struct followed by the message bytes. */
static inline void hwinfer_support_error_destroy(hwinfer_error* self) { free(self); }

/* Allocates an error with a printf-style message. Returns NULL only if |code| is OK. If memory is
 * exhausted it returns a static error whose destroy does nothing, so callers never see NULL. */
static inline hwinfer_error* hwinfer_make_error(uint32_t code, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static inline void hwinfer_support_static_error_destroy(hwinfer_error* self) { (void)self; }

static inline hwinfer_error* hwinfer_make_error(uint32_t code, const char* format, ...) {
  static hwinfer_error out_of_memory = {sizeof(hwinfer_error), HWINFER_STATUS_OUT_OF_MEMORY,
                                        "out of memory while reporting an error",
                                        hwinfer_support_static_error_destroy};
  if (code == HWINFER_STATUS_OK) return NULL;
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int length = vsnprintf(NULL, 0, format, copy);
  va_end(copy);
  if (length < 0) length = 0;
  hwinfer_error* error = (hwinfer_error*)malloc(sizeof(hwinfer_error) + (size_t)length + 1);
  if (error == NULL) {
    va_end(args);
    return &out_of_memory;
  }
  char* message = (char*)(error + 1);
  vsnprintf(message, (size_t)length + 1, format, args);
  va_end(args);
  error->struct_size = sizeof(hwinfer_error);
  error->code = code;
  error->message = message;
  error->destroy = hwinfer_support_error_destroy;
  return error;
}

/* Copies |src| (a full struct of this header's version) into the caller's |dst|, writing only the
 * first dst->struct_size bytes, as the ABI requires for caller-allocated output structs.
 * dst->struct_size is preserved. */
static inline void hwinfer_copy_out(void* dst, const void* src, size_t src_size) {
  uint32_t dst_size;
  memcpy(&dst_size, dst, sizeof(dst_size));
  size_t n = dst_size < src_size ? dst_size : src_size;
  if (n > sizeof(uint32_t)) {
    memcpy((char*)dst + sizeof(uint32_t), (const char*)src + sizeof(uint32_t),
           n - sizeof(uint32_t));
  }
}

/* The name of a kernel kind ("gemm", "attention_decode_paged", ...), NULL for a kind this header
 * does not know. */
static inline const char* hwinfer_kernel_kind_name(uint32_t kind) {
  switch (kind) {
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor) \
  case HWINFER_KERNEL_##KIND:                                  \
    return #slot;
#include "hwinfer/kernel_kinds.def"
    default:
      return NULL;
  }
}

/* Copies a NUL-terminated string into a fixed char array, truncating. */
static inline void hwinfer_copy_string(char* dst, size_t dst_size, const char* src) {
  if (dst_size == 0) return;
  size_t n = src ? strlen(src) : 0;
  if (n >= dst_size) n = dst_size - 1;
  if (n) memcpy(dst, src, n);
  dst[n] = '\0';
}

/* Fills a kernel_support answer (respecting out->struct_size) with a printf-style reason. */
static inline void hwinfer_set_support(hwinfer_kernel_support* out, uint32_t supported,
                                       const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static inline void hwinfer_set_support(hwinfer_kernel_support* out, uint32_t supported,
                                       const char* format, ...) {
  hwinfer_kernel_support full;
  memset(&full, 0, sizeof(full));
  full.struct_size = sizeof(full);
  full.supported = supported;
  va_list args;
  va_start(args, format);
  vsnprintf(full.reason, sizeof(full.reason), format, args);
  va_end(args);
  hwinfer_copy_out(out, &full, sizeof(full));
}

/* The two unfused kernels a rope_kv_append descriptor stands for: |rope| rotates q and k in place,
 * then |append| writes the rotated k and v into the pools. A plugin checks (and may run) the fused
 * kernel as these two; both outputs are full descriptors of this header's version. */
static inline void hwinfer_split_rope_kv_append(const hwinfer_rope_kv_append_desc* fused,
                                                hwinfer_rope_desc* rope,
                                                hwinfer_kv_append_desc* append) {
  memset(rope, 0, sizeof(*rope));
  rope->struct_size = sizeof(*rope);
  rope->kind = HWINFER_KERNEL_ROPE;
  rope->n_tokens = fused->n_tokens;
  rope->n_heads = fused->n_heads;
  rope->n_kv_heads = fused->n_kv_heads;
  rope->head_dim = fused->head_dim;
  rope->rotary_dim = fused->rotary_dim;
  rope->theta_base = fused->theta_base;
  rope->mode = fused->mode;
  rope->q = fused->q;
  rope->k = fused->k;
  rope->positions = fused->positions;
  memset(append, 0, sizeof(*append));
  append->struct_size = sizeof(*append);
  append->kind = HWINFER_KERNEL_KV_APPEND;
  append->n_tokens = fused->n_tokens;
  append->n_kv_heads = fused->n_kv_heads;
  append->head_dim = fused->head_dim;
  append->block_size = fused->block_size;
  append->num_blocks = fused->num_blocks;
  append->k = fused->k;
  append->v = fused->v;
  append->slot_mapping = fused->slot_mapping;
  append->k_cache = fused->k_cache;
  append->v_cache = fused->v_cache;
  append->k_scales = fused->k_scales;
  append->v_scales = fused->v_scales;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HWINFER_PLUGIN_SUPPORT_H_ */
