/*
 * broken_plugin.c — a deliberately broken backend, used only to test the conformance suite itself
 * (never installed, never in the plugin folder). It forwards every call to the real CPU plugin
 * (HWINFER_BROKEN_PLUGIN_TARGET) except:
 *   - copy_d2d writes one byte more than asked (the guard-band checks must catch it);
 *   - gemm scales alpha by 1.0001 (an error far above f32 rounding: the NMSE check must catch it);
 *   - with HWINFER_BROKEN_ZERO_DEVICES set in the environment, device_count answers 0.
 * Must not be used for anything but the suite's self-tests.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"

static void* g_library;
static const hwinfer_plugin_api* g_real;
static hwinfer_plugin_api g_api;
static hwinfer_kernel_table g_kernels;

static hwinfer_error* broken_copy_d2d(hwinfer_stream* stream, hwinfer_buffer* src,
                                      uint64_t src_offset, hwinfer_buffer* dst, uint64_t dst_offset,
                                      uint64_t size_bytes) {
  return g_real->copy_d2d(stream, src, src_offset, dst, dst_offset,
                          size_bytes == 0 ? 0 : size_bytes + 1);
}

static hwinfer_error* broken_gemm(hwinfer_stream* stream, const hwinfer_gemm_desc* desc) {
  hwinfer_gemm_desc changed = *desc;
  changed.alpha *= 1.0001f;
  return g_real->kernels->gemm(stream, &changed);
}

static hwinfer_error* broken_device_count(hwinfer_plugin* plugin, uint32_t* out_count) {
  if (getenv("HWINFER_BROKEN_ZERO_DEVICES") != NULL) {
    *out_count = 0;
    return NULL;
  }
  return g_real->device_count(plugin, out_count);
}

__attribute__((destructor)) static void broken_unload(void) {
  if (g_library != NULL) dlclose(g_library);
  g_library = NULL;
}

HWINFER_PLUGIN_EXPORT hwinfer_error* hwinfer_plugin_query(uint32_t abi_major,
                                                          uint32_t host_max_minor,
                                                          const hwinfer_host_api* host,
                                                          const hwinfer_plugin_api** out_api) {
  if (g_real == NULL) {
    if (g_library == NULL) g_library = dlopen(HWINFER_BROKEN_PLUGIN_TARGET, RTLD_NOW | RTLD_LOCAL);
    if (g_library == NULL) {
      return hwinfer_make_error(HWINFER_STATUS_UNAVAILABLE, "cannot load %s: %s",
                                HWINFER_BROKEN_PLUGIN_TARGET, dlerror());
    }
    hwinfer_plugin_query_fn query;
    void* symbol = dlsym(g_library, HWINFER_PLUGIN_QUERY_SYMBOL);
    if (symbol == NULL) {
      return hwinfer_make_error(HWINFER_STATUS_UNAVAILABLE, "%s has no query symbol",
                                HWINFER_BROKEN_PLUGIN_TARGET);
    }
    memcpy(&query, &symbol, sizeof(query));
    const hwinfer_plugin_api* real = NULL;
    hwinfer_error* error = query(abi_major, host_max_minor, host, &real);
    if (error != NULL) return error;
    g_real = real;
  }
  size_t n = g_real->struct_size < sizeof(g_api) ? g_real->struct_size : sizeof(g_api);
  memset(&g_api, 0, sizeof(g_api));
  memcpy(&g_api, g_real, n);
  g_api.struct_size = (uint32_t)sizeof(g_api);
  g_api.name = "broken";
  g_api.copy_d2d = broken_copy_d2d;
  g_api.device_count = broken_device_count;
  if (g_real->kernels != NULL && g_real->kernels->gemm != NULL) {
    size_t k = g_real->kernels->struct_size < sizeof(g_kernels) ? g_real->kernels->struct_size
                                                                : sizeof(g_kernels);
    memset(&g_kernels, 0, sizeof(g_kernels));
    memcpy(&g_kernels, g_real->kernels, k);
    g_kernels.gemm = broken_gemm;
    g_api.kernels = &g_kernels;
  }
  *out_api = &g_api;
  return NULL;
}
