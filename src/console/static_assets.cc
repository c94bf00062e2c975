#include "console/static_assets.h"

namespace airlock::console {

std::optional<StaticAsset> FindAsset(std::string_view name) {
  for (const StaticAsset& a : EmbeddedAssets()) {
    if (a.name == name) return a;
  }
  return std::nullopt;
}

std::string_view ContentTypeOf(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"}, {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},             {".png", "image/png"},
      {".ico", "image/x-icon"},              {".json", "application/json"}};
  for (const auto& [ext, type] : kTypes) {
    if (name.size() > ext.size() && name.substr(name.size() - ext.size()) == ext) return type;
  }
  return "application/octet-stream";
}

}  // namespace airlock::console
