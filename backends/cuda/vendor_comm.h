// vendor_comm.h — the GPU plugins' device collectives (plugin ABI 1.4) through the vendor's
// collective library, loaded at run time like the BLAS (vendor_library.h): NCCL in the cuda plugin
// (libnccl.so.2, then libnccl.so; HWINFER_NCCL_LIBRARY names the one file to try instead), the
// emulator's stand-in (emu_nccl.h) in the gpuemu plugin, none in the hip plugin (Debian has no
// RCCL), whose GpuBackend then lacks the six members, so the kit leaves the slots NULL.
//
// The library is opened at the first comm_create_id / comm_init, never by plugin_init: a run
// without tensor parallelism never loads it. Without it the slots answer UNAVAILABLE naming the
// files tried, and `--tp-collectives auto` sums through host memory instead.
//
// comm_init makes a NON-BLOCKING communicator (config.blocking = 0) and polls its state
// (CommGetAsyncError) every millisecond until every rank joined or |timeout_ns| passed; past it the
// communicator is aborted (CommAbort), so a join short of ranks ends in time (a blocking init
// cannot be ended). all_reduce_sum_f32 is AllReduce(float32, sum, in place) on the stream. An
// NCCL collective that CommAbort ends leaves no error on its stream, so each stream keeps the
// communicators it ran since its last synchronize (hwinfer_stream::all_reduced_by), and
// stream_synchronize reports an aborted or broken one (comm_error_after_sync), once, as plugin.h
// asks. Every call into the library on one communicator holds its mutex, so comm_abort from a
// watchdog thread is safe against the enqueues and comm_get_error; after an abort the handle is
// gone (CommAbort frees it) and destroy only frees ours. NCCL refuses two ranks on one GPU
// (plugin.h: INVALID_ARGUMENT); the emulator's stand-in accepts them.
#ifndef HWINFER_BACKENDS_CUDA_VENDOR_COMM_H_
#define HWINFER_BACKENDS_CUDA_VENDOR_COMM_H_

#include "gpu_internal.h"

namespace hwinfer::gpu {

// stream_synchronize, once the stream's work has finished: UNAVAILABLE naming the communicator
// when one whose all-reduces this stream ran since its last synchronize was aborted or is broken;
// NULL otherwise. Forgets the communicators either way.
hwinfer_error* comm_error_after_sync(hwinfer_stream* stream);

}  // namespace hwinfer::gpu

#endif  // HWINFER_BACKENDS_CUDA_VENDOR_COMM_H_
