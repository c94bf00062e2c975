// What OAuth costs per request, against an API key measured in the same
// run, interleaved round by round (bench/README.md):
//
//   build/airlock_oauth_bench [--rounds N] [--issuer URL]
//   bench/oauth_bench.sh [--rounds N]   (starts the e2e tests' oidc-provider and passes --issuer)
//
// 1. In process, µs per call: the SHA-256 an API key lookup does (baseline),
//    ValidateJwt on an RS256 and an ES256 token with the key set parsed, and
//    the whole OAuthAuthenticator::Authenticate (warm JWKS cache, role rules).
// 2. Over HTTP, ms per `tools/list` on an open session of a real
//    HttpTransport on 127.0.0.1 (keep-alive client): API key (baseline),
//    JWT RS256, JWT ES256, an opaque token answered from the introspection
//    cache, and one introspected on every request (cache_s 0) at a local
//    introspection endpoint.
// 3. A JWKS refresh: HttpGet of the jwks_uri + JwkSet::Parse, and a cold
//    JwksCache (discovery + JWKS) — against --issuer's real provider, else
//    a local server publishing two RSA keys.
//
// Prints medians and p90 with ratios to the baseline. Not a test: it
// asserts nothing.
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "auth/oauth/discovery.h"
#include "auth/oauth/http_fetch.h"
#include "auth/oauth/introspection.h"
#include "auth/oauth/jwks_cache.h"
#include "auth/oauth/jwt_validator.h"
#include "auth/oauth/oauth_authenticator.h"
#include "base/encoding.h"
#include "mcp/http_transport.h"
#include "mcp/server.h"
#include "mcp_http_test_util.h"  // tests/unit: the in-process HTTP front
#include "mcp_test_util.h"       // tests/unit: FakeExecutor
#include "oauth_test_keys.h"     // tests/unit: signing keys made in process

namespace {

using nlohmann::json;
using airlock::StatusOr;
using airlock::auth::oauth::testing::TestKey;
namespace oauth = airlock::auth::oauth;
namespace config = airlock::config;
using Steady = std::chrono::steady_clock;

struct Series {
  Series(std::string n, std::function<void()> r, int k = 1) : name(std::move(n)), run(std::move(r)), reps(k) {}
  std::string name;
  std::function<void()> run;
  int reps = 1;  // calls per sample; a sample is their mean
  std::vector<double> samples;
  double Quantile(double q) const {
    std::vector<double> s = samples;
    std::sort(s.begin(), s.end());
    if (s.empty()) return -1;
    return s[std::min(s.size() - 1, static_cast<size_t>(q * (s.size() - 1) + 0.5))];
  }
};

// Runs every series once per round, interleaved; `scale` turns seconds into
// the printed unit. The first series is the baseline.
void Measure(const char* title, const char* unit, double scale, int rounds, std::vector<Series>& series) {
  for (Series& s : series) s.run();  // warm up
  for (int r = 0; r < rounds; ++r) {
    for (Series& s : series) {
      const auto t0 = Steady::now();
      for (int i = 0; i < s.reps; ++i) s.run();
      s.samples.push_back(std::chrono::duration<double>(Steady::now() - t0).count() * scale / s.reps);
    }
  }
  std::printf("\n### %s (%d rounds)\n\n| contender | p50 %s | p90 %s | p50 / %s |\n|---|---:|---:|---:|\n", title, rounds,
              unit, unit, series[0].name.c_str());
  const double base = series[0].Quantile(0.5);
  for (const Series& s : series) {
    std::printf("| %s | %.3f | %.3f | %.2f |\n", s.name.c_str(), s.Quantile(0.5), s.Quantile(0.9),
                s.Quantile(0.5) / base);
  }
}

void Check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "oauth_bench: %s\n", what.c_str());
    std::exit(1);
  }
}

const char kIssuer[] = "https://idp.example.com";
const char kResource[] = "http://127.0.0.1:8787/mcp";

json Claims(const std::string& sub) {
  const int64_t now = time(nullptr);
  return {{"iss", kIssuer}, {"sub", sub}, {"aud", kResource}, {"exp", now + 3600},
          {"iat", now}, {"scope", "mcp:use"}, {"client_id", "bench"}};
}

oauth::Fetcher JwksFetcher(const std::string& jwks) {
  return [jwks](const std::string&) -> StatusOr<std::string> { return jwks; };
}

config::OAuthConfig OAuthCfg() {
  config::OAuthConfig c;
  c.issuer = kIssuer;
  c.resource = kResource;
  c.jwks_uri = "https://idp.example.com/jwks";
  c.role_rules = {{.scope = "mcp:use", .claim = "", .value = "", .role = "reader"}};
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 200;
  std::string issuer;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--issuer") && i + 1 < argc) issuer = argv[++i];
  }
  std::printf("# OAuth bench: %u hardware threads, %d rounds\n", std::thread::hardware_concurrency(), rounds);

  const TestKey rsa = TestKey::Rsa("rsa-1");
  const TestKey ec = TestKey::Ec("ec-1");
  const std::string jwks = json{{"keys", {rsa.PublicJwk(), ec.PublicJwk()}}}.dump();
  StatusOr<oauth::JwkSet> set = oauth::JwkSet::Parse(jwks);
  Check(set.ok(), "jwks");
  const std::string rs256 = rsa.Sign(Claims("alice"), "RS256");
  const std::string es256 = ec.Sign(Claims("alice"), "ES256");
  const std::string api_key = "alk_0123456789abcdef0123456789abcdef";
  const oauth::TokenExpectations expect{.issuer = kIssuer, .resource = kResource};

  // 1. In process.
  {
    oauth::OAuthAuthenticator auth(OAuthCfg(), JwksFetcher(jwks));
    Check(auth.Authenticate(rs256, "/mcp").caller.has_value(), "authenticate rs256");
    std::vector<Series> s = {
        {"API key: SHA-256 of the key", [&] { (void)airlock::Sha256Hex(api_key); }, 200},
        {"ValidateJwt RS256", [&] { Check(oauth::ValidateJwt(rs256, *set, expect, time(nullptr)).ok(), "rs"); }, 20},
        {"ValidateJwt ES256", [&] { Check(oauth::ValidateJwt(es256, *set, expect, time(nullptr)).ok(), "es"); }, 20},
        {"Authenticate RS256 (warm JWKS)", [&] { Check(auth.Authenticate(rs256, "/mcp").caller.has_value(), "a"); }, 20},
    };
    Measure("Token check in process", "µs", 1e6, rounds, s);
  }

  // 2. Over HTTP. The introspection endpoint: a local server answering active.
  httplib::Server idp;
  idp.Post("/introspect", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(json{{"active", true}, {"iss", kIssuer}, {"aud", kResource}, {"exp", time(nullptr) + 3600},
                         {"scope", "mcp:use"}, {"client_id", "bench"}, {"token_type", "Bearer"}}
                        .dump(),
                    "application/json");
  });
  idp.Get("/jwks", [&](const httplib::Request&, httplib::Response& res) { res.set_content(jwks, "application/json"); });
  const int idp_port = idp.bind_to_any_port("127.0.0.1");
  std::thread idp_thread([&] { idp.listen_after_bind(); });
  while (!idp.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const std::string idp_base = "http://127.0.0.1:" + std::to_string(idp_port);
  {
    auto authenticator = [&](int64_t cache_s) {
      config::OAuthConfig c = OAuthCfg();
      c.introspection.client_id = "airlock";
      c.introspection.endpoint = idp_base + "/introspect";
      c.introspection.cache_s = cache_s;
      c.introspection.max_per_minute = 1'000'000;
      return std::make_unique<oauth::OAuthAuthenticator>(
          c, JwksFetcher(jwks), nullptr, oauth::SteadySeconds,
          std::make_unique<oauth::TokenIntrospector>(oauth::IntrospectionOptions(c, "secret"), JwksFetcher(jwks),
                                                     oauth::HttpIntrospectionPost,
                                                     [] { return static_cast<int64_t>(time(nullptr)); }));
    };
    auto cached = authenticator(300);
    auto uncached = authenticator(0);
    airlock::mcp::HttpOptions o;
    o.authenticate = [&](std::string_view token) -> std::optional<airlock::governance::Caller> {
      if (token == api_key) return airlock::governance::Caller{.user = "alice", .role = "reader", .auth = "api_key"};
      return std::nullopt;
    };
    // Two introspecting authenticators behind one front: "opq-nocache-*"
    // tokens go to the one without a cache.
    o.oauth = [&](std::string_view token, const std::string& path) {
      oauth::OAuthAuthenticator* a = token.rfind("opq-nocache-", 0) == 0 ? uncached.get() : cached.get();
      oauth::AuthDecision d = a->Authenticate(token, path);
      return airlock::mcp::AuthOutcome{.caller = d.caller, .status = d.status, .challenge = d.challenge,
                                       .message = d.message};
    };
    o.oauth_metadata = "{}";
    airlock::mcp::testing::FakeExecutor executor;
    airlock::mcp::McpServer server(config::DefaultConfig(), executor);
    std::unique_ptr<airlock::mcp::HttpTransport> http;
    std::unique_ptr<httplib::Client> client;
    Check(airlock::mcp::testing::StartTestHttpFront(server, o, &http, &client).ok(), "http front");
    client->set_keep_alive(true);
    client->set_tcp_nodelay(true);  // else Nagle meets delayed ACK: ~40 ms a request
    auto session = [&](const std::string& token) {
      httplib::Headers h = {{"Accept", "application/json, text/event-stream"}, {"Authorization", "Bearer " + token}};
      auto res = client->Post("/mcp", h, airlock::mcp::testing::InitializeRequest(1).dump(), "application/json");
      Check(res && res->status == 200, "initialize with a credential");
      h.emplace("Mcp-Session-Id", res->get_header_value("Mcp-Session-Id"));
      h.emplace("MCP-Protocol-Version", "2025-11-25");
      return h;
    };
    auto tools_list = [&](const httplib::Headers& h) {
      return [&client, h] {
        auto res = client->Post("/mcp", h, json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}}.dump(),
                                "application/json");
        Check(res && res->status == 200, "tools/list");
      };
    };
    std::vector<Series> s = {
        {"API key", tools_list(session(api_key))},
        {"JWT RS256", tools_list(session(rs256))},
        {"JWT ES256", tools_list(session(es256))},
        {"opaque, introspection cached", tools_list(session("opq-cached-0123456789"))},
        {"opaque, introspected each request", tools_list(session("opq-nocache-0123456789"))},
    };
    Measure("tools/list over HTTP on an open session", "ms", 1e3, rounds, s);
    std::printf("\nintrospection requests: %d (cached authenticator), %d (uncached)\n",
                cached->introspector()->requests(), uncached->introspector()->requests());
    http->Stop();
  }

  // 3. A JWKS refresh.
  {
    const std::string target = issuer.empty() ? idp_base : issuer;
    std::string jwks_uri = idp_base + "/jwks";
    if (!issuer.empty()) {
      StatusOr<std::string> u = oauth::DiscoverEndpoint(issuer, oauth::HttpGet, "jwks_uri");
      Check(u.ok(), "discovery at " + issuer + ": " + (u.ok() ? "" : u.status().message()));
      jwks_uri = *u;
    }
    size_t keys = 0;
    std::vector<Series> s = {
        {"HttpGet(jwks_uri) + JwkSet::Parse",
         [&] {
           StatusOr<std::string> body = oauth::HttpGet(jwks_uri);
           Check(body.ok(), "jwks fetch");
           StatusOr<oauth::JwkSet> parsed = oauth::JwkSet::Parse(*body);
           Check(parsed.ok(), "jwks parse");
           keys = parsed->size();
         }},
        {"cold JwksCache: discovery + JWKS",
         [&] {
           oauth::JwksCache cache({.issuer = issuer.empty() ? std::string(kIssuer) : issuer,
                                   .jwks_uri = issuer.empty() ? jwks_uri : "",
                                   .min_refresh_s = 30},
                                  oauth::HttpGet);
           Check(cache.Get("").ok(), "jwks cache");
         }},
    };
    Measure(("JWKS refresh against " + std::string(issuer.empty() ? "a local server (2 RSA keys)" : target)).c_str(),
            "ms", 1e3, std::max(1, rounds / 4), s);
    std::printf("\nkeys in the set: %zu%s\n", keys,
                issuer.empty() ? "; without --issuer the cold cache is given jwks_uri (no discovery)" : "");
  }
  idp.stop();
  idp_thread.join();
  return 0;
}
