// kernels_probe.cpp — the bandwidth probe's enqueue slot: the shared check, then probe.cu's
// launcher with the device's multiprocessor count (the grid covers every one several times).
#include "hwinfer/kit/kernel_checks.h"
#include "kernel_util.h"
#include "launch.h"

namespace hwinfer::gpu {

hwinfer_error* GpuBackend::enqueue(hwinfer_stream& stream,
                                   const hwinfer_bandwidth_probe_desc& desc) {
  if (desc.size_bytes == 0 || desc.iterations == 0) return nullptr;
  const bool reads = desc.mode != HWINFER_PROBE_WRITE;
  const bool writes = desc.mode != HWINFER_PROBE_READ;
  GPU_RETURN_IF_ERROR(use_device(stream.device, "bandwidth_probe"));
  const gpuError_t result = launch_bandwidth_probe(
      desc.mode, desc.iterations, desc.size_bytes, reads ? view_data(desc.src) : nullptr,
      writes ? view_data(desc.dst) : nullptr,
      desc.mode == HWINFER_PROBE_READ ? view_data(desc.sink) : nullptr,
      stream.device->info.compute_units, stream.stream);
  return check_runtime(result, "bandwidth_probe", "kernel launch");
}

}  // namespace hwinfer::gpu
