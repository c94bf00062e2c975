#include "cli/stdio_config.h"

#include <filesystem>
#include <system_error>

namespace airlock::cli {
namespace {

std::string Absolute(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

}  // namespace

nlohmann::json StdioClientConfig(const StdioConfigInputs& in) {
  nlohmann::json args = nlohmann::json::array({"serve"});
  const auto flag = [&args](const char* name, const std::string& value) {
    args.push_back(name);
    args.push_back(value);
  };
  if (!in.config_path.empty()) flag("--config", Absolute(in.config_path));
  if (!in.state_dir.empty()) flag("--state-dir", Absolute(in.state_dir));
  if (!in.endpoint.empty()) flag("--endpoint", in.endpoint);
  if (in.allow_degraded) args.push_back("--allow-degraded");
  return {{"mcpServers", {{"airlock", {{"command", Absolute(in.executable)}, {"args", args}}}}}};
}

}  // namespace airlock::cli
