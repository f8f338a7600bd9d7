// comm.cpp — the CPU plugin's device collectives (ABI 1.4): a communicator is a ShmGroup of the
// ranks on this machine, and an all-reduce is a task on the stream's worker, in order with the
// stream's kernels. The id carries a magic string and the segment's random name.
#include <cstring>
#include <string>

#include "cpu_backend.h"

namespace hwinfer::cpu {
namespace {

constexpr char kIdMagic[] = "hwinfer-cpu-shm1";  // 16 bytes, then the segment's name
constexpr size_t kMagicBytes = sizeof(kIdMagic) - 1;
static_assert(kMagicBytes + ShmGroup::kNameBytes <= HWINFER_COMM_ID_BYTES);

}  // namespace

hwinfer_error* CpuBackend::create_comm_id(hwinfer_plugin& plugin, hwinfer_comm_id* out) {
  (void)plugin;
  hwinfer_comm_id id{};
  std::memcpy(id.bytes, kIdMagic, kMagicBytes);
  uint8_t name[ShmGroup::kNameBytes];
  std::string error;
  if (!ShmGroup::RandomName(name, &error)) {
    return hwinfer_make_error(HWINFER_STATUS_UNAVAILABLE, "cpu comm_create_id: %s", error.c_str());
  }
  std::memcpy(id.bytes + kMagicBytes, name, sizeof(name));
  *out = id;
  return nullptr;
}

hwinfer_error* CpuBackend::init_comm(hwinfer_device& device, const hwinfer_comm_id& id,
                                     uint32_t nranks, uint32_t rank, uint64_t timeout_ns,
                                     hwinfer_comm** out) {
  (void)device;
  if (std::memcmp(id.bytes, kIdMagic, kMagicBytes) != 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu comm_init: the id was not made by the cpu plugin's "
                              "comm_create_id");
  }
  uint8_t name[ShmGroup::kNameBytes];
  std::memcpy(name, id.bytes + kMagicBytes, sizeof(name));
  std::string error;
  std::unique_ptr<ShmGroup> group = ShmGroup::Join(name, nranks, rank, timeout_ns, &error);
  if (group == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_UNAVAILABLE, "cpu comm_init (rank %u of %u): %s", rank,
                              nranks, error.c_str());
  }
  auto comm = std::make_unique<hwinfer_comm>();
  comm->group = std::move(group);
  *out = comm.release();
  return nullptr;
}

hwinfer_error* CpuBackend::all_reduce_sum_f32(hwinfer_comm& comm, hwinfer_stream& stream,
                                              hwinfer_buffer& buffer, uint64_t offset,
                                              uint64_t count) {
  float* data = reinterpret_cast<float*>(buffer.data + offset);
  ShmGroup* group = comm.group.get();
  return stream.worker.enqueue([group, data, count]() -> hwinfer_error* {
    std::string error;
    if (group->AllReduceSum(data, static_cast<size_t>(count), &error)) return nullptr;
    return hwinfer_make_error(HWINFER_STATUS_UNAVAILABLE, "cpu all-reduce (rank %u of %u): %s",
                              group->rank(), group->nranks(), error.c_str());
  });
}

hwinfer_error* CpuBackend::comm_error(hwinfer_comm& comm) {
  const std::string reason = comm.group->BrokenReason();
  if (reason.empty()) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_UNAVAILABLE, "cpu communicator (rank %u of %u): %s",
                            comm.group->rank(), comm.group->nranks(), reason.c_str());
}

void CpuBackend::abort_comm(hwinfer_comm& comm) { comm.group->Abort(); }

void CpuBackend::destroy_comm(hwinfer_comm* comm) { delete comm; }

}  // namespace hwinfer::cpu
