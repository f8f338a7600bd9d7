// vendor_library.h — opening a vendor library at run time (cuBLAS in vendor_blas.cpp, NCCL in
// vendor_comm.cpp): the first file of a list that dlopens and has every entry the caller needs
// (never unloaded: RTLD_NODELETE), or why none did; or, in the emulator's build, its in-process
// stand-in. No link-time dependency: the plugin loads and works where the library is absent.
#ifndef HWINFER_BACKENDS_CUDA_VENDOR_LIBRARY_H_
#define HWINFER_BACKENDS_CUDA_VENDOR_LIBRARY_H_

#include <dlfcn.h>

#include <functional>
#include <string>
#include <vector>

namespace hwinfer::gpu {

// Where a library's entries came from.
struct VendorLibrary {
  bool loaded = false;
  std::string file;     // the file that loaded (the stand-in's source file in process)
  std::string why_not;  // not loaded: every file tried, and why each failed
};

// name -> address of an entry, as dlsym answers.
using EntryLookup = std::function<void*(const char*)>;
// Fills the caller's entry pointers through the lookup; false with the first missing name.
using EntryResolver = std::function<bool(const EntryLookup& lookup, std::string* missing)>;

// *out = the entry |prefix| + |suffix| through |lookup|; a missing one is named in *missing (the
// first only). |Fn| is the entry's pointer type, decltype'd from the vendor header's declaration.
template <typename Fn>
void resolve_entry(const EntryLookup& lookup, const char* prefix, const char* suffix, Fn* out,
                   std::string* missing) {
  const std::string name = std::string(prefix) + suffix;
  void* address = lookup(name.c_str());
  if (address == nullptr && missing->empty()) *missing = name;
  *out = reinterpret_cast<Fn>(address);
}

// |in_process| (the emulator): resolves through |in_process_symbol|. Otherwise tries |files| in
// order: the first that dlopens and resolves loads.
inline VendorLibrary open_vendor_library(bool in_process, const char* in_process_file,
                                         void* (*in_process_symbol)(const char*),
                                         const std::vector<std::string>& files,
                                         const EntryResolver& resolve) {
  VendorLibrary library;
  if (in_process) {
    std::string missing;
    library.loaded = resolve(in_process_symbol, &missing);
    library.file = in_process_file;
    if (!library.loaded) library.why_not = library.file + " has no " + missing;
    return library;
  }
  for (const std::string& file : files) {
    void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    std::string missing;
    if (handle == nullptr) {
      const char* error = dlerror();
      missing = error != nullptr ? error : "dlopen failed";
    } else if (resolve([handle](const char* name) { return dlsym(handle, name); }, &missing)) {
      library.loaded = true;
      library.file = file;
      return library;
    } else {
      missing = file + " has no " + missing;
      dlclose(handle);
    }
    library.why_not += (library.why_not.empty() ? "" : "; ") + missing;
  }
  library.why_not = "tried " + std::to_string(files.size()) + " file(s): " + library.why_not;
  return library;
}

}  // namespace hwinfer::gpu

#endif  // HWINFER_BACKENDS_CUDA_VENDOR_LIBRARY_H_
