/*
 * minimal_backend.c — see minimal_backend.h. One device of host memory; streams run everything at
 * enqueue; events take a CLOCK_MONOTONIC timestamp when recorded; one kernel, bandwidth_probe.
 * Enough to load, list, allocate, copy and launch through the host, and nothing more: it is a test
 * fixture, not an example (sdk/template/ is the example).
 */
#define _POSIX_C_SOURCE 200809L
#include "minimal_backend.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct hwinfer_plugin {
  int device_open;
};
struct hwinfer_device {
  hwinfer_plugin* plugin;
};
struct hwinfer_buffer {
  hwinfer_device* device;
  unsigned char* data;
  uint64_t size;
};
struct hwinfer_stream {
  hwinfer_device* device;
};
struct hwinfer_event {
  hwinfer_device* device;
  uint64_t timestamp_ns; /* 0 = never recorded */
};

/* ---- errors and counters ------------------------------------------------------------------ */

static void abi_error_destroy(hwinfer_error* self) { free(self); }

static void abi_static_error_destroy(hwinfer_error* self) { (void)self; }

hwinfer_error* abi_error(uint32_t code, const char* message) {
  static hwinfer_error out_of_memory = {sizeof(hwinfer_error), HWINFER_STATUS_OUT_OF_MEMORY,
                                        "out of memory", abi_static_error_destroy};
  size_t length = strlen(message);
  hwinfer_error* error = (hwinfer_error*)malloc(sizeof(hwinfer_error) + length + 1);
  if (error == NULL) return &out_of_memory;
  char* text = (char*)(error + 1);
  memcpy(text, message, length + 1);
  error->struct_size = sizeof(hwinfer_error);
  error->code = code;
  error->message = text;
  error->destroy = abi_error_destroy;
  return error;
}

static uint64_t call_counts[64];

uint64_t abi_test_call_count(uint32_t kind) { return kind < 64 ? call_counts[kind] : 0; }

void abi_count_call(uint32_t kind) {
  if (kind < 64) ++call_counts[kind];
}

#define ABI_REQUIRE(condition, code, message)              \
  do {                                                     \
    if (!(condition)) return abi_error((code), (message)); \
  } while (0)

/* ---- plugin and device ---------------------------------------------------------------------- */

static hwinfer_error* plugin_init(const hwinfer_host_api* host, const hwinfer_option* options,
                                  size_t n_options, hwinfer_plugin** out) {
  (void)host;
  (void)options;
  ABI_REQUIRE(out != NULL, HWINFER_STATUS_INVALID_ARGUMENT, "plugin_init: out is NULL");
  ABI_REQUIRE(n_options == 0, HWINFER_STATUS_INVALID_ARGUMENT, "plugin_init: takes no options");
  hwinfer_plugin* plugin = (hwinfer_plugin*)calloc(1, sizeof(hwinfer_plugin));
  ABI_REQUIRE(plugin != NULL, HWINFER_STATUS_OUT_OF_MEMORY, "plugin_init: out of memory");
  *out = plugin;
  return NULL;
}

static void plugin_destroy(hwinfer_plugin* plugin) { free(plugin); }

static hwinfer_error* device_count(hwinfer_plugin* plugin, uint32_t* out_count) {
  ABI_REQUIRE(plugin != NULL && out_count != NULL, HWINFER_STATUS_INVALID_ARGUMENT,
              "device_count: NULL argument");
  *out_count = 1;
  return NULL;
}

static void copy_text(char* dst, size_t capacity, const char* src) {
  size_t n = strlen(src);
  if (n >= capacity) n = capacity - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

static hwinfer_error* device_get_info(hwinfer_plugin* plugin, uint32_t ordinal,
                                      hwinfer_device_info* out) {
  ABI_REQUIRE(plugin != NULL && out != NULL, HWINFER_STATUS_INVALID_ARGUMENT,
              "device_get_info: NULL argument");
  ABI_REQUIRE(ordinal == 0, HWINFER_STATUS_OUT_OF_RANGE, "device_get_info: one device only");
  hwinfer_device_info info;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  info.device_type = HWINFER_DEVICE_TYPE_VIRTUAL;
  copy_text(info.name, sizeof(info.name), abi_backend.device_name);
  copy_text(info.vendor, sizeof(info.vendor), "hwinfer abi tests");
  copy_text(info.driver, sizeof(info.driver), "none");
  memcpy(info.uuid, abi_backend.uuid, sizeof(info.uuid));
  info.memory_total_bytes = 1ull << 30;
  info.memory_free_bytes = 1ull << 30;
  info.max_allocation_bytes = 1ull << 30;
  info.alignment_bytes = 16;
  info.compute_units = 1;
  /* Copy only what the caller's struct_size has room for (a newer host has a larger struct, of
   * which we fill our prefix; the host zeroed the rest). */
  uint32_t size = out->struct_size < sizeof(info) ? out->struct_size : (uint32_t)sizeof(info);
  if (size > sizeof(uint32_t)) {
    memcpy((char*)out + sizeof(uint32_t), (const char*)&info + sizeof(uint32_t),
           size - sizeof(uint32_t));
  }
  return NULL;
}

static hwinfer_error* device_open(hwinfer_plugin* plugin, uint32_t ordinal,
                                  const hwinfer_option* options, size_t n_options,
                                  hwinfer_device** out) {
  (void)options;
  ABI_REQUIRE(plugin != NULL && out != NULL, HWINFER_STATUS_INVALID_ARGUMENT,
              "device_open: NULL argument");
  ABI_REQUIRE(ordinal == 0, HWINFER_STATUS_OUT_OF_RANGE, "device_open: one device only");
  ABI_REQUIRE(n_options == 0, HWINFER_STATUS_INVALID_ARGUMENT, "device_open: takes no options");
  ABI_REQUIRE(!plugin->device_open, HWINFER_STATUS_FAILED_PRECONDITION,
              "device_open: already open");
  hwinfer_device* device = (hwinfer_device*)calloc(1, sizeof(hwinfer_device));
  ABI_REQUIRE(device != NULL, HWINFER_STATUS_OUT_OF_MEMORY, "device_open: out of memory");
  device->plugin = plugin;
  plugin->device_open = 1;
  *out = device;
  return NULL;
}

static void device_close(hwinfer_device* device) {
  if (device == NULL) return;
  device->plugin->device_open = 0;
  free(device);
}

/* ---- memory --------------------------------------------------------------------------------- */

static hwinfer_error* buffer_alloc(hwinfer_device* device, uint64_t size_bytes,
                                   uint32_t memory_kind, hwinfer_buffer** out) {
  ABI_REQUIRE(device != NULL && out != NULL, HWINFER_STATUS_INVALID_ARGUMENT,
              "buffer_alloc: NULL argument");
  ABI_REQUIRE(size_bytes > 0, HWINFER_STATUS_INVALID_ARGUMENT, "buffer_alloc: size 0");
  ABI_REQUIRE(memory_kind == HWINFER_MEMORY_DEVICE || memory_kind == HWINFER_MEMORY_HOST_VISIBLE,
              HWINFER_STATUS_UNSUPPORTED, "buffer_alloc: unknown memory kind");
  ABI_REQUIRE(size_bytes <= (1ull << 30), HWINFER_STATUS_OUT_OF_MEMORY,
              "buffer_alloc: more than 1 GiB");
  hwinfer_buffer* buffer = (hwinfer_buffer*)calloc(1, sizeof(hwinfer_buffer));
  ABI_REQUIRE(buffer != NULL, HWINFER_STATUS_OUT_OF_MEMORY, "buffer_alloc: out of memory");
  buffer->data = (unsigned char*)malloc((size_t)size_bytes);
  if (buffer->data == NULL) {
    free(buffer);
    return abi_error(HWINFER_STATUS_OUT_OF_MEMORY, "buffer_alloc: out of memory");
  }
  buffer->device = device;
  buffer->size = size_bytes;
  *out = buffer;
  return NULL;
}

static void buffer_free(hwinfer_buffer* buffer) {
  if (buffer == NULL) return;
  free(buffer->data);
  free(buffer);
}

static hwinfer_error* buffer_map(hwinfer_buffer* buffer, void** out_host_ptr) {
  ABI_REQUIRE(buffer != NULL && out_host_ptr != NULL, HWINFER_STATUS_INVALID_ARGUMENT,
              "buffer_map: NULL argument");
  *out_host_ptr = buffer->data;
  return NULL;
}

static int in_range(const hwinfer_buffer* buffer, uint64_t offset, uint64_t size) {
  return offset <= buffer->size && size <= buffer->size - offset;
}

/* ---- streams and copies --------------------------------------------------------------------- */

static hwinfer_error* stream_create(hwinfer_device* device, hwinfer_stream** out) {
  ABI_REQUIRE(device != NULL && out != NULL, HWINFER_STATUS_INVALID_ARGUMENT,
              "stream_create: NULL argument");
  hwinfer_stream* stream = (hwinfer_stream*)calloc(1, sizeof(hwinfer_stream));
  ABI_REQUIRE(stream != NULL, HWINFER_STATUS_OUT_OF_MEMORY, "stream_create: out of memory");
  stream->device = device;
  *out = stream;
  return NULL;
}

static void stream_destroy(hwinfer_stream* stream) { free(stream); }

static hwinfer_error* stream_synchronize(hwinfer_stream* stream) {
  ABI_REQUIRE(stream != NULL, HWINFER_STATUS_INVALID_ARGUMENT, "stream_synchronize: NULL");
  return NULL;
}

static hwinfer_error* copy_h2d(hwinfer_stream* stream, const void* src, hwinfer_buffer* dst,
                               uint64_t dst_offset, uint64_t size_bytes) {
  ABI_REQUIRE(stream != NULL && dst != NULL, HWINFER_STATUS_INVALID_ARGUMENT,
              "copy_h2d: NULL argument");
  ABI_REQUIRE(in_range(dst, dst_offset, size_bytes), HWINFER_STATUS_OUT_OF_RANGE,
              "copy_h2d: range outside the buffer");
  if (size_bytes == 0) return NULL;
  ABI_REQUIRE(src != NULL, HWINFER_STATUS_INVALID_ARGUMENT, "copy_h2d: src is NULL");
  memcpy(dst->data + dst_offset, src, (size_t)size_bytes);
  return NULL;
}

static hwinfer_error* copy_d2h(hwinfer_stream* stream, hwinfer_buffer* src, uint64_t src_offset,
                               void* dst, uint64_t size_bytes) {
  ABI_REQUIRE(stream != NULL && src != NULL, HWINFER_STATUS_INVALID_ARGUMENT,
              "copy_d2h: NULL argument");
  ABI_REQUIRE(in_range(src, src_offset, size_bytes), HWINFER_STATUS_OUT_OF_RANGE,
              "copy_d2h: range outside the buffer");
  if (size_bytes == 0) return NULL;
  ABI_REQUIRE(dst != NULL, HWINFER_STATUS_INVALID_ARGUMENT, "copy_d2h: dst is NULL");
  memcpy(dst, src->data + src_offset, (size_t)size_bytes);
  return NULL;
}

static hwinfer_error* copy_d2d(hwinfer_stream* stream, hwinfer_buffer* src, uint64_t src_offset,
                               hwinfer_buffer* dst, uint64_t dst_offset, uint64_t size_bytes) {
  ABI_REQUIRE(stream != NULL && src != NULL && dst != NULL, HWINFER_STATUS_INVALID_ARGUMENT,
              "copy_d2d: NULL argument");
  ABI_REQUIRE(in_range(src, src_offset, size_bytes) && in_range(dst, dst_offset, size_bytes),
              HWINFER_STATUS_OUT_OF_RANGE, "copy_d2d: range outside a buffer");
  if (size_bytes == 0) return NULL;
  memmove(dst->data + dst_offset, src->data + src_offset, (size_t)size_bytes);
  return NULL;
}

/* ---- events --------------------------------------------------------------------------------- */

static uint64_t now_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec + 1;
}

static hwinfer_error* event_create(hwinfer_device* device, hwinfer_event** out) {
  ABI_REQUIRE(device != NULL && out != NULL, HWINFER_STATUS_INVALID_ARGUMENT,
              "event_create: NULL argument");
  hwinfer_event* event = (hwinfer_event*)calloc(1, sizeof(hwinfer_event));
  ABI_REQUIRE(event != NULL, HWINFER_STATUS_OUT_OF_MEMORY, "event_create: out of memory");
  event->device = device;
  *out = event;
  return NULL;
}

static void event_destroy(hwinfer_event* event) { free(event); }

static hwinfer_error* event_record(hwinfer_event* event, hwinfer_stream* stream) {
  ABI_REQUIRE(event != NULL && stream != NULL, HWINFER_STATUS_INVALID_ARGUMENT,
              "event_record: NULL argument");
  event->timestamp_ns = now_ns();
  return NULL;
}

static hwinfer_error* stream_wait_event(hwinfer_stream* stream, hwinfer_event* event) {
  ABI_REQUIRE(stream != NULL && event != NULL, HWINFER_STATUS_INVALID_ARGUMENT,
              "stream_wait_event: NULL argument");
  return NULL;
}

static hwinfer_error* event_synchronize(hwinfer_event* event) {
  ABI_REQUIRE(event != NULL, HWINFER_STATUS_INVALID_ARGUMENT, "event_synchronize: NULL");
  return NULL;
}

static hwinfer_error* event_query(hwinfer_event* event, uint32_t* out_complete) {
  ABI_REQUIRE(event != NULL && out_complete != NULL, HWINFER_STATUS_INVALID_ARGUMENT,
              "event_query: NULL argument");
  *out_complete = 1;
  return NULL;
}

static hwinfer_error* event_elapsed_ns(hwinfer_event* start, hwinfer_event* end,
                                       uint64_t* out_elapsed_ns) {
  ABI_REQUIRE(start != NULL && end != NULL && out_elapsed_ns != NULL,
              HWINFER_STATUS_INVALID_ARGUMENT, "event_elapsed_ns: NULL argument");
  ABI_REQUIRE(start->timestamp_ns != 0 && end->timestamp_ns != 0,
              HWINFER_STATUS_FAILED_PRECONDITION, "event_elapsed_ns: event never recorded");
  ABI_REQUIRE(end->timestamp_ns >= start->timestamp_ns, HWINFER_STATUS_INVALID_ARGUMENT,
              "event_elapsed_ns: end recorded before start");
  *out_elapsed_ns = end->timestamp_ns - start->timestamp_ns;
  return NULL;
}

/* ---- kernels -------------------------------------------------------------------------------- */

static void set_support(hwinfer_kernel_support* out, uint32_t supported, const char* reason) {
  hwinfer_kernel_support full;
  memset(&full, 0, sizeof(full));
  full.struct_size = sizeof(full);
  full.supported = supported;
  copy_text(full.reason, sizeof(full.reason), reason);
  uint32_t size = out->struct_size < sizeof(full) ? out->struct_size : (uint32_t)sizeof(full);
  if (size > sizeof(uint32_t)) {
    memcpy((char*)out + sizeof(uint32_t), (const char*)&full + sizeof(uint32_t),
           size - sizeof(uint32_t));
  }
}

static hwinfer_error* kernel_query(hwinfer_device* device, const hwinfer_kernel_desc* desc,
                                   hwinfer_kernel_support* out) {
  ABI_REQUIRE(device != NULL && desc != NULL && out != NULL, HWINFER_STATUS_INVALID_ARGUMENT,
              "kernel_query: NULL argument");
  abi_count_call(desc->kind);
  if (abi_backend.claim_all_kernels) {
    set_support(out, HWINFER_KERNEL_SUPPORTED, "");
  } else if (desc->kind == HWINFER_KERNEL_BANDWIDTH_PROBE) {
    set_support(out, HWINFER_KERNEL_SUPPORTED, "");
  } else {
    set_support(out, HWINFER_KERNEL_UNSUPPORTED, "the minimal test backend has only the probe");
  }
  return NULL;
}

static hwinfer_error* bandwidth_probe(hwinfer_stream* stream,
                                      const hwinfer_bandwidth_probe_desc* desc) {
  ABI_REQUIRE(stream != NULL && desc != NULL, HWINFER_STATUS_INVALID_ARGUMENT,
              "bandwidth_probe: NULL argument");
  abi_count_call(desc->kind);
  const uint64_t size = desc->size_bytes;
  const hwinfer_buffer* src = desc->src.buffer;
  const hwinfer_buffer* dst = desc->dst.buffer;
  const hwinfer_buffer* sink = desc->sink.buffer;
  uint32_t pass;
  switch (desc->mode) {
    case HWINFER_PROBE_READ: {
      ABI_REQUIRE(src != NULL && sink != NULL && in_range(src, desc->src.offset_bytes, size) &&
                      in_range(sink, desc->sink.offset_bytes, 64),
                  HWINFER_STATUS_OUT_OF_RANGE, "bandwidth_probe: bad READ operands");
      uint64_t sum = 0;
      for (pass = 0; pass < desc->iterations; ++pass) {
        uint64_t i;
        for (i = 0; i < size; ++i) sum = sum * 31u + src->data[desc->src.offset_bytes + i];
      }
      memcpy(sink->data + desc->sink.offset_bytes, &sum, sizeof(sum));
      return NULL;
    }
    case HWINFER_PROBE_COPY:
      ABI_REQUIRE(src != NULL && dst != NULL && in_range(src, desc->src.offset_bytes, size) &&
                      in_range(dst, desc->dst.offset_bytes, size),
                  HWINFER_STATUS_OUT_OF_RANGE, "bandwidth_probe: bad COPY operands");
      for (pass = 0; pass < desc->iterations; ++pass) {
        memmove(dst->data + desc->dst.offset_bytes, src->data + desc->src.offset_bytes,
                (size_t)size);
      }
      return NULL;
    case HWINFER_PROBE_WRITE:
      ABI_REQUIRE(dst != NULL && in_range(dst, desc->dst.offset_bytes, size),
                  HWINFER_STATUS_OUT_OF_RANGE, "bandwidth_probe: bad WRITE operands");
      for (pass = 0; pass < desc->iterations; ++pass) {
        memset(dst->data + desc->dst.offset_bytes, (int)(pass & 0xffu), (size_t)size);
      }
      return NULL;
    default:
      return abi_error(HWINFER_STATUS_UNSUPPORTED, "bandwidth_probe: unknown mode");
  }
}

const hwinfer_kernel_table* abi_probe_kernel_table(void) {
  static const hwinfer_kernel_table table = {.struct_size = sizeof(hwinfer_kernel_table),
                                             .bandwidth_probe = bandwidth_probe};
  return &table;
}

void abi_fill_api(hwinfer_plugin_api* api) {
  memset(api, 0, sizeof(*api));
  api->struct_size = sizeof(*api);
  api->abi_major = HWINFER_ABI_MAJOR;
  api->abi_minor = HWINFER_ABI_MINOR;
  api->name = abi_backend.plugin_name;
  api->version = "0.0.1";
  api->plugin_init = plugin_init;
  api->plugin_destroy = plugin_destroy;
  api->device_count = device_count;
  api->device_get_info = device_get_info;
  api->device_open = device_open;
  api->device_close = device_close;
  api->buffer_alloc = buffer_alloc;
  api->buffer_free = buffer_free;
  api->buffer_map = buffer_map;
  api->buffer_import_host = NULL; /* not provided: the host must say so, not crash */
  api->stream_create = stream_create;
  api->stream_destroy = stream_destroy;
  api->stream_synchronize = stream_synchronize;
  api->copy_h2d = copy_h2d;
  api->copy_d2h = copy_d2h;
  api->copy_d2d = copy_d2d;
  api->event_create = event_create;
  api->event_destroy = event_destroy;
  api->event_record = event_record;
  api->stream_wait_event = stream_wait_event;
  api->event_synchronize = event_synchronize;
  api->event_query = event_query;
  api->event_elapsed_ns = event_elapsed_ns;
  api->kernel_query = kernel_query;
  api->kernels = abi_probe_kernel_table();
}
