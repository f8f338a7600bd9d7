// cpu_backend.h — the CPU plugin as the plugin kit sees it (sdk/include/hwinfer/kit/plugin_api.h
// says what each member is for): host memory from kit::HostMemory, the kernels from CpuKernels, and
// the device, stream and event calls declared here, each defined in the file named. The kit checks
// every argument, counts live objects and guards every slot; these run on valid handles.
#ifndef HWINFER_BACKENDS_CPU_CPU_BACKEND_H_
#define HWINFER_BACKENDS_CPU_CPU_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "cpu_internal.h"
#include "cpu_kernels.h"
#include "hwinfer/kit/check_context.h"
#include "hwinfer/kit/host_memory.h"

namespace hwinfer::cpu {

struct CpuBackend : kit::HostMemory<CpuBackend>, CpuKernels {
  static constexpr const char* kName = kPluginName;
  static constexpr const char* kVersion = HWINFER_CPU_PLUGIN_VERSION;

  // plugin_entry.cpp: options, the thread pool
  static hwinfer_error* init(const hwinfer_host_api& host, const hwinfer_option* options,
                             size_t n_options, std::unique_ptr<hwinfer_plugin>* out);
  // device.cpp: the machine's identity and memory
  static hwinfer_error* device_info(const hwinfer_plugin& plugin, uint32_t ordinal,
                                    hwinfer_device_info& info);
  static hwinfer_error* open_device(hwinfer_plugin& plugin, uint32_t ordinal,
                                    const hwinfer_option* options, size_t n_options,
                                    std::unique_ptr<hwinfer_device>* out);
  // "cpu" messages, views on |device|; no kernel_limits hook: the CPU runs every descriptor the
  // shared checks accept, every block-quantized weight dtype included.
  static backend::CheckContext check_context(const hwinfer_device& device, bool require_buffers) {
    return kit::host_check_context(kPluginName, device, require_buffers);
  }
  // stream.cpp: the stream's worker runs copies and kernels in order
  static hwinfer_error* init_stream(hwinfer_device& device, hwinfer_stream& stream);
  static hwinfer_error* synchronize(hwinfer_stream& stream);
  static hwinfer_error* submit_copy(hwinfer_stream& stream, uint8_t* dst, const uint8_t* src,
                                    size_t size);
  // event.cpp: generations and steady_clock timestamps
  static hwinfer_error* record(hwinfer_event& event, hwinfer_stream& stream);
  static hwinfer_error* wait(hwinfer_stream& stream, hwinfer_event& event);
  static hwinfer_error* synchronize(hwinfer_event& event);
  static hwinfer_error* is_complete(hwinfer_event& event, bool* complete);
  static hwinfer_error* elapsed_ns(hwinfer_event& start, hwinfer_event& end, uint64_t* out);
  // comm.cpp: device collectives over POSIX shared memory (the ranks of this machine)
  static hwinfer_error* create_comm_id(hwinfer_plugin& plugin, hwinfer_comm_id* out);
  static hwinfer_error* init_comm(hwinfer_device& device, const hwinfer_comm_id& id,
                                  uint32_t nranks, uint32_t rank, uint64_t timeout_ns,
                                  hwinfer_comm** out);
  static hwinfer_error* all_reduce_sum_f32(hwinfer_comm& comm, hwinfer_stream& stream,
                                           hwinfer_buffer& buffer, uint64_t offset, uint64_t count);
  static hwinfer_error* comm_error(hwinfer_comm& comm);
  static void abort_comm(hwinfer_comm& comm);
  static void destroy_comm(hwinfer_comm* comm);
};

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_CPU_BACKEND_H_
