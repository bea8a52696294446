// Parse errors rewritten in colflow's words (option_errors.hpp).
#include "option_errors.hpp"

#include <regex>
#include <vector>

namespace colflow::cli {
namespace {

// The option named `name` (e.g. "--thin") of the command that was run, or of the top level.
const CLI::Option* find_option(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands()) {
    const CLI::Option* o = sub->get_option_no_throw(name);
    if (o != nullptr) return o;
  }
  return app.get_option_no_throw(name);
}

// "1 value", "2 values".
std::string values(std::size_t n) { return std::to_string(n) + (n == 1 ? " value" : " values"); }

// What an option takes: "takes 2 values", "takes at least 1 value", "takes at most 3 values".
std::string takes(const CLI::Option* o, std::size_t fallback_min, std::size_t fallback_max) {
  const auto min = o ? static_cast<std::size_t>(o->get_items_expected_min()) : fallback_min;
  const auto max = o ? static_cast<std::size_t>(o->get_items_expected_max()) : fallback_max;
  if (min == max) return "takes " + values(min);
  if (max >= static_cast<std::size_t>(CLI::detail::expected_max_vector_size))
    return "takes at least " + values(min);
  return "takes " + std::to_string(min) + " to " + values(max);
}

// "an integer" or "a number", from the option's type name (INT, UINT, FLOAT ...).
std::string kind_of(const CLI::Option* o) {
  if (o == nullptr) return "a value of its type";
  const std::string type = o->get_type_name();
  if (type.rfind("FLOAT", 0) == 0) return "a number";
  if (type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0) return "an integer";
  return "a value of type " + type;
}

std::string rewrite(const CLI::App& app, const std::string& what) {
  std::smatch m;
  static const std::regex at_least(R"(^(\S+): At least (\d+) required but received (\d+)$)");
  static const std::regex at_most(R"(^(\S+): At Most (\d+) required but received (\d+)$)");
  static const std::regex missing(R"(^(\S+): (\d+) required (\S+) missing$)");
  static const std::regex exactly(
      R"(^Expected (exactly|at least) (\d+) arguments to (\S+), got (\d+)$)");
  static const std::regex convert(R"(^Could not convert: (\S+) = (.*)$)");
  static const std::regex excludes(R"(^(\S+) excludes (\S+)$)");
  static const std::regex requires_(R"(^(\S+) requires (\S+)$)");
  if (std::regex_match(what, m, at_least) || std::regex_match(what, m, at_most)) {
    const auto n = std::stoul(m[2]);
    return m[1].str() + ": " + takes(find_option(app, m[1]), n, n) + ", got " + m[3].str();
  }
  if (std::regex_match(what, m, missing)) {
    const auto n = std::stoul(m[2]);
    return m[1].str() + ": " + takes(find_option(app, m[1]), n, n) + " (" + m[3].str() +
           "), got none";
  }
  if (std::regex_match(what, m, exactly)) {
    const auto n = std::stoul(m[2]);
    return m[3].str() + ": " + takes(find_option(app, m[3]), n, n) + ", got " + m[4].str();
  }
  if (std::regex_match(what, m, convert))
    return m[1].str() + ": must be " + kind_of(find_option(app, m[1])) + ", got " + m[2].str();
  if (std::regex_match(what, m, excludes))
    return m[1].str() + " and " + m[2].str() + " cannot be given together";
  if (std::regex_match(what, m, requires_)) return m[1].str() + " needs " + m[2].str() + " as well";
  return what;
}

}  // namespace

std::string option_error_message(const CLI::App& app, const CLI::Error& e) {
  return rewrite(app, e.what());
}

void use_option_error_messages(CLI::App& app) {
  // CLI11 formats the errors that App::exit reports with the failure message of the app it is
  // called on: the top level, whichever command failed.
  // One line, as every other error of colflow: the problem, then where the options are listed.
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    std::string help = "colflow";
    for (const CLI::App* sub : a->get_subcommands())
      if (sub->parsed()) help += " " + sub->get_name();
    return "colflow: error: " + option_error_message(*a, e) + " (" + help + " --help lists the " +
           "options)\n";
  });
}

}  // namespace colflow::cli
