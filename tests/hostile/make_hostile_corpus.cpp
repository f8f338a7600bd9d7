// make_hostile_corpus.cpp — writes the generated half of the hostile-input corpus (tests/hostile):
// the tiny Llama file with one absurd value each, files that are not files (FIFOs), YAML nested
// past the parser's depth, plugin folders with broken plugins, and the configs that point at them
// (absolute paths, so they must be written here). Run by ctest as a fixture before the cases.
// Usage: make_hostile_corpus OUT_DIR TINY_LLAMA_F32_GGUF TEST_PLUGIN_DIR
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "gguf_edit.h"
#include "hwinfer/plugin.h"

namespace {

namespace fs = std::filesystem;
using hwinfer::GgufValue;
using hwinfer::test::Metadata;
using hwinfer::test::TensorCopy;

bool Check(const hwinfer::Status& status, const std::string& what) {
  if (!status.ok())
    std::fprintf(stderr, "make_hostile_corpus: %s: %s\n", what.c_str(), status.ToString().c_str());
  return status.ok();
}

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// tiny-llama with one metadata key set to |value|.
bool WithKey(const std::string& tiny, const fs::path& out, const std::string& key,
             GgufValue value) {
  return Check(
      hwinfer::test::WriteEditedGguf(
          tiny, [&](Metadata& kvs, auto&) { hwinfer::test::SetKv(kvs, key, value); }, out.string()),
      out.string());
}

bool WriteModels(const std::string& tiny, const fs::path& dir) {
  bool ok = WithKey(tiny, dir / "block-count-max.gguf", "llama.block_count",
                    GgufValue::Uint32(0xFFFFFFFFu));
  ok &= WithKey(tiny, dir / "block-count-50m.gguf", "llama.block_count",
                GgufValue::Uint32(50000000u));
  ok &= WithKey(tiny, dir / "block-count-short.gguf", "llama.block_count", GgufValue::Uint32(1));
  ok &= WithKey(tiny, dir / "context-max.gguf", "llama.context_length",
                GgufValue::Uint32(0xFFFFFFFFu));
  // A terminal escape sequence in a value the error message quotes.
  ok &= WithKey(tiny, dir / "escape-arch.gguf", "general.architecture",
                GgufValue::String("llama\x1b[2J\x1b[31mRED\r"));
  ok &= Check(hwinfer::test::WriteEditedGguf(
                  tiny,
                  [](auto&, std::vector<TensorCopy>& tensors) {
                    hwinfer::test::FillF32(
                        *hwinfer::test::FindTensorCopy(tensors, "output_norm.weight"),
                        std::numeric_limits<float>::infinity());
                  },
                  (dir / "inf-weights.gguf").string()),
              "inf-weights.gguf");
  auto aliased = hwinfer::test::EditedGguf(tiny, [](auto&, auto&) {});
  if (!Check(aliased.status(), "aliased-tensors.gguf")) return false;
  ok &= hwinfer::test::AliasTensorData(*aliased, "blk.0.attn_v.weight", "blk.0.attn_k.weight");
  WriteText(dir / "aliased-tensors.gguf", std::string(aliased->begin(), aliased->end()));
  // F32 data labelled Q4_K (issue 15): the type says 36864 bytes, the data holds 262144.
  auto retyped = hwinfer::test::EditedGguf(tiny, [](auto&, auto&) {});
  if (!Check(retyped.status(), "q4k-label-on-f32.gguf")) return false;
  ok &= hwinfer::test::SetTensorType(*retyped, "blk.0.attn_q.weight", HWINFER_DTYPE_Q4_K);
  WriteText(dir / "q4k-label-on-f32.gguf", std::string(retyped->begin(), retyped->end()));
  return ok;
}

// Configs whose paths must be absolute (they name generated files).
void WriteConfigs(const fs::path& dir, const std::string& plugins) {
  WriteText(dir / "bench-context-max.yaml",
            "backends:\n  - name: cpu\nmodel: {path: " + (dir / "context-max.gguf").string() +
                "}\nworkload: {num_requests: 3, input: 12, output: 4}\n");
  WriteText(dir / "bench-fifo-workload.yaml",
            "backends:\n  - name: cpu\nmodel: {path: " + (dir / "context-max.gguf").string() +
                "}\nworkload: {file: " + (dir / "fifo.jsonl").string() + "}\n");
  WriteText(dir / "config-many-devices.yaml",
            "backends:\n  - name: abi-hostile\n    path: " + plugins +
                "/hwinfer-abi-hostile-many-devices.so\n");
}

bool MakeFifos(const fs::path& dir) {
  bool ok = true;
  for (const char* name : {"fifo.gguf", "fifo.yaml", "fifo.jsonl", "fifo.json"}) {
    const fs::path path = dir / name;
    ok &= ::mkfifo(path.c_str(), 0600) == 0;
  }
  return ok;
}

// Plugin folders for the search path: a 0-byte file, and plugins that misbehave.
bool MakePluginFolders(const fs::path& dir, const std::string& plugins) {
  std::error_code error;
  fs::create_directories(dir / "plugins-broken", error);
  fs::create_directories(dir / "plugins-device-lost", error);
  WriteText(dir / "plugins-broken" / "hwinfer-empty.so", "");
  fs::create_symlink(plugins + "/hwinfer-abi-hostile-many-devices.so",
                     dir / "plugins-broken" / "hwinfer-many.so", error);
  fs::create_symlink(plugins + "/hwinfer-abi-hostile-device-open-fails.so",
                     dir / "plugins-device-lost" / "hwinfer-lost.so", error);
  return !error;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s OUT_DIR TINY_LLAMA_F32_GGUF TEST_PLUGIN_DIR\n", argv[0]);
    return 2;
  }
  const fs::path dir = argv[1];
  std::error_code error;
  fs::remove_all(dir, error);
  fs::create_directories(dir, error);
  if (error) {
    std::fprintf(stderr, "make_hostile_corpus: cannot create %s\n", dir.c_str());
    return 1;
  }
  bool ok = WriteModels(argv[2], dir);
  ok &= MakeFifos(dir);
  ok &= MakePluginFolders(dir, argv[3]);
  WriteConfigs(dir, argv[3]);
  // 500 nested flow sequences: past yaml-cpp's recursion guard ("bad file" before).
  WriteText(dir / "deep.yaml", "backends: " + std::string(500, '[') + std::string(500, ']') + "\n");
  if (!ok) std::fprintf(stderr, "make_hostile_corpus: some files could not be written\n");
  return ok ? 0 : 1;
}
