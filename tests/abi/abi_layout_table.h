/*
 * abi_layout_table.h — one row per field, struct and constant of plugin.h as of ABI 1.0, as
 * compiled against some version of the header. abi_layout_fields.c is compiled twice, against the
 * frozen 1.0 header (abi_layout_frozen) and the live one (abi_layout_live), and
 * abi_layout_test.cpp compares the two tables. Plain C, no plugin.h: this header must not depend
 * on either version.
 */
#ifndef HWINFER_ABI_LAYOUT_TABLE_H_
#define HWINFER_ABI_LAYOUT_TABLE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ABI_LAYOUT_FIELD 0u    /* offset and size of struct.field: must stay equal */
#define ABI_LAYOUT_STRUCT 1u   /* sizeof(struct): may only grow (append-only) */
#define ABI_LAYOUT_EXACT 2u    /* sizeof of a file-format struct (quant blocks): must stay equal */
#define ABI_LAYOUT_CONSTANT 3u /* value of a #define: must stay equal */
#define ABI_LAYOUT_STRING 4u   /* a string #define (the query symbol): must stay equal */

typedef struct abi_layout_row {
  const char* name; /* "hwinfer_plugin_api.kernel_query", "HWINFER_STATUS_OK", ... */
  uint32_t what;    /* ABI_LAYOUT_* */
  uint64_t offset;  /* FIELD only */
  uint64_t size;    /* FIELD, STRUCT, EXACT: bytes; CONSTANT: the value */
  const char* text; /* STRING only */
} abi_layout_row;

extern const abi_layout_row abi_layout_frozen[];
extern const uint32_t abi_layout_frozen_count;
extern const abi_layout_row abi_layout_live[];
extern const uint32_t abi_layout_live_count;

#ifdef __cplusplus
}
#endif

#endif /* HWINFER_ABI_LAYOUT_TABLE_H_ */
