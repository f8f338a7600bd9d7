// comm_slots.h — the six device-collective slots of ABI 1.4 (comm_create_id .. comm_destroy) for a
// backend that sums F32 values across the devices of several ranks (plugin kit). Present only when
// the backend struct has all six members:
//   static hwinfer_error* create_comm_id(hwinfer_plugin&, hwinfer_comm_id* out);
//   static hwinfer_error* init_comm(hwinfer_device&, const hwinfer_comm_id&, uint32_t nranks,
//                                   uint32_t rank, uint64_t timeout_ns, hwinfer_comm** out);
//   static hwinfer_error* all_reduce_sum_f32(hwinfer_comm&, hwinfer_stream&, hwinfer_buffer&,
//                                            uint64_t offset, uint64_t count);
//   static hwinfer_error* comm_error(hwinfer_comm&);   // NULL while healthy
//   static void abort_comm(hwinfer_comm&);
//   static void destroy_comm(hwinfer_comm*);           // frees the handle too
// The kit checks the arguments first: NULLs, rank < nranks, the stream and the buffer on the
// communicator's device, offset F32-aligned and [offset, offset + 4 count) inside the buffer; a
// count of 0 enqueues nothing. It sets the handle's CommBase fields after init_comm.
#ifndef HWINFER_SDK_KIT_COMM_SLOTS_H_
#define HWINFER_SDK_KIT_COMM_SLOTS_H_

#include <cinttypes>
#include <type_traits>
#include <utility>

#include "hwinfer/kit/detect.h"
#include "hwinfer/kit/handles.h"
#include "hwinfer/kit/object_slots.h"
#include "hwinfer/kit/plugin_errors.h"
#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"

namespace hwinfer::kit {

// All six collective members (a backend with some only gets none of the slots).
HWINFER_KIT_DETECT(
    HasComms,
    (B::create_comm_id(std::declval<hwinfer_plugin&>(), std::declval<hwinfer_comm_id*>()),
     B::init_comm(std::declval<hwinfer_device&>(), std::declval<const hwinfer_comm_id&>(),
                  uint32_t{}, uint32_t{}, uint64_t{}, std::declval<hwinfer_comm**>()),
     B::all_reduce_sum_f32(std::declval<hwinfer_comm&>(), std::declval<hwinfer_stream&>(),
                           std::declval<hwinfer_buffer&>(), uint64_t{}, uint64_t{}),
     B::comm_error(std::declval<hwinfer_comm&>()), B::abort_comm(std::declval<hwinfer_comm&>()),
     B::destroy_comm(std::declval<hwinfer_comm*>())))

namespace slots {

template <typename B>
hwinfer_error* comm_create_id(PluginOf<B>* plugin, hwinfer_comm_id* out) noexcept {
  return backend::guarded(B::kName, "comm_create_id", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(
        backend::require_non_null(B::kName, plugin, "comm_create_id: plugin"));
    HWINFER_KIT_RETURN_IF_ERROR(backend::require_non_null(B::kName, out, "comm_create_id: out"));
    return B::create_comm_id(*plugin, out);
  });
}

template <typename B>
hwinfer_error* comm_init(DeviceOf<B>* device, const hwinfer_comm_id* id, uint32_t nranks,
                         uint32_t rank, uint64_t timeout_ns, CommOf<B>** out) noexcept {
  return backend::guarded(B::kName, "comm_init", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(backend::require_non_null(B::kName, device, "comm_init: device"));
    HWINFER_KIT_RETURN_IF_ERROR(backend::require_non_null(B::kName, id, "comm_init: id"));
    HWINFER_KIT_RETURN_IF_ERROR(backend::require_non_null(B::kName, out, "comm_init: out"));
    if (nranks == 0 || rank >= nranks) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "%s comm_init: rank %" PRIu32 " of %" PRIu32
                                " ranks; expected at least one rank and a rank below their count",
                                B::kName, rank, nranks);
    }
    CommOf<B>* comm = nullptr;
    HWINFER_KIT_RETURN_IF_ERROR(B::init_comm(*device, *id, nranks, rank, timeout_ns, &comm));
    comm->device = device;
    comm->nranks = nranks;
    comm->rank = rank;
    *out = comm;
    return nullptr;
  });
}

template <typename B>
hwinfer_error* comm_all_reduce_sum_f32(CommOf<B>* comm, StreamOf<B>* stream, BufferOf<B>* buffer,
                                       uint64_t offset, uint64_t count) noexcept {
  return backend::guarded(B::kName, "comm_all_reduce_sum_f32", [&]() -> hwinfer_error* {
    constexpr const char* kSlot = "comm_all_reduce_sum_f32";
    HWINFER_KIT_RETURN_IF_ERROR(
        backend::require_non_null(B::kName, comm, "comm_all_reduce_sum_f32: comm"));
    HWINFER_KIT_RETURN_IF_ERROR(
        backend::require_non_null(B::kName, stream, "comm_all_reduce_sum_f32: stream"));
    HWINFER_KIT_RETURN_IF_ERROR(
        backend::require_non_null(B::kName, buffer, "comm_all_reduce_sum_f32: buffer"));
    if (stream->device != comm->device) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "%s %s: the stream belongs to another device than the "
                                "communicator",
                                B::kName, kSlot);
    }
    HWINFER_KIT_RETURN_IF_ERROR(check_same_device<B>(*stream, *buffer, kSlot));
    if (offset % sizeof(float) != 0 || count > UINT64_MAX / sizeof(float)) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "%s %s: offset %" PRIu64 " and count %" PRIu64
                                "; expected an offset that is a multiple of 4 (F32 values)",
                                B::kName, kSlot, offset, count);
    }
    HWINFER_KIT_RETURN_IF_ERROR(backend::check_byte_range(B::kName, buffer->size_bytes, offset,
                                                          count * sizeof(float), kSlot));
    if (count == 0) return nullptr;
    return B::all_reduce_sum_f32(*comm, *stream, *buffer, offset, count);
  });
}

template <typename B>
hwinfer_error* comm_get_error(CommOf<B>* comm) noexcept {
  return backend::guarded(B::kName, "comm_get_error", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(backend::require_non_null(B::kName, comm, "comm_get_error: comm"));
    return B::comm_error(*comm);
  });
}

template <typename B>
void comm_abort(CommOf<B>* comm) noexcept {
  if (comm == nullptr) return;
  try {
    B::abort_comm(*comm);
  } catch (...) {
    // Nothing may escape across the ABI.
  }
}

template <typename B>
void comm_destroy(CommOf<B>* comm) noexcept {
  if (comm == nullptr) return;
  try {
    B::destroy_comm(comm);
  } catch (...) {
    // Nothing may escape across the ABI.
  }
}

}  // namespace slots
}  // namespace hwinfer::kit

#endif  // HWINFER_SDK_KIT_COMM_SLOTS_H_
