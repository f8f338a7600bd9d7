// yaml_checks.cpp — strict YAML helpers for the config parsers (see yaml_checks.h).
//
// Must not know any schema and must not let a yaml-cpp exception escape: every failure is a
// one-line InvalidArgument (or NotFound for a missing file) that starts with file:line:column.
#include "config/yaml_checks.h"

#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "hwinfer/input_file.h"
#include "hwinfer/text_escape.h"

namespace hwinfer::config_internal {
namespace {

std::string Lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Optimal-string-alignment distance: insertions, deletions, substitutions and adjacent
// transpositions each cost 1.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

Status TypeError(const std::string& file, const MapEntry& entry, const std::string& expected) {
  return ErrorAt(ValueLocation(file, entry),
                 Quote(entry.key) + " must be " + expected + "; got " + Describe(entry.value));
}

}  // namespace

std::string Quote(std::string_view text) {
  constexpr size_t kMaxShown = 60;
  std::string out = "'" + EscapeControlCharacters(text.substr(0, kMaxShown));
  if (text.size() > kMaxShown) out += "...";
  return out + "'";
}

SourceLocation LocationOf(const std::string& file, const YAML::Node& node) {
  SourceLocation location;
  location.file = file;
  const YAML::Mark mark = node.Mark();
  if (!mark.is_null() && mark.line >= 0 && mark.column >= 0) {
    location.line = mark.line + 1;
    location.column = mark.column + 1;
  }
  return location;
}

SourceLocation ValueLocation(const std::string& file, const MapEntry& entry) {
  if (!entry.value.IsDefined() || entry.value.IsNull()) return LocationOf(file, entry.key_node);
  return LocationOf(file, entry.value);
}

Status ErrorAt(const SourceLocation& location, const std::string& message) {
  return InvalidArgument(location.ToString() + ": " + message);
}

std::string Describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  return Quote(node.Scalar());
}

StatusOr<std::string> ReadTextFile(const std::string& path, const std::string& what) {
  return ReadInputFile(path, what, kMaxConfigFileBytes);
}

StatusOr<YAML::Node> ParseSingleDocument(const std::string& text, const std::string& file,
                                         const std::string& expected) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own message for this is "bad file".
    return ErrorAt(SourceLocation{file, e.mark.line + 1, e.mark.column + 1},
                   "malformed YAML: nested too deeply (the parser gives up at a recursion depth "
                   "of " +
                       std::to_string(e.depth()) + "; a config is a few levels deep)");
  } catch (const YAML::Exception& e) {
    SourceLocation location{file, 0, 0};
    if (!e.mark.is_null()) {
      location.line = e.mark.line + 1;
      location.column = e.mark.column + 1;
    }
    return ErrorAt(location, "malformed YAML: " + e.msg);
  }
  if (documents.empty() || (documents.size() == 1 && documents[0].IsNull())) {
    return InvalidArgument(file + ": the file holds no YAML content; expected " + expected);
  }
  if (documents.size() > 1) {
    return ErrorAt(LocationOf(file, documents[1]),
                   "a second YAML document starts here; expected exactly one document");
  }
  return documents[0];
}

std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string_view>& candidates) {
  const std::string lowered = Lowercase(word);
  std::optional<std::string> best;
  size_t best_distance = 3;
  for (std::string_view candidate : candidates) {
    const size_t distance = EditDistance(lowered, Lowercase(candidate));
    // A one- or two-letter word is "close" to everything; require the edit to be smaller.
    if (distance < best_distance && distance < lowered.size()) {
      best_distance = distance;
      best = std::string(candidate);
    }
  }
  // "warn" -> "warning", "dev" -> "devices": a clear prefix is as good a hint.
  for (std::string_view candidate : candidates) {
    if (best || lowered.size() < 3) break;
    if (Lowercase(candidate).starts_with(lowered)) best = std::string(candidate);
  }
  return best;
}

std::string SuggestionFor(std::string_view word, const std::vector<std::string_view>& candidates) {
  const std::optional<std::string> match = ClosestMatch(word, candidates);
  return match ? "did you mean '" + *match + "'? " : "";
}

StatusOr<std::vector<MapEntry>> ReadMap(const std::string& file, const YAML::Node& node,
                                        const SourceLocation& location, const std::string& what,
                                        const std::vector<std::string_view>& allowed) {
  if (!node.IsMap()) return ErrorAt(location, what + " must be a map; got " + Describe(node));
  std::vector<MapEntry> entries;
  for (const auto& pair : node) {
    const YAML::Node key = pair.first;
    if (!key.IsScalar()) {
      return ErrorAt(LocationOf(file, key),
                     "keys of " + what + " must be plain strings; got " + Describe(key));
    }
    const std::string name = key.Scalar();
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return ErrorAt(LocationOf(file, key), "unknown key " + Quote(name) + " in " + what + "; " +
                                                SuggestionFor(name, allowed) +
                                                "expected one of: " + JoinKeys(allowed));
    }
    for (const MapEntry& earlier : entries) {
      if (earlier.key == name) {
        return ErrorAt(LocationOf(file, key),
                       "key " + Quote(name) + " appears twice in " + what + " (first at " +
                           LocationOf(file, earlier.key_node).ToString() + "); keep one");
      }
    }
    entries.push_back(MapEntry{name, key, pair.second});
  }
  return entries;
}

Status RequireKey(const std::string& file, const YAML::Node& map, const std::string& what,
                  const std::vector<MapEntry>& entries, std::string_view key) {
  for (const MapEntry& entry : entries) {
    if (entry.key == key) return Status::Ok();
  }
  return ErrorAt(LocationOf(file, map),
                 what + " is missing required key '" + std::string(key) + "'");
}

StatusOr<std::string> GetString(const std::string& file, const MapEntry& entry) {
  if (!entry.value.IsScalar()) return TypeError(file, entry, "a string");
  if (entry.value.Scalar().empty()) return TypeError(file, entry, "a non-empty string");
  return entry.value.Scalar();
}

StatusOr<int64_t> GetInteger(const std::string& file, const MapEntry& entry) {
  if (!entry.value.IsScalar()) return TypeError(file, entry, "an integer");
  const std::optional<int64_t> value = ParseInteger(entry.value.Scalar());
  if (!value) return TypeError(file, entry, "an integer");
  return *value;
}

StatusOr<double> GetNumber(const std::string& file, const MapEntry& entry) {
  if (!entry.value.IsScalar()) return TypeError(file, entry, "a number");
  const std::optional<double> value = ParseNumber(entry.value.Scalar());
  if (!value) return TypeError(file, entry, "a number");
  return *value;
}

StatusOr<bool> GetBool(const std::string& file, const MapEntry& entry) {
  if (entry.value.IsScalar()) {
    const std::string& text = entry.value.Scalar();
    if (text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "false" || text == "False" || text == "FALSE") return false;
  }
  return TypeError(file, entry, "true or false");
}

std::optional<int64_t> ParseInteger(const std::string& text) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  if (digits.empty() || digits.front() == '+') return std::nullopt;
  int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

std::optional<double> ParseNumber(const std::string& text) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  if (digits.empty() || digits.front() == '+') return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

std::string FormatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.15g", value);
  return text;
}

std::string ResolvePath(const std::string& base_dir, const std::string& path) {
  const std::filesystem::path given(path);
  if (given.is_absolute()) return given.lexically_normal().string();
  const std::filesystem::path base(base_dir.empty() ? "." : base_dir);
  return (base / given).lexically_normal().string();
}

std::string JoinKeys(const std::vector<std::string_view>& keys) {
  std::string out;
  for (std::string_view key : keys) {
    if (!out.empty()) out += ", ";
    out += key;
  }
  return out;
}

}  // namespace hwinfer::config_internal
