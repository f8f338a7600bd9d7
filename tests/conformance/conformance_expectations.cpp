// conformance_expectations.cpp — expectations YAML -> {pattern, reason} lists, glob matching, and
// where the in-tree / installed files live. Must not touch backends or GoogleTest state.
#include "conformance_expectations.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "hwinfer/plugin_loader.h"

namespace hwinfer::conformance {
namespace {

namespace fs = std::filesystem;

std::string Where(const std::string& file, const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.line < 0) return file;
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

Status Malformed(const std::string& file, const YAML::Node& node, const std::string& what) {
  return InvalidArgument(Where(file, node) + ": " + what +
                         "; expected `unsupported:` and/or `expected_failures:` lists of "
                         "{pattern: \"Suite.Test\", reason: \"why\"}");
}

StatusOr<std::string> NonEmptyString(const std::string& file, const YAML::Node& entry,
                                     const char* key) {
  const YAML::Node value = entry[key];
  if (!value) return Malformed(file, entry, std::string("missing `") + key + "`");
  if (!value.IsScalar() || value.Scalar().empty()) {
    return Malformed(file, value, std::string("`") + key + "` must be a non-empty string");
  }
  return value.Scalar();
}

StatusOr<std::vector<Expectation>> ParseList(const std::string& file, const YAML::Node& list) {
  std::vector<Expectation> out;
  if (list.IsNull()) return out;  // `unsupported:` with nothing after it
  if (!list.IsSequence()) return Malformed(file, list, "not a list");
  for (const YAML::Node& entry : list) {
    if (!entry.IsMap()) return Malformed(file, entry, "list entry is not a map");
    for (const auto& item : entry) {
      const std::string key = item.first.Scalar();
      if (key != "pattern" && key != "reason") {
        return Malformed(file, item.first, "unknown key `" + key + "`");
      }
    }
    Expectation expectation;
    HWINFER_ASSIGN_OR_RETURN(expectation.pattern, NonEmptyString(file, entry, "pattern"));
    HWINFER_ASSIGN_OR_RETURN(expectation.reason, NonEmptyString(file, entry, "reason"));
    out.push_back(std::move(expectation));
  }
  return out;
}

}  // namespace

bool GlobMatch(const std::string& pattern, const std::string& text) {
  // Iterative matcher with single-star backtracking: O(|pattern| * |text|) worst case.
  size_t p = 0, t = 0;
  size_t star = std::string::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

const Expectation* FindExpectation(const std::vector<Expectation>& list,
                                   const std::string& test_name) {
  for (const Expectation& expectation : list) {
    if (GlobMatch(expectation.pattern, test_name)) return &expectation;
  }
  return nullptr;
}

StatusOr<Expectations> ParseExpectations(const std::string& yaml_text,
                                         const std::string& display_name) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(display_name + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  Expectations out;
  out.source = display_name;
  if (root.IsNull()) return out;  // an empty file declares nothing
  if (!root.IsMap()) return Malformed(display_name, root, "the top level is not a map");
  for (const auto& item : root) {
    const std::string key = item.first.Scalar();
    if (key == "unsupported") {
      HWINFER_ASSIGN_OR_RETURN(out.unsupported, ParseList(display_name, item.second));
    } else if (key == "expected_failures") {
      HWINFER_ASSIGN_OR_RETURN(out.expected_failures, ParseList(display_name, item.second));
    } else {
      return Malformed(display_name, item.first, "unknown key `" + key + "`");
    }
  }
  return out;
}

StatusOr<Expectations> LoadExpectations(const std::string& path) {
  std::ifstream file(path);
  if (!file) return NotFound("expectations file '" + path + "' cannot be read");
  std::stringstream text;
  text << file.rdbuf();
  return ParseExpectations(text.str(), path);
}

std::string FindExpectationsFile(const std::string& backend_name) {
  const std::string file = backend_name + ".yaml";
  // Installed: <prefix>/<libdir>/hwinfer/plugins -> <prefix>/share/hwinfer/conformance.
  const fs::path installed =
      fs::path(DefaultPluginDir()) / HWINFER_CONFORMANCE_EXPECTATIONS_FROM_PLUGIN_DIR / file;
  const fs::path in_tree = fs::path(HWINFER_CONFORMANCE_SOURCE_EXPECTATIONS_DIR) / file;
  for (const fs::path& candidate : {installed, in_tree}) {
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return candidate.lexically_normal().string();
  }
  return "";
}

}  // namespace hwinfer::conformance
