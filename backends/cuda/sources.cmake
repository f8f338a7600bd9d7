# The GPU backend's sources (this folder), included by backends/cuda, backends/hip and
# tests/gpu-emu, which compile them into their plugin with their vendor's compiler: HWINFER_GPU_HOST_SOURCES are plain C++
# (the host compiler, against the vendor's runtime API), HWINFER_GPU_KERNEL_SOURCES are CUDA C++
# (nvcc, or hipcc for HIP).
set(HWINFER_CUDA_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR})
set(HWINFER_GPU_HOST_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/plugin_entry.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device.cpp
  ${CMAKE_CURRENT_LIST_DIR}/memory.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stream.cpp
  ${CMAKE_CURRENT_LIST_DIR}/event.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graph.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernels.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernels_probe.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernels_rows.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernels_kv.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernels_gemm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/vendor_blas.cpp
  ${CMAKE_CURRENT_LIST_DIR}/vendor_comm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernels_quant.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernels_attention.cpp)
set(HWINFER_GPU_KERNEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/probe.cu
  ${CMAKE_CURRENT_LIST_DIR}/rows.cu
  ${CMAKE_CURRENT_LIST_DIR}/kv_append.cu
  ${CMAKE_CURRENT_LIST_DIR}/gemv.cu
  ${CMAKE_CURRENT_LIST_DIR}/gemm.cu
  ${CMAKE_CURRENT_LIST_DIR}/matmul_q.cu
  ${CMAKE_CURRENT_LIST_DIR}/matmul_q_dequant.cu
  ${CMAKE_CURRENT_LIST_DIR}/widen.cu
  ${CMAKE_CURRENT_LIST_DIR}/attention_decode.cu
  ${CMAKE_CURRENT_LIST_DIR}/attention_prefill.cu)
# Headers the kernels include (the HIP custom commands list them as dependencies).
set(HWINFER_GPU_KERNEL_HEADERS
  ${CMAKE_CURRENT_LIST_DIR}/gpu_device.h
  ${CMAKE_CURRENT_LIST_DIR}/gpu_runtime.h
  ${CMAKE_CURRENT_LIST_DIR}/device_errors.h
  ${CMAKE_CURRENT_LIST_DIR}/launch.h
  ${CMAKE_CURRENT_LIST_DIR}/paged_kv.h
  ${CMAKE_CURRENT_LIST_DIR}/attention_tile.h
  ${CMAKE_CURRENT_LIST_DIR}/weight_blocks.h)
