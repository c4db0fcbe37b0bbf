#include "inferscope/sim/profile.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "inferscope/core/errors.h"

namespace inferscope::sim {
namespace fs = std::filesystem;
namespace {

int line_of(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

// Reads one mapping with a fixed set of keys; every error names the file, line and key.
class Fields {
 public:
  Fields(const YAML::Node& map, std::string where, std::string prefix)
      : map_(map), where_(std::move(where)), prefix_(std::move(prefix)) {}

  void check_known(const std::set<std::string>& known) const {
    for (const auto& kv : map_) {
      if (!kv.first.IsScalar()) throw InputError(where_, line_of(kv.first), prefix_, "keys must be plain names");
      const auto key = kv.first.as<std::string>();
      if (!known.contains(key))
        throw InputError(where_, line_of(kv.first), prefix_ + key, "unknown field");
    }
  }
  bool has(const std::string& key) const { return map_[key].IsDefined() && !map_[key].IsNull(); }
  YAML::Node node(const std::string& key) const { return map_[key]; }

  double number(const std::string& key, double lo, double hi, std::optional<double> dflt = {}) const {
    const YAML::Node n = map_[key];
    if (!n.IsDefined() || n.IsNull()) {
      if (dflt) return *dflt;
      throw InputError(where_, line_of(map_), prefix_ + key, "missing required field");
    }
    double v = 0;
    try {
      v = n.as<double>();
    } catch (const YAML::Exception&) {
      throw InputError(where_, line_of(n), prefix_ + key, "expected a number");
    }
    if (!std::isfinite(v) || v < lo || v > hi)
      throw InputError(where_, line_of(n), prefix_ + key,
                       fmt::format("{} is out of range [{}, {}]", v, lo, hi));
    return v;
  }
  int integer(const std::string& key, int lo, int hi, std::optional<int> dflt = {}) const {
    const double v = number(key, lo, hi, dflt ? std::optional<double>(*dflt) : std::nullopt);
    if (v != std::floor(v))
      throw InputError(where_, line_of(map_[key]), prefix_ + key, "expected an integer");
    return static_cast<int>(v);
  }
  std::string text(const std::string& key) const {
    const YAML::Node n = map_[key];
    if (!n.IsDefined() || n.IsNull())
      throw InputError(where_, line_of(map_), prefix_ + key, "missing required field");
    if (!n.IsScalar()) throw InputError(where_, line_of(n), prefix_ + key, "expected a string");
    return n.as<std::string>();
  }
  bool boolean(const std::string& key, bool dflt) const {
    const YAML::Node n = map_[key];
    if (!n.IsDefined() || n.IsNull()) return dflt;
    try {
      return n.as<bool>();
    } catch (const YAML::Exception&) {
      throw InputError(where_, line_of(n), prefix_ + key, "expected true or false");
    }
  }

 private:
  YAML::Node map_;
  std::string where_;
  std::string prefix_;
};

YAML::Node parse_root(const std::string& text, const std::string& where) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(where, e.mark.line + 1, "", "YAML syntax error: " + e.msg);
  }
  if (!root.IsMap()) throw InputError(where, 1, "", "expected a mapping of profile fields");
  return root;
}

Link parse_link(const Fields& parent, const std::string& key, const std::string& where) {
  const YAML::Node n = parent.node(key);
  if (!n.IsMap()) throw InputError(where, line_of(n), "interconnect." + key, "expected a mapping");
  Fields f(n, where, "interconnect." + key + ".");
  f.check_known({"bandwidth_gbps", "latency_us"});
  return Link{f.number("bandwidth_gbps", 0.1, 1e5), f.number("latency_us", 0, 1e5, 10.0)};
}

std::string read_file(const fs::path& p, const std::string& flag) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw InputError(flag, "cannot read profile file " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool looks_like_path(std::string_view s) {
  return s.find('/') != std::string_view::npos || s.ends_with(".yaml") || s.ends_with(".yml");
}

// Finds the file for `name` under <dir>/<kind>/: by file stem, then by `name:` field.
std::optional<fs::path> find_profile(std::string_view kind, std::string_view name,
                                     const std::vector<std::string>& extra_dirs) {
  const auto want = lower(name);
  const auto dirs = profile_search_dirs(extra_dirs);
  for (const auto& d : dirs) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(d) / kind, ec)) {
      const auto ext = e.path().extension().string();
      if ((ext == ".yaml" || ext == ".yml") && lower(e.path().stem().string()) == want) return e.path();
    }
  }
  for (const auto& d : dirs) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(d) / kind, ec)) {
      const auto ext = e.path().extension().string();
      if (ext != ".yaml" && ext != ".yml") continue;
      try {
        const auto root = YAML::LoadFile(e.path().string());
        if (root.IsMap() && root["name"].IsScalar() && lower(root["name"].as<std::string>()) == want)
          return e.path();
      } catch (const YAML::Exception&) {
        // A broken file that is not the one asked for must not stop the search.
      }
    }
  }
  return std::nullopt;
}

template <class P, class Parse>
P load_profile(std::string_view kind, std::string_view name_or_path,
               const std::vector<std::string>& extra_dirs, const std::string& flag, Parse parse) {
  fs::path path;
  if (looks_like_path(name_or_path)) {
    path = fs::path(name_or_path);
    if (!fs::exists(path)) throw InputError(flag, fmt::format("profile file '{}' not found", name_or_path));
  } else if (auto found = find_profile(kind, name_or_path, extra_dirs)) {
    path = *found;
  } else {
    const auto names = list_profiles(kind, extra_dirs);
    throw InputError(flag, fmt::format("no {} profile named '{}' (available: {})", kind == "gpus" ? "GPU" : "model",
                                       name_or_path, fmt::join(names, ", ")));
  }
  P p = parse(read_file(path, flag), path.string());
  p.source = path.string();
  return p;
}

}  // namespace

namespace {
GpuProfile parse_gpu(const std::string& yaml_text, const std::string& where) {
  const auto root = parse_root(yaml_text, where);
  Fields f(root, where, "");
  f.check_known({"name", "memory_gb", "memory_bandwidth_gbps", "bf16_tflops", "fp8_tflops", "int8_tops",
                 "interconnect"});
  GpuProfile g;
  g.name = f.text("name");
  g.memory_gb = f.number("memory_gb", 1, 1e5);
  g.memory_bandwidth_gbps = f.number("memory_bandwidth_gbps", 1, 1e6);
  g.bf16_tflops = f.number("bf16_tflops", 0.1, 1e6);
  g.fp8_tflops = f.number("fp8_tflops", 0, 1e6, 0.0);
  g.int8_tops = f.number("int8_tops", 0, 1e6, 0.0);
  const YAML::Node ic = f.node("interconnect");
  if (!ic.IsDefined() || !ic.IsMap())
    throw InputError(where, line_of(ic.IsDefined() ? ic : root), "interconnect",
                     "expected a mapping with 'pcie' and optionally 'nvlink'");
  Fields icf(ic, where, "interconnect.");
  icf.check_known({"nvlink", "pcie"});
  if (!icf.has("pcie")) throw InputError(where, line_of(ic), "interconnect.pcie", "missing required field");
  g.pcie = parse_link(icf, "pcie", where);
  if (icf.has("nvlink")) g.nvlink = parse_link(icf, "nvlink", where);
  return g;
}

ModelProfile parse_model(const std::string& yaml_text, const std::string& where) {
  const auto root = parse_root(yaml_text, where);
  Fields f(root, where, "");
  f.check_known({"name", "layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate_size", "vocab",
                 "parameters", "experts", "experts_per_token", "tied_embeddings", "max_model_len"});
  ModelProfile m;
  m.name = f.text("name");
  m.layers = f.integer("layers", 1, 100000);
  m.hidden = f.integer("hidden", 1, 1 << 20);
  m.heads = f.integer("heads", 1, 1 << 16);
  m.kv_heads = f.integer("kv_heads", 1, 1 << 16);
  m.head_dim = f.integer("head_dim", 1, 1 << 16);
  m.intermediate_size = f.integer("intermediate_size", 1, 1 << 22);
  m.vocab = f.integer("vocab", 1, 1 << 24);
  m.parameters = f.number("parameters", 1e6, 1e14);
  m.experts = f.integer("experts", 0, 1 << 16, 0);
  m.experts_per_token = f.integer("experts_per_token", 0, 1 << 16, 0);
  m.tied_embeddings = f.boolean("tied_embeddings", false);
  m.max_model_len = f.integer("max_model_len", 16, 1 << 24);
  if (m.kv_heads > m.heads)
    throw InputError(where, line_of(root["kv_heads"]), "kv_heads", "must not exceed heads");
  if (m.experts > 0 && (m.experts_per_token < 1 || m.experts_per_token > m.experts))
    throw InputError(where, line_of(root["experts_per_token"].IsDefined() ? root["experts_per_token"] : root),
                     "experts_per_token", "must be in [1, experts] for a mixture-of-experts model");
  if (m.experts == 0 && m.experts_per_token != 0)
    throw InputError(where, line_of(root["experts_per_token"]), "experts_per_token",
                     "set 'experts' as well (a dense model has neither)");
  const double embed = static_cast<double>(m.vocab) * m.hidden * (m.tied_embeddings ? 1 : 2);
  const double experts_params =
      m.experts > 0 ? 3.0 * m.hidden * m.intermediate_size * m.layers * m.experts : 0.0;
  if (embed + experts_params >= m.parameters)
    throw InputError(where, line_of(root["parameters"]), "parameters",
                     "smaller than the embeddings and experts implied by the other fields");
  return m;
}

// Anything yaml-cpp throws past the checks above still becomes an InputError.
template <class F>
auto yaml_guard(const std::string& where, F f) -> decltype(f()) {
  try {
    return f();
  } catch (const YAML::Exception& e) {
    throw InputError(where, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", e.msg);
  }
}
}  // namespace

GpuProfile parse_gpu_profile(const std::string& yaml_text, const std::string& where) {
  return yaml_guard(where, [&] { return parse_gpu(yaml_text, where); });
}

ModelProfile parse_model_profile(const std::string& yaml_text, const std::string& where) {
  return yaml_guard(where, [&] { return parse_model(yaml_text, where); });
}

std::vector<std::string> profile_search_dirs(const std::vector<std::string>& extra_dirs) {
  std::vector<std::string> dirs = extra_dirs;
  if (const char* env = std::getenv("INFERSCOPE_PROFILE_DIR"); env && *env) dirs.emplace_back(env);
  if (const char* home = std::getenv("HOME"); home && *home)
    dirs.push_back((fs::path(home) / ".config/inferscope/profiles").string());
  dirs.emplace_back(INFERSCOPE_BUILTIN_PROFILES_DIR);
  return dirs;
}

std::vector<std::string> list_profiles(std::string_view kind, const std::vector<std::string>& extra_dirs) {
  std::set<std::string> names;
  for (const auto& d : profile_search_dirs(extra_dirs)) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(d) / kind, ec)) {
      const auto ext = e.path().extension().string();
      if (ext == ".yaml" || ext == ".yml") names.insert(e.path().stem().string());
    }
  }
  return {names.begin(), names.end()};
}

GpuProfile load_gpu_profile(std::string_view name_or_path, const std::vector<std::string>& extra_dirs,
                            const std::string& flag) {
  return load_profile<GpuProfile>("gpus", name_or_path, extra_dirs, flag, parse_gpu_profile);
}

ModelProfile load_model_profile(std::string_view name_or_path, const std::vector<std::string>& extra_dirs,
                                const std::string& flag) {
  return load_profile<ModelProfile>("models", name_or_path, extra_dirs, flag, parse_model_profile);
}

}  // namespace inferscope::sim
