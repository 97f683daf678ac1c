#include "blr/io/state_space.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "blr/core/error.hpp"

namespace blr::io {
namespace {

Matrix matrix(const nlohmann::json& j, const std::string& key, const std::string& source) {
  const auto fault = [&](const std::string& what) {
    return Error(fmt::format("Model file '{}': '{}' {}.", source, key, what));
  };
  if (!j.is_array() || j.empty()) throw fault("must be a non-empty array of rows, as [[1, 0], [0, 1]]");
  const std::size_t cols = j[0].is_array() ? j[0].size() : 0;
  if (cols == 0) throw fault("must be a non-empty array of rows, as [[1, 0], [0, 1]]");
  Matrix m(static_cast<Index>(j.size()), static_cast<Index>(cols));
  for (std::size_t r = 0; r < j.size(); ++r) {
    if (!j[r].is_array() || j[r].size() != cols)
      throw fault(fmt::format("has rows of different lengths (row 1 has {} entries, row {} {})",
                              cols, r + 1, j[r].is_array() ? std::to_string(j[r].size()) : "none"));
    for (std::size_t c = 0; c < cols; ++c) {
      if (!j[r][c].is_number())
        throw fault(fmt::format("has an entry that is not a number at row {}, column {}", r + 1,
                                c + 1));
      m(static_cast<Index>(r), static_cast<Index>(c)) = j[r][c].get<double>();
    }
  }
  return m;
}

Vector vector(const nlohmann::json& j, const std::string& key, const std::string& source) {
  if (!j.is_array() || j.empty())
    throw Error(fmt::format("Model file '{}': '{}' must be a non-empty array of numbers.", source, key));
  Vector v(static_cast<Index>(j.size()));
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_number())
      throw Error(fmt::format("Model file '{}': '{}' has an entry that is not a number at "
                              "position {}.",
                              source, key, i + 1));
    v[static_cast<Index>(i)] = j[i].get<double>();
  }
  return v;
}

}  // namespace

StateSpaceFile parse_state_space(const std::string& text, const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // syntax, or a number beyond a double
    throw Error(fmt::format("Model file '{}' cannot be read as JSON ({}).", source, e.what()));
  }
  check(j.is_object(), fmt::format("Model file '{}' must hold a JSON object with the keys A, C, Q, "
                                   "R, init_mean and init_cov.",
                                   source));
  const std::set<std::string> known{"A", "C", "Q", "R", "init_mean", "init_cov", "states"};
  for (const auto& [key, value] : j.items()) {
    check(known.contains(key),
          fmt::format("Model file '{}' has an unknown key '{}'; the keys are A, C, Q, R, "
                      "init_mean, init_cov and (optional) states.",
                      source, key));
  }
  for (const char* key : {"A", "C", "Q", "R", "init_mean", "init_cov"})
    check(j.contains(key), fmt::format("Model file '{}' lacks the key '{}'.", source, key));
  StateSpaceFile f;
  auto& m = f.model;
  m.transition = matrix(j["A"], "A", source);
  m.observation = matrix(j["C"], "C", source);
  m.state_noise = matrix(j["Q"], "Q", source);
  m.obs_noise = matrix(j["R"], "R", source);
  m.init_mean = vector(j["init_mean"], "init_mean", source);
  m.init_cov = matrix(j["init_cov"], "init_cov", source);
  const Index n = m.transition.rows();
  if (j.contains("states")) {
    const auto& s = j["states"];
    check(s.is_array() && s.size() == static_cast<std::size_t>(n),
          fmt::format("Model file '{}': 'states' must be an array of {} names, one per state.",
                      source, n));
    for (const auto& name : s) {
      check(name.is_string() && !name.get<std::string>().empty(),
            fmt::format("Model file '{}': 'states' must hold non-empty names.", source));
      f.states.push_back(name.get<std::string>());
    }
  } else {
    for (Index i = 0; i < n; ++i) f.states.push_back(fmt::format("x{}", i + 1));
  }
  try {
    m.validate();
  } catch (const Error& e) {
    throw Error(fmt::format("Model file '{}': {}", source, e.what()));
  }
  return f;
}

StateSpaceFile read_state_space(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  check(static_cast<bool>(in), fmt::format("File '{}' cannot be opened for reading.", path));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_state_space(text.str(), path);
}

}  // namespace blr::io
