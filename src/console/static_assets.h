// The console's page, script modules and stylesheet (src/console/web/),
// compiled into the binary by cmake/embed_dir.cmake: the console fetches
// nothing from the network and reads nothing from disk at run time.
//
//   if (std::optional<StaticAsset> a = FindAsset("app.js"))
//     res.set_content(std::string(a->content), std::string(ContentTypeOf(a->name)));
#ifndef AIRLOCK_CONSOLE_STATIC_ASSETS_H_
#define AIRLOCK_CONSOLE_STATIC_ASSETS_H_

#include <optional>
#include <span>
#include <string_view>

namespace airlock::console {

struct StaticAsset {
  std::string_view name;     // file name: "index.html", "app.js"
  std::string_view content;
};

// Every embedded file, sorted by name (the generated console_assets.cc).
std::span<const StaticAsset> EmbeddedAssets();

// The file called exactly `name`, if embedded.
std::optional<StaticAsset> FindAsset(std::string_view name);

// "text/javascript; charset=utf-8" for .js, and so on; .html, .css, .svg,
// .png, .ico, .json; anything else "application/octet-stream".
std::string_view ContentTypeOf(std::string_view name);

}  // namespace airlock::console

#endif  // AIRLOCK_CONSOLE_STATIC_ASSETS_H_
