// vendor_blas.cpp — see vendor_blas.h. The library is opened through vendor_library.h; this is
// the only file of backends/cuda that includes the vendor folder's BLAS header
// (gpu_vendor_blas.h: cuBLAS's types in the cuda build, for TYPES only: the entries come from
// dlsym and their pointer types are decltype'd from the header's declarations, so the compiler
// checks every signature; an in-process stand-in in the emulator's; none in the hip build).
#include "vendor_blas.h"

#include <algorithm>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gpu_vendor_blas.h"  // the plugin's vendor folder: HWINFER_GPU_HAS_BLAS, blas::
#include "hwinfer/kit/dtype_info.h"
#include "kernel_util.h"
#include "launch.h"
#include "vendor_library.h"

namespace hwinfer::gpu {

#if HWINFER_GPU_HAS_BLAS

namespace blas {
using CreateFn = decltype(&HWINFER_GPU_BLAS(Create_v2));
using DestroyFn = decltype(&HWINFER_GPU_BLAS(Destroy_v2));
using SetStreamFn = decltype(&HWINFER_GPU_BLAS(SetStream_v2));
using SetWorkspaceFn = decltype(&HWINFER_GPU_BLAS(SetWorkspace_v2));
using GetPropertyFn = decltype(&HWINFER_GPU_BLAS(GetProperty));
}  // namespace blas

namespace {

// The library, loaded once per process (vendor_library.h), or why it is not.
struct Library {
  VendorLibrary opened;  // whether it loaded, from which file, or why not
  std::string version;   // "13.1.0", or "" when the library does not say
  blas::CreateFn create = nullptr;
  blas::DestroyFn destroy = nullptr;
  blas::SetStreamFn set_stream = nullptr;
  blas::SetWorkspaceFn set_workspace = nullptr;
  blas::GemmExFn gemm_ex = nullptr;
};

// Resolves every entry through |lookup| (name -> address); false naming the first one missing.
bool resolve_entries(const EntryLookup& lookup, Library* library, std::string* missing) {
  const auto entry = [&](const char* suffix, auto* out) {
    resolve_entry(lookup, blas::kSymbolPrefix, suffix, out, missing);
  };
  entry("Create_v2", &library->create);
  entry("Destroy_v2", &library->destroy);
  entry("SetStream_v2", &library->set_stream);
  entry("SetWorkspace_v2", &library->set_workspace);
  entry("GemmEx", &library->gemm_ex);
  if (!missing->empty()) return false;
  blas::GetPropertyFn get_property = nullptr;  // optional: only for the log line
  const std::string property_name = std::string(blas::kSymbolPrefix) + "GetProperty";
  get_property = reinterpret_cast<blas::GetPropertyFn>(lookup(property_name.c_str()));
  int parts[3] = {0, 0, 0};
  bool known = get_property != nullptr;
  for (int i = 0; i < 3 && known; ++i) {
    known = get_property(blas::kVersionParts[i], &parts[i]) == blas::kSuccess;
  }
  if (known) {
    library->version =
        std::to_string(parts[0]) + "." + std::to_string(parts[1]) + "." + std::to_string(parts[2]);
  }
  return true;
}

Library load_library() {
  Library library;
  library.opened = open_vendor_library(blas::kInProcess, blas::kInProcessFile,
                                       blas::in_process_symbol, blas::library_files(),
                                       [&](const EntryLookup& lookup, std::string* missing) {
                                         return resolve_entries(lookup, &library, missing);
                                       });
  return library;
}

const Library& library() {
  static const Library loaded = load_library();  // thread-safe, once per process
  return loaded;
}

const char* status_name(blas::Status status) {
  switch (static_cast<int>(status)) {
    case 0:
      return "SUCCESS";
    case 1:
      return "NOT_INITIALIZED";
    case 3:
      return "ALLOC_FAILED";
    case 7:
      return "INVALID_VALUE";
    case 8:
      return "ARCH_MISMATCH";
    case 11:
      return "MAPPING_ERROR";
    case 13:
      return "EXECUTION_FAILED";
    case 14:
      return "INTERNAL_ERROR";
    case 15:
      return "NOT_SUPPORTED";
    default:
      return "unknown status";
  }
}

hwinfer_error* check_blas(blas::Status status, const char* call) {
  if (status == blas::kSuccess) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_INTERNAL, "%s gemm: %s %s failed: %d (%s)", kPluginName,
                            blas::kName, call, static_cast<int>(status), status_name(status));
}

bool blas_type(uint32_t dtype, blas::DataType* out) {
  switch (dtype) {
    case HWINFER_DTYPE_F32:
      *out = blas::kF32;
      return true;
    case HWINFER_DTYPE_F16:
      *out = blas::kF16;
      return true;
    case HWINFER_DTYPE_BF16:
      *out = blas::kBF16;
      return true;
    default:
      return false;
  }
}

// One operand as the BLAS sees it: a row-major [rows, cols] view read column-major is its
// transpose, [cols, rows] with leading dimension = the row stride in elements.
struct BlasOperand {
  void* data = nullptr;
  blas::DataType type{};
  int ld = 0;
};

// False when the BLAS cannot address |view| ([rows, cols]): not F32/F16/BF16, columns not
// contiguous, a row stride (leading dimension) below cols or of 2^31 or more, or data not aligned
// to its element. A single row is never stepped over: its leading dimension is cols.
bool blas_operand(const hwinfer_tensor_view& view, int64_t rows, int64_t cols, BlasOperand* out) {
  if (!blas_type(view.dtype, &out->type)) return false;
  const auto element = static_cast<int64_t>(backend::dtype_element_bytes(view.dtype));
  if (cols > 1 && view.strides_bytes[1] != element) return false;
  if (view.strides_bytes[0] < 0 || view.strides_bytes[0] % element != 0) return false;
  const int64_t ld = rows == 1 ? cols : view.strides_bytes[0] / element;
  if (ld < cols || ld > INT32_MAX) return false;
  out->data = view_data(view);
  if (reinterpret_cast<uintptr_t>(out->data) % static_cast<uintptr_t>(element) != 0) return false;
  out->ld = static_cast<int>(ld);
  return true;
}

}  // namespace

// The plugin's vendor BLAS: the library and one handle per device (hwinfer_plugin::blas).
struct VendorBlas {
  const hwinfer_host_api* host = nullptr;
  const Library* library = nullptr;
  bool required = false;  // gemm=cublas: a handle that cannot be created is an error
  std::mutex mutex;       // guards the handles and every bind + GemmEx
  std::vector<blas::Handle> handles;
  std::vector<bool> unusable;  // [device]: Create failed under gemm=auto (built-in kernel)

  ~VendorBlas() {
    for (size_t ordinal = 0; ordinal < handles.size(); ++ordinal) {
      if (handles[ordinal] == nullptr) continue;
      if (GPU(SetDevice)(static_cast<int>(ordinal)) == gpuSuccess) {
        (void)library->destroy(handles[ordinal]);
      }
    }
  }

  // The handle of |ordinal| (the current device), created on first use; nullptr (no error) when
  // it cannot be created under gemm=auto. Call with |mutex| held.
  hwinfer_error* handle(uint32_t ordinal, blas::Handle* out) {
    *out = nullptr;
    if (unusable[ordinal]) return nullptr;
    if (handles[ordinal] == nullptr) {
      const blas::Status status = library->create(&handles[ordinal]);
      if (status != blas::kSuccess) {
        handles[ordinal] = nullptr;
        if (required) return check_blas(status, "Create");
        unusable[ordinal] = true;
        log_message(host, HWINFER_LOG_WARNING,
                    "gemm on device %" PRIu32
                    " uses the built-in kernel: %s Create failed: %d (%s)",
                    ordinal, blas::kName, static_cast<int>(status), status_name(status));
        return nullptr;
      }
    }
    *out = handles[ordinal];
    return nullptr;
  }
};

namespace {

// The handle of |stream|'s device bound to |stream| and to the stream's scratch: the workspace
// first, then |extra_bytes| at |extra| (256-byte aligned) for the caller; |lock| holds the
// vendor's mutex while the caller enqueues. handle == nullptr (no error): use the built-in kernel.
struct BoundHandle {
  std::unique_lock<std::mutex> lock;
  blas::Handle handle = nullptr;
  uint8_t* extra = nullptr;
};

hwinfer_error* bind_handle(hwinfer_stream* stream, VendorBlas* vendor, uint64_t extra_bytes,
                           BoundHandle* out) {
  // The stream's scratch area (while capturing: the graph's, graph.cpp) is the handle's workspace
  // while this stream uses it. Growing it waits for the stream, so it is taken before the lock.
  uint8_t* scratch = nullptr;
  GPU_RETURN_IF_ERROR(stream_scratch(stream, blas::kWorkspaceBytes + extra_bytes, &scratch));
  out->lock = std::unique_lock<std::mutex>(vendor->mutex);
  GPU_RETURN_IF_ERROR(vendor->handle(stream->device->ordinal, &out->handle));
  if (out->handle == nullptr) return nullptr;
  const Library& lib = *vendor->library;
  // SetStream first: it resets the workspace to the library's own.
  GPU_RETURN_IF_ERROR(check_blas(lib.set_stream(out->handle, stream->stream), "SetStream"));
  GPU_RETURN_IF_ERROR(
      check_blas(lib.set_workspace(out->handle, scratch, blas::kWorkspaceBytes), "SetWorkspace"));
  out->extra = scratch + blas::kWorkspaceBytes;  // kWorkspaceBytes is a multiple of 256
  return nullptr;
}

// F16 / BF16 weights [n, k] against F32 x and y: the BLAS takes no mixed operands, so the gemm
// goes through try_vendor_weight_product (the weights widened to F32).
bool mixed_weight_gemm(const hwinfer_gemm_desc& desc, const BlasOperand& a, const BlasOperand& b,
                       const BlasOperand& c, WeightProduct* out) {
  if (a.type != blas::kF32 || c.type != blas::kF32 || b.type == blas::kF32 ||
      desc.b_transposed == 0) {
    return false;
  }
  *out = WeightProduct{desc.m,
                       desc.n,
                       desc.k,
                       desc.alpha,
                       desc.beta,
                       static_cast<const float*>(a.data),
                       a.ld,
                       desc.b.dtype,
                       static_cast<const uint8_t*>(b.data),
                       int64_t{b.ld} * 2,
                       static_cast<float*>(c.data),
                       c.ld};
  return true;
}

}  // namespace

hwinfer_error* try_vendor_gemm(hwinfer_stream* stream, const hwinfer_gemm_desc& desc, bool* used) {
  *used = false;
  VendorBlas* vendor = stream->device->plugin->blas.get();
  if (vendor == nullptr || desc.m <= kGemvMaxRows) return nullptr;
  BlasOperand a, b, c;
  const int64_t b_rows = desc.b_transposed != 0 ? desc.n : desc.k;
  const int64_t b_cols = desc.b_transposed != 0 ? desc.k : desc.n;
  if (!blas_operand(desc.a, desc.m, desc.k, &a) || !blas_operand(desc.b, b_rows, b_cols, &b) ||
      !blas_operand(desc.c, desc.m, desc.n, &c)) {
    return nullptr;
  }
  if (WeightProduct product{}; a.type != b.type && mixed_weight_gemm(desc, a, b, c, &product)) {
    return try_vendor_weight_product(stream, product, used);
  }
  if (a.type != b.type || (c.type != blas::kF32 && c.type != a.type)) return nullptr;
  BoundHandle bound;
  GPU_RETURN_IF_ERROR(bind_handle(stream, vendor, 0, &bound));
  if (bound.handle == nullptr) return nullptr;
  // Column-major: C^T [n, m] = op(B)^T [n, k] @ A^T [k, m] (see vendor_blas.h).
  const float alpha = desc.alpha;
  const float beta = desc.beta;
  GPU_RETURN_IF_ERROR(check_blas(
      vendor->library->gemm_ex(bound.handle, desc.b_transposed != 0 ? blas::kOpT : blas::kOpN,
                               blas::kOpN, static_cast<int>(desc.n), static_cast<int>(desc.m),
                               static_cast<int>(desc.k), &alpha, b.data, b.type, b.ld, a.data,
                               a.type, a.ld, &beta, c.data, c.type, c.ld, blas::kCompute32F,
                               blas::kDefaultAlgo),
      "GemmEx"));
  *used = true;
  return nullptr;
}

hwinfer_error* try_vendor_weight_product(hwinfer_stream* stream, const WeightProduct& p,
                                         bool* used) {
  *used = false;
  VendorBlas* vendor = stream->device->plugin->blas.get();
  if (vendor == nullptr || p.m <= kGemvMaxRows || p.m > INT32_MAX || p.n > INT32_MAX ||
      p.k > INT32_MAX || p.x_ld < p.k || p.x_ld > INT32_MAX || p.y_ld < p.n || p.y_ld > INT32_MAX) {
    return nullptr;
  }
  // Rows of w per chunk: as many as kWidenChunkBytes of F32 holds, at least one.
  const int64_t row_f32_bytes = p.k * 4;
  const int64_t chunk_rows =
      std::max<int64_t>(1, std::min<int64_t>(p.n, blas::kWidenChunkBytes / row_f32_bytes));
  BoundHandle bound;
  GPU_RETURN_IF_ERROR(
      bind_handle(stream, vendor, static_cast<uint64_t>(chunk_rows * row_f32_bytes), &bound));
  if (bound.handle == nullptr) return nullptr;
  auto* widened = reinterpret_cast<float*>(bound.extra);
  // Column-major, per chunk of rows j0.. of w: y^T [rows, m] = W_chunk [rows, k] @ x^T [k, m],
  // W_chunk read transposed (its column-major view is [k, rows] with ld = k).
  for (int64_t j0 = 0; j0 < p.n; j0 += chunk_rows) {
    const int64_t rows = std::min(chunk_rows, p.n - j0);
    GPU_RETURN_IF_ERROR(
        check_runtime(launch_widen_rows(p.w_dtype, rows, p.k, p.w + j0 * p.w_row_bytes,
                                        p.w_row_bytes, widened, stream->stream),
                      "gemm", "widen kernel launch"));
    GPU_RETURN_IF_ERROR(check_blas(
        vendor->library->gemm_ex(bound.handle, blas::kOpT, blas::kOpN, static_cast<int>(rows),
                                 static_cast<int>(p.m), static_cast<int>(p.k), &p.alpha, widened,
                                 blas::kF32, static_cast<int>(p.k), p.x, blas::kF32,
                                 static_cast<int>(p.x_ld), &p.beta, p.y + j0, blas::kF32,
                                 static_cast<int>(p.y_ld), blas::kCompute32F, blas::kDefaultAlgo),
        "GemmEx"));
  }
  *used = true;
  return nullptr;
}

#else  // the hip plugin: no vendor BLAS

struct VendorBlas {};

hwinfer_error* try_vendor_gemm(hwinfer_stream*, const hwinfer_gemm_desc&, bool* used) {
  *used = false;
  return nullptr;
}

hwinfer_error* try_vendor_weight_product(hwinfer_stream*, const WeightProduct&, bool* used) {
  *used = false;
  return nullptr;
}

#endif  // HWINFER_GPU_HAS_BLAS

hwinfer_error* parse_gemm_option(const char* value, GemmOption* out) {
  const std::string_view text = value;
  if (text == "auto") {
    *out = GemmOption::kAuto;
  } else if (text == "builtin") {
    *out = GemmOption::kBuiltin;
  } else if (text == "cublas" || text == "blas") {
#if HWINFER_GPU_HAS_BLAS
    *out = GemmOption::kVendorBlas;
#else
    return hwinfer_make_error(
        HWINFER_STATUS_INVALID_ARGUMENT,
        "%s plugin_init: option gemm=%s: the %s plugin has no vendor BLAS (%s); its gemm is the "
        "built-in kernel: use gemm=auto or gemm=builtin",
        kPluginName, value, kPluginName, blas::kNoBlasReason);
#endif
  } else {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s plugin_init: option gemm: unknown value '%s'; expected auto, "
                              "cublas or builtin",
                              kPluginName, value);
  }
  return nullptr;
}

hwinfer_error* select_gemm_path(hwinfer_plugin* plugin, GemmOption option) {
  plugin->blas.reset();
#if HWINFER_GPU_HAS_BLAS
  if (option == GemmOption::kBuiltin) {
    log_message(plugin->host, HWINFER_LOG_INFO,
                "gemm uses the built-in kernel (option gemm=builtin)");
    return nullptr;
  }
  if (option == GemmOption::kAuto && plugin->devices.empty()) return nullptr;  // nothing to run
  const Library& lib = library();
  if (!lib.opened.loaded) {
    if (option == GemmOption::kVendorBlas) {
      return hwinfer_make_error(
          HWINFER_STATUS_FAILED_PRECONDITION,
          "%s plugin_init: option gemm=cublas, but %s cannot be loaded (%s); "
          "install libcublas (the CUDA toolkit, or pip's nvidia-cublas) where "
          "the dynamic loader finds it (LD_LIBRARY_PATH), name the file in "
          "HWINFER_CUBLAS_LIBRARY, or use gemm=auto",
          kPluginName, blas::kName, lib.opened.why_not.c_str());
    }
    log_message(plugin->host, HWINFER_LOG_INFO, "gemm uses the built-in kernel: %s not found (%s)",
                blas::kName, lib.opened.why_not.c_str());
    return nullptr;
  }
  auto vendor = std::make_shared<VendorBlas>();
  vendor->host = plugin->host;
  vendor->library = &lib;
  vendor->required = option == GemmOption::kVendorBlas;
  vendor->handles.assign(plugin->devices.size(), nullptr);
  vendor->unusable.assign(plugin->devices.size(), false);
  plugin->blas = std::move(vendor);
  log_message(plugin->host, HWINFER_LOG_INFO,
              "gemm uses %s%s%s (%s) for m > %" PRId64
              " with A and B of one dtype (F32, F16, BF16), fp32 compute; other gemms use the "
              "built-in kernel (option gemm=%s)",
              blas::kName, lib.version.empty() ? "" : " ", lib.version.c_str(),
              lib.opened.file.c_str(), kGemvMaxRows,
              option == GemmOption::kAuto ? "auto" : "cublas");
#else
  (void)option;  // parse_gemm_option rejected cublas
  if (!plugin->devices.empty()) {
    log_message(plugin->host, HWINFER_LOG_INFO,
                "gemm uses the built-in kernel: the %s plugin loads no vendor BLAS (%s)",
                kPluginName, blas::kNoBlasReason);
  }
#endif
  return nullptr;
}

}  // namespace hwinfer::gpu
